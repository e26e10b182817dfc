#include "runner/moved_roots.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "runner/open_no_symlinks.hpp"

namespace zpolicy::runner {

std::optional<std::string> first_moved(const ir::Resolved& resolved, int guard_root) {
  for (const auto& [word, paths] :
       {std::pair{"deny root", &resolved.deny}, std::pair{"writable root", &resolved.write}})
    for (const auto& d : *paths) {
      // A missing deny root has its own watch (missing_deny_names); a path without an
      // identity was not looked at as an object.
      if (d.kind == ir::HostKind::Missing || !d.identity) continue;
      const int fd = open_no_symlinks_below(guard_root, d.path, O_PATH);
      if (fd < 0) return std::string(word) + " '" + d.path + "' (" + std::strerror(errno) + ")";
      struct stat st;
      const bool read = fstat(fd, &st) == 0;
      close(fd);
      if (!read || ir::HostIdentity{static_cast<std::uint64_t>(st.st_dev),
                                    static_cast<std::uint64_t>(st.st_ino)} != *d.identity)
        return std::string(word) + " '" + d.path + "' (another object shows there)";
      if (d.links && !S_ISDIR(st.st_mode) && static_cast<std::uint64_t>(st.st_nlink) != d.links)
        return std::string(word) + " '" + d.path + "' (it had " + std::to_string(d.links) +
               " name(s) when the policy was resolved, now " + std::to_string(st.st_nlink) + ")";
    }
  return std::nullopt;
}

}  // namespace zpolicy::runner
