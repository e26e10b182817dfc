#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve/resolve.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// One policy lint. IDs are stable (documented in docs/lints.md) so that CI can
// suppress or gate on them.
struct Lint {
  std::string id;  // "ZP001"
  ir::Severity severity = ir::Severity::Warning;
  ir::SourceLoc loc;
  std::string message;
  std::string str() const;  // "file:line:col: warning: message [ZP001]"
};

struct LintContext {
  std::optional<HostFacts> host;            // bound checks need the host
  std::optional<std::string> policy_file;   // canonical path of the policy itself
  std::optional<std::string> zpolicy_binary;
};

// Reviewer-level findings about a policy that is valid but probably not what its author
// meant. Sorted by location, then ID.
std::vector<Lint> lint_policy(const ir::Policy& policy, const LintContext& ctx);

}  // namespace zpolicy::compiler
