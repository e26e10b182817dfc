#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "compiler/resolve/link_free_stat.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// Where canonicalization had to stop: the path crosses a symlink inside a writable root
// (the sandbox could re-point it), has '..' below a component that does not exist, or
// crosses more symlinks than the kernel follows in one lookup (which would fail with
// ELOOP; past that count the walk judges no link, so it names nothing it could vouch for).
struct Canonical {
  enum class Stop { None, SymlinkInWritableRoot, DotDotBelowMissing, TooManyLinks };
  std::string path;
  Stop stop = Stop::None;
  std::string at;         // the symlink, or the missing component
  bool complete = false;  // every component of `path` exists (the walk ended on it)
  mode_t mode = 0;        // when complete, the st_mode of what the walk ended on
  // The directories inside a writable root (not one itself) that a '..' of the walk left,
  // its links' targets' walks included: the kernel takes '..' from what is there when it
  // looks, and the sandbox could make one a link elsewhere (red team A26-4). The caller
  // pins them, so that each stays the directory the walk left.
  std::vector<std::string> left_by_dot_dot = {};

  // What the walk found at `path`, links followed: the only judge of a root's existence
  // and kind (red team A21B-4; no second lookup by name).
  ir::HostKind kind() const { return complete ? kind_of(mode) : ir::HostKind::Missing; }
};

}  // namespace zpolicy::compiler
