#pragma once

#include <string>
#include <variant>
#include <vector>

#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "ir/resolved.hpp"

// Where one symbolic root of a portable profile can lie inside another (`${WORKSPACE}`
// inside `${HOME}`), reduced to one place per class of places that the profile and the
// policy cannot tell apart (docs/verify.md, "Nested symbolic roots"). verify_sbpl proves
// the profile with the root bound to each representative.
namespace zpolicy::compiler {

struct NestedBinding {
  std::string root;   // bound to `place`
  std::string outer;  // the other symbolic root, which holds `place`
  std::string place;  // `outer` itself or a path below it
  size_t stands_for = 1;  // the places of its class
};

// The most classes of places per pair of roots, and in all: each is a proof of the bound
// root's tree, which is what bounds the time of a hostile profile (docs/verify.md,
// "Bounds"). zpolicy's profiles have up to 28 per pair (golden/large: 72 in all).
inline constexpr size_t kMaxNestedClasses = 64;
inline constexpr size_t kMaxNestedProofs = 128;

struct NestedPlacesError {
  std::string what;  // "${WORKSPACE} inside ${HOME}", or "in all"
  size_t classes = 0;
};

// For each ordered pair of distinct `roots` (symbolic roots, `${NAME}`), the places of
// `root` inside `outer` that one proof each covers: `outer`, each path below it that
// `bound` (the profile with its parameters bound to their symbolic values) or `policy`
// names, a child of each that nothing names, and the directories between; grouped by
// what decides the answers in the bound root's tree (the path filters and policy entries
// at, above and below the place, each below one by its path relative to the place with
// the names `root`'s own paths do not use abstracted to their length), one place each,
// in byte order.
std::variant<std::vector<NestedBinding>, NestedPlacesError> nested_bindings(
    const ir::Resolved& policy, const SbplProfile& bound, const std::vector<std::string>& roots);

}  // namespace zpolicy::compiler
