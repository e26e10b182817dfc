#pragma once

#include <string>

#include "ir/mode.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// The built-in default policy as policy-language text: what `zpolicy show-default`
// prints for users to start from.
std::string default_policy_text(ir::Mode mode = ir::Mode::WorkspaceWrite);

// The IR of that text, what `zpolicy run` uses without --policy. It is built directly
// rather than parsed (the parser is a third of a run's work), and a unit test proves it
// equal to parsing default_policy_text(mode), locations included, so the default can
// still never hold anything a user policy could not.
ir::Policy default_policy(ir::Mode mode = ir::Mode::WorkspaceWrite);

inline constexpr const char* kDefaultPolicyFile = "<default-policy>";

}  // namespace zpolicy::compiler
