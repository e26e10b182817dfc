#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zpolicy::compiler {

// The caller's environment, read from the process once (of_this_process) and handed to
// everything that judges it, so that resolution and the run's lints are functions of the
// host facts and the filesystem, and tests give made-up environments without setenv.
class CallerEnvironment {
 public:
  CallerEnvironment() = default;
  // `entries` as the process has them, NAME=VALUE; one without '=' names nothing.
  explicit CallerEnvironment(std::vector<std::string> entries);

  // This process's environment, as it is now.
  static CallerEnvironment of_this_process();

  // NAME's value, as getenv(3) gives it: the first entry of that name.
  std::optional<std::string> get(const std::string& name) const;

  // Every entry in the process's order, duplicates included: the command's environment is
  // built from these (runner/environment.hpp).
  const std::vector<std::string>& entries() const { return entries_; }

 private:
  std::vector<std::string> entries_;
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace zpolicy::compiler
