#pragma once

#include <string>

#include "ir/mode.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// The built-in default policy as policy-language text: what `zpolicy run` uses without
// --policy and what `zpolicy show-default` prints for users to start from. Keeping it as
// text (parsed by the same frontend) means the default can never hold anything a user
// policy could not.
std::string default_policy_text(ir::Mode mode = ir::Mode::WorkspaceWrite);

ir::Policy default_policy(ir::Mode mode = ir::Mode::WorkspaceWrite);

inline constexpr const char* kDefaultPolicyFile = "<default-policy>";

}  // namespace zpolicy::compiler
