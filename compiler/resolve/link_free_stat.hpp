#pragma once

#include <sys/stat.h>

#include <string>

#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// lstat(2) by a lookup that follows no symlink on the way either: false (errno set) where
// lstat would have to follow one (ELOOP), as where it fails. A path the resolver's walk judged
// is looked at again only this way, so that a second lookup can find the object the walk
// found or nothing, never what a link followed afresh leads to (red team A21B-4: `stat`
// followed a link the walk had left unjudged past its limit, and found a directory).
bool stat_without_links(const std::string& p, struct stat& st);

// The kind of what a stat found with the st_mode `mode`: anything but a directory (a
// link, a FIFO, a device) is bound as a file is.
inline ir::HostKind kind_of(mode_t mode) {
  return S_ISDIR(mode) ? ir::HostKind::Directory : ir::HostKind::File;
}

// The kind of a path that holds no symlink but perhaps its last component (a link there is
// a File).
ir::HostKind kind_of(const std::string& p);

}  // namespace zpolicy::compiler
