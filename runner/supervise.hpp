#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zpolicy::runner {

// One child to start and watch: the bwrap monitor, or the command itself under
// danger-full-access.
struct SpawnSpec {
  std::string exe;  // absolute; executed as is, never looked up in PATH
  std::vector<std::string> argv;
  std::vector<std::string> envp;
  std::vector<std::pair<int, int>> fds;  // (fd in this process, fd number in the child)
  std::optional<std::chrono::milliseconds> timeout;
  int status_fd = -1;  // read end of bwrap's --json-status-fd pipe, or -1
};

struct Outcome {
  enum class Kind { Exited, Signaled, TimedOut, SpawnFailed };
  Kind kind = Kind::SpawnFailed;
  int code = 0;                 // exit code, or signal number
  bool setup_finished = false;  // bwrap reported that the command was exec'd
};

// Runs the child in its own process group with PR_SET_PDEATHSIG, forwards SIGINT,
// SIGTERM and SIGHUP to every process of the sandbox (a second one kills them all),
// and on timeout kills the whole tree: the sandbox's pid namespace dies with its init.
Outcome supervise(const SpawnSpec& spec);

}  // namespace zpolicy::runner
