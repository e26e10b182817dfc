#include "runner/mount_objects_seen.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstring>

#include "runner/open_no_symlinks.hpp"

namespace zpolicy::runner {

std::vector<compiler::MountObject> mount_objects_seen(
    int root, const std::vector<ir::ResolvedPath>& write,
    const std::vector<compiler::MountEntry>& table) {
  std::vector<std::string> roots;
  for (const auto& w : write) roots.push_back(w.path);
  std::vector<compiler::MountObject> out;
  for (const auto& point : compiler::mount_points_within(roots, table)) {
    compiler::MountObject o{point};
    // O_PATH: nothing is read, and an automount point at the end is not triggered.
    const int fd = open_no_symlinks_below(root, point, O_PATH);
    struct stat st;
    struct statfs fs;
    if (fd >= 0 && fstat(fd, &st) == 0 && fstatfs(fd, &fs) == 0) {
      std::uint64_t id = 0;
      static_assert(sizeof fs.f_fsid <= sizeof id);
      std::memcpy(&id, &fs.f_fsid, sizeof fs.f_fsid);
      o = {point,
           true,
           static_cast<std::uint64_t>(st.st_dev),
           static_cast<std::uint64_t>(st.st_ino),
           static_cast<std::uint64_t>(fs.f_type),
           id,
           (fs.f_flags & ST_RDONLY) != 0};
    }
    if (fd >= 0) close(fd);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace zpolicy::runner
