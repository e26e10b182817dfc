#pragma once

#include <string>
#include <vector>

#include "compiler/resolve/mount_names.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// A name the mount table `after` gives an existing deny root or protected path of the
// bound policy `r` (or a part of it, mount_aliases) that `r` leaves reachable: for a deny
// root, a name under a readable or writable root that no deny root masks; for a protected
// path, a name under a writable root that no protected path or deny root covers.
struct UnmaskedName {
  std::string name;      // where `after` shows it
  std::string original;  // what it is in `r`
  bool deny = false;     // a deny root's (else a protected path's)
  friend bool operator==(const UnmaskedName&, const UnmaskedName&) = default;
};

// Resolution masks every other name the host's mounts gave a deny root or protected path
// when it ran (`before`); a bind the host makes between then and the guard's private
// mount namespace is copied into it unmasked (red team A11-4). The names `after` gives
// that `r` lacks, none when the tables are the same. Whether a name still shows its
// original (no later mount covers it) is the caller's to check, as resolution does.
std::vector<UnmaskedName> names_the_masks_lack(const ir::Resolved& r,
                                               const std::vector<MountEntry>& before,
                                               const std::vector<MountEntry>& after);

}  // namespace zpolicy::compiler
