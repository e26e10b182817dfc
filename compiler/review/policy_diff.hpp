#pragma once

#include <optional>
#include <vector>

#include "compiler/review/difference.hpp"
#include "ir/diagnostic.hpp"
#include "ir/mode.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler::review {

// A policy in the mode a review compares it in (its ceiling, or a narrower mode).
struct ModedPolicy {
  const ir::Policy& policy;
  ir::Mode mode;
};

// The semantic difference of two policies (docs/review.md), both resolved portably, so
// that it is the same on every machine: the filesystem, the mode, the network, the
// environment, the timeout and `unavailable` for both targets, the syscall filter for
// Linux (Seatbelt has none). In a fixed order: by area, then by path or name. Empty when
// the two mean the same, however differently they are written. None, with located errors
// in `diags`, when either policy cannot be resolved (resolve_portable refuses it, as
// compile does).
std::optional<std::vector<Difference>> diff_policies(const ModedPolicy& before,
                                                     const ModedPolicy& after,
                                                     ir::Diagnostics& diags);

// Everything `policy` allows that `ceiling` does not, in each mode `policy`'s ceiling
// admits (a run may narrow it with --mode), against `ceiling` in its own mode. None, with
// located errors in `diags`, when either cannot be resolved.
struct Escape {
  ir::Mode mode;  // the mode of `policy`
  Difference difference;
};
std::optional<std::vector<Escape>> escapes(const ir::Policy& policy, const ir::Policy& ceiling,
                                           ir::Diagnostics& diags);

}  // namespace zpolicy::compiler::review
