#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace zpolicy::test {

// A variable of this process's environment set (none: unset) for one scope, and put back as
// it was. What takes a made-up compiler::CallerEnvironment is tested with the process's
// environment set to something else: a test that passes only when the code reads its
// argument, not the process.
struct ScopedEnv {
  ScopedEnv(std::string name, const char* value) : name(std::move(name)) {
    if (const char* v = std::getenv(this->name.c_str())) old = v;
    if (value)
      setenv(this->name.c_str(), value, 1);
    else
      unsetenv(this->name.c_str());
  }
  ~ScopedEnv() {
    if (old)
      setenv(name.c_str(), old->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

  std::string name;
  std::optional<std::string> old;
};

}  // namespace zpolicy::test
