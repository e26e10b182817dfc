#pragma once

#include <string>
#include <vector>

#include "ir/policy.hpp"

namespace zpolicy::runner {

// The command's environment: nothing of the caller's but the names the policy keeps
// (a trailing '*' keeps a prefix), then the policy's `set` values. Sorted by name.
std::vector<std::string> build_environment(const ir::EnvPolicy& policy,
                                           const std::vector<std::string>& caller_env);

// The caller's environment as NAME=VALUE strings.
std::vector<std::string> current_environment();

}  // namespace zpolicy::runner
