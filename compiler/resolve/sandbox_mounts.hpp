#pragma once

#include <string>
#include <vector>

#include "compiler/resolve/mount_names.hpp"

namespace zpolicy::compiler {

// What the sandbox's own mount table may hold at or below a writable root once bwrap has
// made every mount (red team A14-1). bwrap binds each writable root recursively, with
// whatever mounts lie below it when it binds, which is after the run's looks at the guard's
// table: a host mount renamed into a writable root in between is copied into the sandbox.
// The sandbox's table, read while its init waits on the block descriptor, is the last word.
struct SandboxMountRules {
  // The writable roots and pins, as the sandbox names them (a bind of each onto itself:
  // the host's names).
  std::vector<std::string> roots;
  // Every destination of the verified argv: a mount there is bwrap's (the setup check
  // looked at the one that shows), or one it covers.
  std::vector<std::string> destinations;
  // The --dev and --proc destinations: bwrap mounts below them itself (/dev/pts, /dev/null,
  // the read-only covers of /proc/sys, ...), into a filesystem of its own.
  std::vector<std::string> bwrap_trees;
};

// The mounts of `sandbox` (the sandbox's table, its names) at or below one of the rules'
// roots that are at none of its destinations nor strictly below a bwrap tree, and that
// `judged` (the table the lints judged) does not list at the same point as the same mount
// (same_mount), read-only there if it is read-only in `judged`: each was not verified.
std::vector<MountEntry> unverified_mounts(const SandboxMountRules& rules,
                                          const std::vector<MountEntry>& judged,
                                          const std::vector<MountEntry>& sandbox);

}  // namespace zpolicy::compiler
