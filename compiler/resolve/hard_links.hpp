#pragma once

#include "ir/diagnostic.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// A protected regular file can share its inode with a name inside a writable root that
// existed before the run (`git clone` of a local path hard-links objects; `cp -al`; a
// user's `ln`). A read-only bind of the protected name does not protect the inode: the
// other name stays writable. This adds every such other name to `r.protect`, so it is
// bound read-only (and, as a mount point, cannot be renamed or unlinked either).
//
// Cost: one walk of the writable roots, skipping protected and denied subtrees, with an
// lstat of each entry; the protected subtrees are walked only when that finds a regular
// file with more than one link. More than kMaxHardLinkAliases such names refuse the run
// (a located error) rather than bind thousands of mounts.
//
// Not covered: links the host makes during the run, and names outside every writable
// root (they are read-only inside the sandbox anyway).
void protect_hard_link_aliases(ir::Resolved& r, ir::Diagnostics& diags);

inline constexpr size_t kMaxHardLinkAliases = 256;

}  // namespace zpolicy::compiler
