#include "runner/moved_roots.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runner/open_no_symlinks.hpp"

namespace zpolicy::runner {

std::optional<std::string> first_moved(const std::vector<ir::ResolvedPath>& paths, pid_t guard) {
  const int root =
      open(("/proc/" + std::to_string(guard) + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return "'/proc/" + std::to_string(guard) + "/root' (" + std::strerror(errno) + ")";
  std::optional<std::string> moved;
  for (const auto& d : paths) {
    // A missing deny root has its own watch (missing_deny_names); a path without an
    // identity was not looked at as an object.
    if (d.kind == ir::HostKind::Missing || !d.identity) continue;
    const int fd = open_no_symlinks_below(root, d.path, O_PATH);
    if (fd < 0) {
      moved = "'" + d.path + "' (" + std::strerror(errno) + ")";
      break;
    }
    struct stat st;
    const bool same = fstat(fd, &st) == 0 &&
                      ir::HostIdentity{static_cast<std::uint64_t>(st.st_dev),
                                       static_cast<std::uint64_t>(st.st_ino)} == *d.identity;
    close(fd);
    if (!same) {
      moved = "'" + d.path + "' (another object shows there)";
      break;
    }
  }
  close(root);
  return moved;
}

}  // namespace zpolicy::runner
