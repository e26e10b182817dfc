#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zpolicy::compiler {

// The submodule paths of a git index (red team A16-6): the entries whose mode is a gitlink
// (0160000), relative to the worktree top, as read-cache.c lays them out (versions 2, 3
// and 4, whose names are prefix-compressed); with a split index (`link` extension), those
// of the shared index `sharedindex.<hash>` beside it too (more than the merged index holds,
// never less). `hash_size`: 20 (SHA-1) or 32 (SHA-256, extensions.objectFormat).
// `unreadable` says why zpolicy will not decide: a file that is not a regular one (by lstat
// and by fstat of what was opened), is over 256 MiB (it is held in memory while it is read;
// red team R17-2), is not an index, or is cut short, a sparse index (a directory entry
// hides the paths below it), or one with a gitlink git never writes (an empty, `.`, `..` or
// `.git` component: R17-4). A missing index has no entries.
struct GitIndexLinks {
  std::vector<std::string> paths;
  std::optional<std::string> unreadable;
};
GitIndexLinks gitlinks_of_index(const std::string& index, size_t hash_size);

}  // namespace zpolicy::compiler
