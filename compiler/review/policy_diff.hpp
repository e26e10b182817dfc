#pragma once

#include <vector>

#include "compiler/review/difference.hpp"
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
// the two mean the same, however differently they are written.
std::vector<Difference> diff_policies(const ModedPolicy& before, const ModedPolicy& after);

// Everything `policy` allows that `ceiling` does not, in each mode `policy`'s ceiling
// admits (a run may narrow it with --mode), against `ceiling` in its own mode.
struct Escape {
  ir::Mode mode;  // the mode of `policy`
  Difference difference;
};
std::vector<Escape> escapes(const ir::Policy& policy, const ir::Policy& ceiling);

}  // namespace zpolicy::compiler::review
