#pragma once

#include <vector>

#include "compiler/review/difference.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler::review {

// The filesystem difference of two resolved policies: every path either policy's
// verifier probes (each root, protected and deny path with its parent, children and
// prefix sibling, the directories between a writable root and a protected path, a path
// outside every root, /tmp), asked of both intents for read, write, create and delete.
// A path differs where one intent allows what the other does not; both kinds of denial
// (no access to the host object, refused outright) count as denied. A descendant that
// differs exactly as its ancestor does is folded into it (" and below").
std::vector<Difference> diff_paths(const ir::Resolved& before, const ir::Resolved& after);

}  // namespace zpolicy::compiler::review
