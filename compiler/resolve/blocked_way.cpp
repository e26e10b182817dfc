#include "compiler/resolve/blocked_way.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace zpolicy::compiler {

std::optional<size_t> first_non_directory_on_way(const std::string& root,
                                                 const std::vector<std::string>& rel) {
  std::string cur = root == "/" ? "" : root;
  for (size_t i = 0; i + 1 < rel.size(); ++i) {
    cur += "/" + rel[i];
    struct stat st;
    if (lstat(cur.c_str(), &st) != 0) return std::nullopt;  // missing: a placeholder follows
    if (S_ISLNK(st.st_mode)) return std::nullopt;
    if (!S_ISDIR(st.st_mode)) return i;
    // A directory the caller cannot create the next name in (mode 0555: a dataset made
    // read-only; 0644: not searchable) blocks the way as a file does: no placeholder can be
    // made there, and every run failed with exit 125; the sandbox, with the caller's uid,
    // could still chmod it and create the path (red team H17-12).
    struct stat next;
    const std::string below = cur + "/" + rel[i + 1];
    if (lstat(below.c_str(), &next) != 0 && (errno == EACCES || errno == ENOENT) &&
        access(cur.c_str(), W_OK | X_OK) != 0)
      return i;
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
