#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"

// Trees of the namespace that a profile's rules decide alone, wherever the symbolic roots
// lie in them (docs/verify.md, "Trees the rules decide"). Below a concrete place, a path
// filter on a concrete path is true everywhere or nowhere but for the few paths it names
// there; a rule that such a filter makes false everywhere can never match there, whatever
// the roots' filters say. When every rule that can still match an operation there has the
// same action, every path of the tree gets that answer under every precedence model.
namespace zpolicy::compiler {

// For each concrete operation of `operations`, the answer every path at or below the
// concrete place `top` (not "/") gets from `bound` (a profile with its parameters bound),
// under every precedence model and subpath reading, whichever symbolic roots are bound at
// or below `top`: false (denied) when every rule that covers it and can match there
// denies, true when every such rule allows and one matches at every path there. nullopt
// when the rules do not decide it alone (or the default allows). Reads the filters three
// times, whatever the number of operations.
std::vector<std::optional<bool>> tree_answers(const SbplProfile& bound, std::string_view top,
                                              const std::vector<std::string_view>& operations);

}  // namespace zpolicy::compiler
