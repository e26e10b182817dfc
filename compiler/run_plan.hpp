#pragma once

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/analyzer/bwrap/expected_setup.hpp"
#include "compiler/backend_paths.hpp"
#include "compiler/lint/policy_lint.hpp"
#include "compiler/resolve/mount_objects.hpp"
#include "compiler/resolve/resolve.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"
#include "ir/resolved.hpp"
#include "ir/target.hpp"

// What `zpolicy run` executes, decided before anything starts: the same pipeline as
// `compile --workspace` (resolve -> emit -> verify) plus the bound lints, and nothing the
// verifier did not see. The runner (runner/) only creates the placeholders, hands over
// the descriptors and supervises; it never emits anything itself.
namespace zpolicy::compiler {

// bwrap reports on this descriptor (--json-status-fd) whether it exec'd the command.
inline constexpr int kStatusFd = 4;

enum class Backend {
  Bwrap,        // Linux: kBwrapPath with the verified bwrap.args and seccomp.bpf
  SandboxExec,  // macOS: kSandboxExecPath with the verified profile.sb and params.txt
  Unconfined,   // danger-full-access, or `unavailable: run-unconfined` from a trusted file
};
const char* to_string(Backend b);

// When the backend reads a payload, and so when the runner may fill it.
enum class Handover {
  AtStart,    // as soon as it starts (bwrap's --args): filled before the backend starts
  AtRelease,  // only after the release (bwrap's --seccomp): filled at the release
};

// What bwrap's --args descriptor holds: the command's environment, as bwrap arguments.
inline constexpr const char* kEnvironmentArtifact = "environment";

// Bytes the backend finds on descriptor `child_fd`.
struct FdPayload {
  int child_fd;
  std::string bytes;
  std::string artifact;  // what the bytes are: "seccomp.bpf" (verified), "environment"
  Handover when = Handover::AtRelease;
};

// A bind of the verified argv by descriptor (bwrap.fds): before bwrap starts, the runner
// opens `path` without following any symlink, checks that it is the object resolution
// saw, and installs it as descriptor `fd`.
struct BindSource {
  int fd;
  std::string path;
  bool writable = false;  // the verified argv binds it with --bind-fd, not --ro-bind-fd
};

// The object resolution saw at `path` (a bind source of a plan made from `resolved`), or
// nullopt when it recorded none.
std::optional<ir::HostIdentity> recorded_identity(const ir::Resolved& resolved,
                                                  const std::string& path);

// The bound lints of a confined plan as plan_confined judged them: the policy in the run's
// mode, the host and the lint IDs the caller accepted.
struct BoundLints {
  ir::Policy judged;
  LintContext context;
  std::vector<std::string> accept;
};

struct RunPlan {
  Backend backend = Backend::Bwrap;
  std::string exe;                // absolute; executed as is
  // argv[0] included. Bwrap: the lines of the verified bwrap.args, --json-status-fd,
  // --block-fd, --args, "--", the command. SandboxExec: built by the runner from the
  // profile and params.
  std::vector<std::string> argv;
  std::vector<std::string> command;  // command[0] absolute (found with the sandbox's PATH)
  std::vector<std::string> env;      // the command's whole environment
  // The environment `exe` itself starts with. Bwrap: none. bwrap runs on the host before
  // the sandbox exists, and the dynamic loader would act on the command's LD_PRELOAD,
  // LD_AUDIT, LD_LIBRARY_PATH, GLIBC_TUNABLES, ... there (red team R7-E1); the command
  // gets `env` through the `environment` payload (--args), which bwrap applies with
  // --clearenv and --setenv after its loader is done.
  std::vector<std::string> exe_env;
  std::string cwd;                   // where the backend starts; empty: the caller's
  // Bwrap: the verified seccomp.bpf on fd 3 (AtRelease), the environment on
  // `environment_fd` (AtStart).
  std::vector<FdPayload> fds;
  std::vector<BindSource> bind_sources;  // Bwrap: the lines of the verified bwrap.fds
  int status_fd = -1;                // Bwrap: kStatusFd
  // SandboxExec: the verified profile.sb and the pairs of the verified params.txt.
  std::string sbpl_profile;
  std::vector<std::pair<std::string, std::string>> sbpl_params;
  // The resolved policy the artifacts were verified against, with the placeholders run
  // must create assumed (resolve_for_target). Empty for Unconfined.
  std::optional<ir::Resolved> verified;
  std::optional<std::chrono::milliseconds> timeout;
  // Bwrap: bwrap waits on `block_fd` (--block-fd), with the sandbox set up and the
  // command not started, until the runner has found `expected_setup` in the sandbox's
  // mount namespace and, under network Allow, put the proxy's listener on `proxy_port`
  // of the sandbox's loopback, and the forwards.
  int block_fd = -1;
  std::vector<ExpectedObject> expected_setup;
  // Bwrap: the destination of every mount the verified argv makes, those a later mount
  // hides included (a pin under a protected directory's read-only bind): the sandbox's
  // mount table lists them all, and each is one the verifier proved.
  std::vector<std::string> mount_destinations;
  uint16_t proxy_port = 0;
  std::vector<ir::Diagnostic> accepted;  // error-level lints the caller accepted (--accept)
  // Confined: what the bound lints judged (lints_refuse_on).
  std::optional<BoundLints> lints;
  // Confined, resolved through the host's mount table (runner::prepare): what each mount
  // point at or below a writable root showed once the lints had judged it by its name
  // (runner/mount_objects_seen.hpp); the sandbox must get the same objects. None for a
  // plan made without that table.
  std::optional<std::vector<MountObject>> mounts_judged;
  // Bwrap, FilterProof::BeforeRelease: the proof of the seccomp program in fds, running;
  // the runner releases the sandbox only when await_filter_proof() says it holds.
  std::shared_future<std::vector<ir::Diagnostic>> filter_proof;
};

// Why a run is refused before anything starts: the exit code of DESIGN.md (2 invalid
// policy or binding, 3 a verifier finding or an error-level lint) and the report to print.
struct Refusal {
  int exit_code;
  std::string report;
};

struct RunInput {
  ir::Policy policy;
  ir::Mode mode;                  // effective_mode() of the policy and --mode
  std::optional<HostFacts> host;  // required for a confined plan
  LintContext lint;               // host, policy file, binaries of the next run
  std::vector<std::string> accept;  // lint IDs accepted for this run (--accept)
  std::vector<std::string> command;  // command[0] absolute
  std::vector<std::string> env;
  std::optional<std::chrono::milliseconds> timeout;
};

// Checks --accept IDs: nullopt when each is an acceptable lint (acceptance_of), else the
// reason, for a usage error (exit 2).
std::optional<std::string> check_accepted(const std::vector<std::string>& ids);

// When a bwrap plan's seccomp program is proved. bwrap acts on the mount plan as soon as
// it starts, but reads the program from its descriptor only after the runner releases it
// (--block-fd), and loads it only just before it execs the command. `plan` hands out only
// what is proved in full (BeforePlan); `run` proves the program on a second thread while
// bwrap sets up the sandbox, and releases it only when the proof holds (BeforeRelease;
// docs/run.md "When the seccomp program is proved").
enum class FilterProof { BeforePlan, BeforeRelease };

// The confined plan for this host's target: lint (the policy judged in the mode the run
// gets), then resolve_for_target, emit, verify. Any error-level lint not accepted or
// syscall rule, and any verifier finding, is a Refusal (exit 3) that names each one at
// its policy file:line:col; lints that refuse are reported without resolving further. A
// resolution error is a Refusal with exit 2, as in `compile`.
std::variant<RunPlan, Refusal> plan_confined(const RunInput& in, ir::Target target,
                                             FilterProof when = FilterProof::BeforePlan);

// Starts proving the seccomp program of a bwrap plan (plan.fds, against plan.verified) on
// its own thread: plan_confined does so for FilterProof::BeforeRelease.
void start_filter_proof(RunPlan& plan);

// Waits for a plan's pending filter proof: nullopt when it holds (or none is pending),
// else the Refusal plan_confined would have returned for the same findings (exit 3), or
// exit 125 when the proof itself failed.
std::optional<Refusal> await_filter_proof(const RunPlan& plan);

// The bound lints judge the writable mounts below each writable root (ZP003, ZP004,
// ZP013, ZP017) in the mount table resolution read; a bind the host makes after that and
// before the sandbox's namespace is copied is in the sandbox, and so is a mount point it
// moves there with a rename (red team A13-2: `mount --bind ~ ws/h` let the sandbox write
// ~/.bashrc). The Refusal plan_confined would give for the plan's lints judged on
// `mounts` (the table bwrap copied), or nullopt when none refuses (or the plan has none).
std::optional<Refusal> lints_refuse_on(const RunPlan& plan,
                                       const std::vector<MountEntry>& mounts);

// The command as is, without a sandbox (danger-full-access; run-unconfined).
RunPlan plan_unconfined(const RunInput& in);

}  // namespace zpolicy::compiler
