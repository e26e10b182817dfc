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

}  // namespace zpolicy::compiler
