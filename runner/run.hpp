#pragma once

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/mode.hpp"

namespace zpolicy::runner {

struct RunRequest {
  std::optional<std::string> policy_path;  // the built-in default when absent
  std::optional<ir::Mode> mode;            // may only narrow the policy's ceiling
  std::optional<std::string> workspace;    // default: the current directory
  std::optional<std::chrono::milliseconds> timeout;  // overrides the policy's
  std::vector<std::string> command;
};

// Compiles the policy for this host and runs the command under it. Returns the
// command's status, or one of zpolicy's own exit codes (DESIGN.md "Command line");
// every failure before the command starts refuses to run it.
int run(const RunRequest& request, std::ostream& err);

}  // namespace zpolicy::runner
