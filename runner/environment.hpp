#pragma once

#include <string>
#include <vector>

#include "compiler/resolve/caller_environment.hpp"
#include "ir/policy.hpp"

namespace zpolicy::runner {

// The command's environment: nothing of the caller's but the names the policy keeps
// (a trailing '*' keeps a prefix), then the policy's `set` values. Sorted by name.
std::vector<std::string> build_environment(const ir::EnvPolicy& policy,
                                           const compiler::CallerEnvironment& caller);

// `env` (sorted by name) with NAME=VALUE, replacing NAME's earlier value; still sorted.
void set_variable(std::vector<std::string>& env, const std::string& name, const std::string& value);

}  // namespace zpolicy::runner
