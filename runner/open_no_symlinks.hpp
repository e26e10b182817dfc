#pragma once

#include <string>

namespace zpolicy::runner {

// Opens the absolute path `path` from "/" following no symlink on the way or at the end
// (openat2 with RESOLVE_NO_SYMLINKS; one component at a time where it does not exist,
// compiler/resolve/dir_fd.hpp): a path that was canonical when it was resolved and has
// since been swapped for a symlink (or had one planted on its way) is refused, never
// followed; so is a "." or "..". `flags` are those of the last component (O_NOFOLLOW and
// O_CLOEXEC are added); the directories on the way are opened O_PATH. Returns the
// descriptor, or -1 with errno set (ELOOP for a symlink).
int open_no_symlinks(const std::string& path, int flags);

// The same with `root` (a directory descriptor) for "/": e.g. another mount namespace's
// root, /proc/PID/root, without leaving it (no symlink is followed, no ".." taken).
int open_no_symlinks_below(int root, const std::string& path, int flags);

}  // namespace zpolicy::runner
