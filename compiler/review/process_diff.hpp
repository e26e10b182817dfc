#pragma once

#include <vector>

#include "compiler/review/difference.hpp"
#include "ir/policy.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler::review {

// A policy as a review reads it: what it resolved to in the mode compared, and the
// policy itself for the lines of settings the resolved form keeps no line for.
struct Reviewed {
  const ir::Policy& policy;
  const ir::Resolved& resolved;
};

// The mode, the environment (keep list and set values), the timeout and
// `unavailable`: each a single setting or a list, compared by meaning (a `keep` entry
// covered by a wider one on the other side, `LC_ALL` under `LC_*`, is no difference).
std::vector<Difference> diff_process(const Reviewed& before, const Reviewed& after);

}  // namespace zpolicy::compiler::review
