#pragma once

#include <string_view>
#include <vector>

#include "ir/diagnostic.hpp"

namespace zpolicy::compiler {

// What each rule id of `check` means, for readers of its output (SARIF's rule metadata,
// docs/lints.md). The ids are stable: CI configurations gate on them.
struct LintRule {
  std::string_view id;           // "ZP003"
  std::string_view name;         // "WritableHomeOrStartupFile": SARIF's rule name
  ir::Severity level;            // the level `check` reports it at
  std::string_view summary;      // one line
  std::string_view description;  // why it matters, in a sentence or two
};

// Every rule, sorted by id: ZP000 (the policy does not load), the policy lints, ZP100
// (syscall rules), and the verifiers (verify-linux, verify-macos).
const std::vector<LintRule>& lint_catalog();

// The rule with this id, or nullptr.
const LintRule* find_lint_rule(std::string_view id);

inline constexpr std::string_view kInvalidPolicyRule = "ZP000";

}  // namespace zpolicy::compiler
