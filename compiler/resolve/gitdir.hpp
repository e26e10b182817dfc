#pragma once

#include <optional>
#include <string>

namespace zpolicy::compiler {

// The git directory a `.git` pointer file (worktree, submodule) names, as written and
// made absolute against the pointer's directory, still to be canonicalized by the caller
// with the rules of every protected path. nullopt when `pointer` is not a regular file
// (a FIFO, socket or device is never opened, a symlink never followed: resolution must
// not block or act on what the workspace holds) or has no `gitdir:` line.
std::optional<std::string> gitdir_named_by(const std::string& pointer);

// The common directory a linked worktree's git directory (one with a HEAD) names in its
// `commondir` file (where git reads config, hooks, objects and refs for it), made
// absolute against `gitdir`, by the same rules; none when there is none. A `commondir`
// that is a symlink is not read: git reads through it, so whoever may write what it
// points at chooses the common directory; `link` says so, for the caller to refuse.
struct CommonDir {
  std::optional<std::string> path;
  bool link = false;
};
CommonDir commondir_named_by(const std::string& gitdir);

}  // namespace zpolicy::compiler
