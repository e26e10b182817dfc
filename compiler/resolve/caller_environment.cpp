#include "compiler/resolve/caller_environment.hpp"

#include <utility>

extern char** environ;

namespace zpolicy::compiler {

CallerEnvironment::CallerEnvironment(std::vector<std::string> entries)
    : entries_(std::move(entries)) {
  for (const auto& entry : entries_) {
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) values_.try_emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
}

CallerEnvironment CallerEnvironment::of_this_process() {
  std::vector<std::string> entries;
  for (char** e = environ; e && *e; ++e) entries.emplace_back(*e);
  return CallerEnvironment(std::move(entries));
}

std::optional<std::string> CallerEnvironment::get(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::nullopt : std::optional<std::string>(it->second);
}

}  // namespace zpolicy::compiler
