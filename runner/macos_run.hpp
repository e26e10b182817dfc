#pragma once

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

// The macOS spawn path: sandbox-exec started and supervised like bwrap on Linux. Plain
// POSIX, so it builds and is tested on every host with a stand-in for sandbox-exec.
namespace zpolicy::runner {

// A compiled, bound policy and the command to run under it.
struct SandboxExecRun {
  std::string profile;
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<std::string> command;  // command[0] absolute, found with the sandbox's PATH
  std::vector<std::string> env;      // the command's whole environment
  std::string cwd;
  std::optional<std::chrono::milliseconds> timeout;
};

// A preflight that takes longer is a failure of sandbox-exec, not a slow command.
inline constexpr std::chrono::milliseconds kPreflightTimeout{10000};

// Runs the preflight (the same profile, parameters, environment and directory around
// kPreflightCommand, stdin and stdout on /dev/null) and reads only its status as
// sandbox-exec's verdict: any failure is a typed refusal, exit 4, and the command never
// starts. Then runs the command under the same profile and returns its status by the
// conventions of DESIGN.md: its own, 124 on timeout (its process group killed), 128+N
// when killed by signal N. `sandbox_exec` is the binary to start: `run` passes the pinned
// kSandboxExec; only tests pass anything else.
int run_sandbox_exec(const std::string& sandbox_exec, const SandboxExecRun& run, std::ostream& err);

}  // namespace zpolicy::runner
