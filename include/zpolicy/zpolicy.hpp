#pragma once

// libzpolicy's C++ API: value types only, no third-party headers. Everything the
// command line does goes through these calls (DESIGN.md "Pipeline": one way through).
// The C API for other languages is zpolicy.h.

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "zpolicy/exit_code.hpp"
#include "zpolicy/version.hpp"

#if defined(_WIN32)
#define ZPOLICY_API
#else
#define ZPOLICY_API __attribute__((visibility("default")))
#endif

namespace zpolicy {

namespace detail {
struct VerifiedRun;  // what plan() verified, for run(plan); internal to the library
}

enum class Severity { Note, Warning, Error };

// The one result type of every stage: a parse error (code ""), a policy lint ("ZP003"),
// a verification finding ("verify-linux", "verify-macos": a dropped deny, with the
// evaluator's trace).
struct ZPOLICY_API Diagnostic {
  std::string code;
  Severity severity = Severity::Error;
  std::string file;  // the policy file (or "<builtin>", "<command line>")
  int line = 0;      // 1-based; 0 when the diagnostic has no position
  int column = 0;
  std::string message;
  std::vector<std::string> trace;

  // "file:line:col: error: message [code]", then one indented line per trace step. A
  // newline or control byte in the file name or message is escaped (\n, \t, \xNN), so
  // that text from a policy cannot forge a second diagnostic.
  std::string str() const;
};

enum class Target { Linux, Macos };

// "linux", "macos".
ZPOLICY_API const char* to_string(Target target);
ZPOLICY_API std::optional<Target> parse_target(const std::string& name);
// The artifact files of a target, in the order `compile` produces them.
ZPOLICY_API std::vector<std::string> artifact_names(Target target);

// One compiled file: "bwrap.args", "seccomp.bpf", "seccomp.txt" (linux); "profile.sb",
// "params.txt" (macos). DESIGN.md "Command line" describes each.
struct Artifact {
  std::string name;
  std::string content;
  bool binary = false;
};

// What to compile: the policy (a file, YAML text, or the built-in default when both are
// empty), the mode (which may only narrow the policy's ceiling) and the host binding.
struct Request {
  std::optional<std::string> policy_file;
  std::optional<std::string> policy_text;
  std::string policy_name = "<policy>";  // the file name diagnostics give for policy_text
  std::optional<std::string> mode;       // "read-only", "workspace-write"
  std::optional<std::string> workspace;  // bind ${WORKSPACE} etc. to this directory
};

struct Result {
  int exit_code = kExitOk;  // DESIGN.md "Command line": 0, 2 invalid input, 3 dropped deny
  std::vector<Diagnostic> diagnostics;
  std::vector<Artifact> artifacts;  // compile only, and only when exit_code == 0
  bool ok() const { return exit_code == kExitOk; }
};

// The built-in default policy, as YAML.
ZPOLICY_API std::string default_policy_text();

// Text a command prints (`show-default`), or the reasons why not (exit code 2).
struct TextResult {
  int exit_code = kExitOk;
  std::vector<Diagnostic> diagnostics;
  std::string text;
};

// The built-in default policy narrowed to `mode` ("read-only", "workspace-write"; the
// default's own when empty); a wider mode is an error.
ZPOLICY_API TextResult default_policy_text(const std::optional<std::string>& mode);

// Loads the policy, binds it to the workspace and checks the mode against its ceiling,
// without compiling: exit code 0, or 2 with the located reasons.
ZPOLICY_API Result validate(const Request& request);

// Compiles and verifies: artifacts only if the independent analyzer finds every deny kept.
ZPOLICY_API Result compile(const Request& request, Target target);

// Verifies artifacts compiled elsewhere (checked in, edited by hand) against the policy.
ZPOLICY_API Result verify(const Request& request, Target target,
                          const std::vector<Artifact>& artifacts);

// Lints the policy and verifies every target in every confined mode its ceiling admits.
// Error-level diagnostics give exit code 3.
ZPOLICY_API Result check(const Request& request);

// A rule `check` can report (docs/lints.md): "ZP003", its name, a one-line summary, the
// full description and the level it is reported at.
struct LintRule {
  std::string id;
  std::string name;
  std::string summary;
  std::string description;
  Severity level = Severity::Error;
};
ZPOLICY_API std::vector<LintRule> lint_rules();

// Review (docs/review.md): what one policy allows that another does not.

// A line of a policy: empty `file` when no line of the policy speaks of it (a `keep`
// entry one side lacks).
struct ZPOLICY_API PolicyLine {
  std::string file;
  int line = 0;
  int column = 0;
  // "file:line:col", "file" without a position, "" when empty.
  std::string str() const;
};

// One policy's answer for a difference's subject: "allowed", "denied", "errno(1)",
// "loopback", "120s", "kept"; the rule in words; the line that decides it.
struct DiffSide {
  std::string verdict;
  std::string reason;
  PolicyLine line;
};

// One semantic difference. `widening`: the newer policy (or the checked policy) allows
// what the older one (or the ceiling) does not.
struct Difference {
  std::vector<Target> targets;  // where it holds
  std::string area;  // "mode", "filesystem", "network", "syscalls", "environment", "timeout", "unavailable"
  // "${WORKSPACE}/.git and 2 paths probed below it", "socket(AF_INET)", "keep AWS_*"
  std::string subject;
  std::string path_class;  // filesystem: "protected path ${WORKSPACE}/.git", "child of ..."
  std::vector<std::string> operations;  // filesystem: "read", "write", "create", "delete"
  std::vector<std::string> paths;       // filesystem: every probed path that changes so
  bool widening = false;
  DiffSide before, after;
  std::string mode;  // check_within: the mode of the policy it escapes in; "" for diff
};

struct ZPOLICY_API DiffResult {
  // diff: 0 no semantic difference, 1 a difference, 2 bad input.
  // check_within: 0 within the ceiling, 2 bad input, 3 an access escapes it.
  int exit_code = kExitOk;
  std::vector<Diagnostic> diagnostics;
  std::vector<Difference> differences;
  bool within = false;          // a check_within result (escapes) rather than a diff
  std::string before, after;    // the names compared: OLD and NEW, or CEILING and POLICY
  size_t widenings() const;
};

// The semantic difference of two policies, each in its mode (`Request::mode` narrows
// it), resolved portably: the same answer on every machine.
ZPOLICY_API DiffResult diff(const Request& before, const Request& after);

// `diff --artifacts`: two artifact sets of one target (compiled elsewhere, checked in,
// edited by hand), each read back by the analyzer's own evaluators and compared by what
// they do, not by their text (docs/review.md): Linux the mount table bwrap.args builds,
// its namespace and lockdown switches and the seccomp.bpf program; macOS profile.sb with
// params.txt. Lines name the artifact line on each side. Exit codes as diff's.
ZPOLICY_API DiffResult diff_artifacts(Target target, const std::vector<Artifact>& before,
                                      const std::vector<Artifact>& after);

// Whether everything `policy` allows `ceiling` allows too, in every mode `policy`'s
// ceiling admits; each escape is a widening with both policies' lines.
ZPOLICY_API DiffResult check_within(const Request& policy, const Request& ceiling);

enum class DiffFormat { Text, Json, Markdown };
ZPOLICY_API std::optional<DiffFormat> parse_diff_format(const std::string& name);
// The result for a terminal, as one JSON document, or as a Markdown table for a pull
// request. Deterministic: the differences in the order the result holds them.
ZPOLICY_API std::string render_diff(const DiffResult& result, DiffFormat format);

// One target's answer to "may PATH be accessed this way?" (or to one system call, one
// destination): what the policy says, with its rule and line, and what the compiled
// artifact does, with its line.
struct ExplainAnswer {
  Target target = Target::Linux;
  // What the verifier holds the artifact to: "denied", "allowed", "no access to the host
  // object", "either answer passes verification"; empty when the artifact cannot be
  // evaluated at all.
  std::string policy;
  std::string rule;   // the policy's rule in words: "under protected path ${WORKSPACE}/.git"
  PolicyLine line;    // the policy line of that rule; "<builtin>" for the defaults
  // What the compiled artifact does ("read-only", "denied", "errno(1)"), or why it cannot
  // be evaluated.
  std::string artifact;
  // The artifact's deciding line ("bwrap.args:54: --ro-bind ...", "denied by rule 17
  // (profile.sb line 130) ..."), then the rest of the evaluator's trace.
  std::vector<std::string> trace;
  // macOS: whether every precedence model of Seatbelt (docs/verify.md) gives `artifact`;
  // when not, `models` holds one line per distinct answer, naming the models.
  bool models_agree = true;
  std::vector<std::string> models;
};

struct Explanation {
  // 2: bad path, operation, target or policy; 3: a run bound there would be refused by a
  // lint on the workspace itself (ZP003, ZP013), so nothing bound is answered.
  int exit_code = kExitOk;
  std::vector<Diagnostic> diagnostics;
  std::string query;               // "write ${WORKSPACE}/.git/config"
  std::vector<std::string> notes;  // caveats of the question (unexpanded patterns, symlinks)
  std::vector<ExplainAnswer> answers;
};

// Which rule decides `operation` ("read", "write", "create", "delete") on `path`, for
// `target` ("linux" or "macos"; both when empty, this host's only for a bound request).
// A request with a workspace is bound, as `run` binds it: `path` may then be relative
// (to the current directory), start with `~/` or ${WORKSPACE}, ${HOME}, ${TMPDIR}, and is
// answered for the object the kernel would reach (symlinks followed). Without one the
// answer is for the portable artifacts: a relative path is taken as ${WORKSPACE}/path,
// `~/x` as ${HOME}/x.
ZPOLICY_API Explanation explain(const Request& request, const std::string& path,
                                const std::string& operation = "write",
                                const std::optional<std::string>& target = std::nullopt);

// What the policy's network says about one destination "HOST:PORT" (`explain --connect`):
// the allow-list entry that admits it or the refusal, and how each target reaches it
// (docs/network.md). Names are not resolved.
ZPOLICY_API Explanation explain_connect(const Request& request, const std::string& destination);

enum class ExplainFormat { Text, Json };
// Explanations for a terminal, or as one JSON document {"explanations": [...]}. The text
// names Seatbelt's precedence models only with `verbose`, and only where they disagree.
ZPOLICY_API std::string render_explanations(const std::vector<Explanation>& explanations,
                                            ExplainFormat format, bool verbose = false);

// `inspect`: a compiled artifact read back by the analyzer's own readers. A seccomp
// program (`name` ends in ".bpf", or the bytes hold a NUL) gives its disassembly, any other
// artifact its text as it is; a program that does not parse gives exit code 2 and the
// reason at `name`.
ZPOLICY_API TextResult inspect(const std::string& name, const std::string& bytes);

// One system call, as a seccomp program answers it.
struct SyscallCall {
  std::string syscall;            // a name of `arch`'s table, or a number (decimal or 0x hex)
  std::string arch = "x86_64";    // "x86_64", "x32" or "i386"
  // At most six numbers (decimal or 0x hex); missing ones are 0. explain_syscall also
  // takes constant names.
  std::vector<std::string> args;
};

// `inspect --syscall`: "NAME (ARCH #NR): ACTION (ret 0x..., N instructions)", evaluated by
// the analyzer's BPF interpreter. Exit code 2 for a malformed call (at "<command line>") or
// a program that does not parse (at `name`).
ZPOLICY_API TextResult evaluate_syscall(const std::string& name, const std::string& program,
                                        const SyscallCall& call);

// What the policy's syscall filter does with one call (`explain --syscall`): the rule
// that decides, with its line, and the compiled seccomp program's answer, evaluated by
// the analyzer's interpreter. `call.args` may name constants (AF_UNIX, SOCK_STREAM,
// TIOCSTI, CLONE_NEWUSER|CLONE_NEWNET, S_ISUID) as well as numbers. macOS answers that
// Seatbelt has no syscall filter.
ZPOLICY_API Explanation explain_syscall(const Request& request, const SyscallCall& call,
                                        const std::optional<std::string>& target = std::nullopt);

// The host's sandbox backend, as `doctor` reports it (docs/run.md "doctor").
struct HostCheck {
  std::string id;
  std::string status;  // "ok", "info", "warning", "failed"
  std::string value;
  std::string reason;  // typed reason of a failed check
  std::string fix;     // the exact fix, where there is one
};
struct DoctorReport {
  std::string backend;  // which backend this build uses, and where
  bool usable = false;  // a confined run would start
  std::string reason;   // the typed reason when not usable
  std::string status;   // one line: the probe's verdict
  std::vector<HostCheck> checks;
};
ZPOLICY_API DoctorReport doctor();

// Why this process holds privileges its caller lacks, "" when it does not: started
// set-user-id or set-group-id, or with file capabilities (the kernel's AT_SECURE). zpolicy
// acts on its caller's word (files it reads and writes, the sandbox it starts, an
// unconfined command) and judges ownership by the real user, so such a start is not
// supported: the CLI does nothing, and run() and plan() refuse (red team A13B-1).
ZPOLICY_API std::string privileged_start();

// `zpolicy run`: compile the policy for this host through the same pipeline as
// `compile --workspace` plus the bound lints, refuse on any error-level finding, then
// execute exactly the verified artifacts and supervise the command (docs/run.md).
struct RunRequest {
  std::optional<std::string> policy_file;  // the built-in default when absent
  std::optional<std::string> mode;         // may only narrow the policy's ceiling
  std::optional<std::string> workspace;    // default: the current directory
  // "500ms", "120s", "10m", "2h" or a number of seconds, at most 7 days; it may only
  // shorten the policy's timeout.
  std::optional<std::string> timeout;
  // NAME=VALUE sets NAME for this run; NAME alone keeps the caller's NAME as well.
  std::vector<std::string> env;
  std::vector<std::string> accept;         // error-level lints accepted for this run
  std::vector<std::string> command;        // command[0] is found with the sandbox's PATH
  // run_with_status() writes the run's status document (run_status_json) here at the end,
  // as `run --status-file` does: opened before the command starts, and refused (exit 2,
  // nothing ran) when the sandbox could reach it (docs/run.md "Run status").
  std::optional<std::string> status_file;
};

// Runs the command and returns DESIGN.md's exit status: the command's own, or zpolicy's
// (2 usage, 3 refused, 4 no backend, 124 timeout, 125 internal, 126/127, 128+N). Every
// message for the user (refusals, status) goes to `messages`.
ZPOLICY_API int run(const RunRequest& request, std::ostream& messages);

// A destination the network proxy refused during a run (docs/network.md "Refusals are
// reported"): what tells "the policy refused pypi.org:443" from "pypi.org is down".
struct NetworkRefusal {
  std::string host;
  unsigned port = 0;
  std::string reason;  // "not-listed", "port-not-listed", "not-resolved", "address-refused"
  std::string detail;  // one line for a person
};
// The machine-readable status of a run (`zpolicy run --status-file`, docs/run.md "Run
// status"; run_status_json in zpolicy/json.hpp).
struct RunStatus {
  int exit_code = kExitOk;                       // what `run` returns
  std::vector<NetworkRefusal> network_refusals;  // sorted, each once, the first 256 kept
  // Refused connections to further destinations, counted, not listed: the command chooses
  // how many it asks for (docs/run.md "Run status").
  unsigned long long network_refusals_omitted = 0;
  // True only when zpolicy knows the command was never executed (a refusal, or a sandbox
  // that failed before the exec, as its status stream tells): then, and only then, may a
  // harness start the same command again without running it twice. The exit code cannot
  // tell: a command may exit with 125, 126 or 127 itself.
  bool nothing_ran = true;
};
// `run`, returning its status with what the run observed besides the exit code.
ZPOLICY_API RunStatus run_with_status(const RunRequest& request, std::ostream& messages);

// `cleanup`: the placeholders runs left behind (killed, or ended while another run was
// live), removed as the next run would remove them (docs/run.md "Cleanup").
struct CleanedPlaceholder {
  std::string action;  // "removed"; "gone" (already); "kept" (for good); "left" (for now)
  std::string path;
  std::string reason;  // why it was kept or left
};
struct CleanupReport {
  // 0 done; 1 nothing was touched because a run (of any user) is live on this host, and
  // `placeholders` lists what is left; 2 DIR cannot be resolved; 125 the state directory
  // is not private to the caller.
  int exit_code = kExitOk;
  std::vector<Diagnostic> diagnostics;
  std::vector<CleanedPlaceholder> placeholders;
};
// Only placeholders within `dir` (symlinks in `dir` itself are resolved first), or all of
// the caller's. Never removes a directory that is not empty or not the one a run made, and
// follows no symlink on the way to one.
ZPOLICY_API CleanupReport cleanup(const std::optional<std::string>& dir = std::nullopt);

// Everything `run` would do for a request, decided exactly as `run` decides it and
// executed by nothing: what an embedder needs to start the sandbox itself
// (docs/embedding.md "The run plan").
struct PlanFd {
  int fd = -1;           // the descriptor number the backend expects it on
  // What it holds: "seccomp.bpf" (the verified artifact), or "environment" (the
  // command's environment as bwrap's --args reads it: NUL-separated --clearenv, then
  // --setenv NAME VALUE per variable of `env`).
  std::string artifact;
  std::string content;   // its exact bytes
  // "start": the backend reads it as soon as it starts, so fill it before (a sealed
  // memfd); "release": only after the release, so fill it then (a pipe whose write end
  // only the executor holds, docs/embedding.md).
  std::string when;
  bool operator==(const PlanFd&) const = default;
};
// A bind source of bwrap's argv (`--bind-fd FD DEST`): open `path` O_PATH without
// following any symlink (component by component, O_NOFOLLOW), check it is the object
// resolution saw (`dev`, `ino`; absent for a placeholder, which must be the directory the
// executor made or found; /dev/null must be the null device), and pass it on `fd`.
struct PlanBind {
  int fd = -1;
  std::string path;
  std::optional<unsigned long long> dev, ino;
  bool operator==(const PlanBind&) const = default;
};
// What must be found in the sandbox before the command may start (docs/run.md
// "Checking the sandbox before the command starts"): bwrap sets up, then waits on
// `block_fd`; the executor walks `path` below /proc/PID/root (PID: the child-pid of the
// status stream) without following any symlink, checks it, and only then writes one
// byte to `block_fd`. `kind` is "bind" (a mount root showing the object of bind
// descriptor `fd`), "tmpfs", "dev" (a tmpfs), "proc" (mount roots of that type),
// "directory", or "symlink" (to `link_target`). `read_only`: the mount must be.
struct SetupCheck {
  std::string path;
  std::string kind;
  std::optional<int> fd;
  bool read_only = false;
  std::string link_target;
  bool operator==(const SetupCheck&) const = default;
};
// A name on the host whose change during the run undoes a protection (docs/run.md
// "Protected names replaced on the host"): from before the backend starts until the
// sandbox is gone, watch `directory` (inotify, without following a symlink) for `name`.
// `on` is "replaced": a removal, a rename away or a rename over it (IN_DELETE,
// IN_MOVED_FROM, IN_MOVED_TO); or "created": its creation or a rename onto it (IN_CREATE,
// IN_MOVED_TO), and it must not exist once the watch is in place (a deny root that did not
// exist when the plan was made, which nothing masks). On any such event, or when the
// kernel drops events (IN_Q_OVERFLOW), kill the sandbox (run exits 125). `protects` is
// the path the name is on the way to, for the message.
struct PlanWatch {
  std::string directory;
  std::string name;
  std::string protects;
  std::string on;
  bool operator==(const PlanWatch&) const = default;
};
// bwrap: the sandbox's limits on inotify and fanotify, which are otherwise its caller's
// (red team R8-L2, R9c-L3; docs/run.md "inotify: the sandbox's share"). Before the release,
// from a process that joins the user namespace owning the sandbox init's network namespace
// (/proc/PID/ns/net, ioctl NS_GET_USERNS, setns), write each to /proc/sys/user/max_NAME
// (max_inotify_instances, max_inotify_watches, max_fanotify_groups, max_fanotify_marks);
// if one fails, kill the sandbox (run exits 125).
struct PlanNotifyShare {
  long long inotify_instances = 0;
  long long inotify_watches = 0;
  long long fanotify_groups = 0;
  long long fanotify_marks = 0;
  bool operator==(const PlanNotifyShare&) const = default;
};
struct Placeholder {
  std::string path;  // a directory that must exist while the sandbox runs
  std::string root;  // the writable root it lies in: create from here, following no link
  bool operator==(const Placeholder&) const = default;
};
// Under `network: {allow: ...}` (docs/network.md): the proxy the executor must serve
// outside the sandbox, reached from inside through listening sockets it places on the
// sandbox's own loopback once bwrap has made the sandbox's network namespace and before
// the release. An executor that does not serve it must refuse the plan.
struct PlanNetworkProxy {
  int port = 0;  // 127.0.0.1:port inside: HTTP CONNECT and absolute-form HTTP proxy
  // What the proxy admits, one destination each, in the allow-list grammar
  // ("pypi.org:443", "*.pythonhosted.org:80", "ip:192.0.2.10:443", "localhost:5432").
  std::vector<std::string> allow;
  // 127.0.0.1:port inside forwarded as plain TCP to the host's 127.0.0.1:port (the
  // `localhost:PORT` entries).
  std::vector<int> forwards;
  bool operator==(const PlanNetworkProxy&) const = default;
};
struct Plan {
  std::string backend;             // "bwrap", "sandbox-exec" or "unconfined"
  std::string exe;                 // absolute; executed as is, never searched for
  std::vector<std::string> argv;   // argv[0] included; ends with the command
  std::vector<std::string> env;    // NAME=VALUE: the command's whole environment
  // The environment to start `exe` with, exactly. bwrap: none (the command's reaches the
  // command through the "environment" descriptor; the loader of bwrap, which runs on the
  // host, must never see it: red team R7-E1); the others: `env`.
  std::vector<std::string> exe_env;
  std::string cwd;                 // where to start the backend
  std::vector<PlanFd> fds;         // open on these numbers when the backend starts
  std::optional<int> status_fd;    // bwrap --json-status-fd: a pipe's write end
  std::optional<int> block_fd;     // bwrap --block-fd: a pipe's read end (setup_checks)
  std::vector<SetupCheck> setup_checks;  // bwrap: all must hold before the release
  std::vector<Placeholder> placeholders;  // shallowest first
  std::vector<PlanBind> binds;     // bwrap: bind sources by descriptor (docs/run.md)
  std::vector<PlanWatch> watches;  // bwrap: host names to watch while the sandbox runs
  // bwrap: every deny root that did not exist when the plan was made and that nothing masks
  // (outside the writable roots); `watches` holds the names on their ways, but a watch
  // names one deny root only, and one below a file has no "created" watch. Once the watch
  // is in place each must resolve to nothing and its way must be the watched one, and the
  // setup check must find none in the sandbox (docs/embedding.md "missing_deny_roots").
  std::vector<std::string> missing_deny_roots;
  std::optional<PlanNotifyShare> notify_share;  // bwrap
  // bwrap: start bwrap from a mount namespace of the executor's own whose mounts are
  // private (red team A17B-4; docs/embedding.md "private_mounts"): bwrap makes the
  // sandbox's mounts slaves of the namespace it starts in, so from the host's a filesystem
  // the host mounts during the run would appear in the sandbox with the host's flags.
  // As root: unshare(CLONE_NEWNS); otherwise unshare(CLONE_NEWUSER | CLONE_NEWNS) and map
  // the caller's uid and gid to themselves (setgroups "deny" first); then
  // mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL). If a step fails, start nothing.
  bool private_mounts = false;
  // Then SIGTERM to every process of the sandbox (the process group without one), and
  // SIGKILL to all that is left `timeout_grace_ms` later (docs/run.md "Status").
  std::optional<long long> timeout_ms;
  std::optional<long long> timeout_grace_ms;  // with timeout_ms
  std::string sbpl_profile;        // sandbox-exec: the profile for -p
  std::vector<std::pair<std::string, std::string>> sbpl_params;  // sandbox-exec: -D N=V
  std::vector<std::string> accepted;  // error-level lints accepted for this run (--accept)
  std::optional<PlanNetworkProxy> network_proxy;  // bwrap under an allow list
  // Set by plan() only: the verified plan these fields describe, which run(plan) executes.
  std::shared_ptr<const detail::VerifiedRun> verified;
  bool operator==(const Plan&) const = default;
};
struct PlanResult {
  int exit_code = kExitOk;  // as run would exit before starting anything: 2, 3, 4, 126, 127
  std::string messages;     // what run would print (refusals, an unconfined notice)
  std::optional<Plan> plan;
};
ZPOLICY_API PlanResult plan(const RunRequest& request);

// Executes a plan made by plan(), in this process, with run's supervision
// (docs/embedding.md "Running a plan in process"): the placeholders, the bind descriptors
// and the setup check, the status stream, forwarded signals, the timeout with its grace,
// and DESIGN.md's exit status, which it returns (the command's own, 124, 128+N, or
// zpolicy's 4, 125, 126 when the sandbox does not start); every message for the user goes
// to `messages`. It executes only what was verified: a plan that plan() did not make, or
// whose fields were changed since, is refused with exit 2 and nothing starts. `run(request)`
// decides and executes the same way (runner::execute). While it runs, SIGINT, SIGTERM, SIGHUP and SIGCHLD are handled by
// the supervisor (the caller's handlers and mask are restored after); runs in one process
// take turns (a second call waits for the first). A caller that is not root must be
// dumpable: one that dropped root without an exec is refused with exit 125 (red team
// A10-4, docs/embedding.md).
ZPOLICY_API int run(const Plan& plan, std::ostream& messages);

}  // namespace zpolicy
