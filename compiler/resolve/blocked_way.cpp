#include "compiler/resolve/blocked_way.hpp"

#include <sys/stat.h>

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
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
