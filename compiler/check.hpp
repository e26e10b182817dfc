#pragma once

#include <vector>

#include "compiler/lint/policy_lint.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// Lints the policy, then compiles and verifies every target in every confined mode its
// ceiling admits: portable, and bound to `ctx.host` for Linux when a host is given. Each
// result has its rule as code: a policy lint ("ZP003"), a syscall lint ("ZP100") or a
// verification finding ("verify-linux", "verify-macos", its message naming the mode).
std::vector<ir::Diagnostic> check_policy(const ir::Policy& policy, const LintContext& ctx);

bool has_errors(const std::vector<ir::Diagnostic>& items);

}  // namespace zpolicy::compiler
