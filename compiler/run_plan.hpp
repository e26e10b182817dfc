#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/analyzer/finding.hpp"
#include "compiler/backend_paths.hpp"
#include "compiler/lint/policy_lint.hpp"
#include "compiler/resolve/resolve.hpp"
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

// Bytes the backend finds on descriptor `child_fd` when it starts.
struct FdPayload {
  int child_fd;
  std::string bytes;
  std::string artifact;  // the verified artifact the bytes are: "seccomp.bpf"
};

// A bind of the verified argv by descriptor (bwrap.fds): before bwrap starts, the runner
// opens `path` without following any symlink, checks that it is the object resolution
// saw, and installs it as descriptor `fd`.
struct BindSource {
  int fd;
  std::string path;
};

struct RunPlan {
  Backend backend = Backend::Bwrap;
  std::string exe;                // absolute; executed as is
  // argv[0] included. Bwrap: the lines of the verified bwrap.args, --json-status-fd,
  // "--", the command. SandboxExec: built by the runner from the profile and params.
  std::vector<std::string> argv;
  std::vector<std::string> command;  // command[0] absolute (found with the sandbox's PATH)
  std::vector<std::string> env;      // the command's whole environment
  std::string cwd;                   // where the backend starts; empty: the caller's
  std::vector<FdPayload> fds;        // Bwrap: the verified seccomp.bpf on fd 3
  std::vector<BindSource> bind_sources;  // Bwrap: the lines of the verified bwrap.fds
  int status_fd = -1;                // Bwrap: kStatusFd
  // SandboxExec: the verified profile.sb and the pairs of the verified params.txt.
  std::string sbpl_profile;
  std::vector<std::pair<std::string, std::string>> sbpl_params;
  // The resolved policy the artifacts were verified against, with the placeholders run
  // must create assumed (resolve_for_target). Empty for Unconfined.
  std::optional<ir::Resolved> verified;
  std::optional<std::chrono::milliseconds> timeout;
  // Bwrap with network Allow: bwrap waits on `block_fd` (--block-fd) until the runner has
  // put the proxy's listener on `proxy_port` of the sandbox's loopback, and the forwards.
  int block_fd = -1;
  uint16_t proxy_port = 0;
  std::vector<Lint> accepted;  // error-level lints the caller accepted (--accept)
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

// The confined plan for this host's target: lint (the policy judged in the mode the run
// gets), then resolve_for_target, emit, verify. Any error-level lint not accepted or
// syscall rule, and any verifier finding, is a Refusal (exit 3) that names each one at
// its policy file:line:col; lints that refuse are reported without resolving further. A
// resolution error is a Refusal with exit 2, as in `compile`.
std::variant<RunPlan, Refusal> plan_confined(const RunInput& in, ir::Target target);

// The command as is, without a sandbox (danger-full-access; run-unconfined).
RunPlan plan_unconfined(const RunInput& in);

}  // namespace zpolicy::compiler
