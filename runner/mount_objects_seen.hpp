#pragma once

#include <string>
#include <vector>

#include "compiler/resolve/mount_names.hpp"
#include "compiler/resolve/mount_objects.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::runner {

// What each mount point of `table` at or below one of the writable roots `write` shows (compiler::MountObject),
// looked up from `root`, a directory descriptor standing for "/" (AT_FDCWD: this process's;
// /proc/GUARD/root: the namespace bwrap copied), following no symlink. Resolution records
// them for the writable roots right after the bound lints judged those mounts by their
// names on the host; once bwrap runs, the guard's are compared with them by identity
// (red team A13C-1, A13D-2), never by a name on the host.
std::vector<compiler::MountObject> mount_objects_seen(
    int root, const std::vector<ir::ResolvedPath>& write,
    const std::vector<compiler::MountEntry>& table);

}  // namespace zpolicy::runner
