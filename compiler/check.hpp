#pragma once

#include <string>
#include <vector>

#include "compiler/lint/policy_lint.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// One result of `check`, whichever stage produced it: a policy lint ("ZP003"), a syscall
// lint ("ZP100") or a verification finding ("verify-linux", "verify-macos").
struct CheckItem {
  std::string rule_id;
  ir::Severity severity = ir::Severity::Error;
  ir::SourceLoc loc;
  std::string message;
  std::vector<std::string> detail;  // the evaluator's trace of a finding
};

// Lints the policy, then compiles and verifies every target in every confined mode its
// ceiling admits: portable, and bound to `ctx.host` for Linux when a host is given.
std::vector<CheckItem> check_policy(const ir::Policy& policy, const LintContext& ctx);

bool has_errors(const std::vector<CheckItem>& items);

}  // namespace zpolicy::compiler
