#include "compiler/resolve/blocked_way.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace zpolicy::compiler {
namespace {

// Whether the caller cannot create `name` in the directory `dir` while it is missing (mode
// 0555: a dataset or a tree made read-only; 0644: not searchable): no placeholder can be
// made there, and every run failed with exit 125, yet the sandbox, with the caller's uid,
// could chmod the directory and create the path (red team H17-12).
bool cannot_create_in(const std::string& dir, const std::string& name) {
  struct stat st;
  const std::string below = (dir.empty() ? "" : dir) + "/" + name;
  return lstat(below.c_str(), &st) != 0 && (errno == EACCES || errno == ENOENT) &&
         access(dir.empty() ? "/" : dir.c_str(), W_OK | X_OK) != 0;
}

}  // namespace

std::optional<size_t> blocked_way_length(const std::string& root,
                                         const std::vector<std::string>& rel) {
  std::string cur = root == "/" ? "" : root;
  if (!rel.empty() && cannot_create_in(cur, rel[0])) return 0;
  for (size_t i = 0; i + 1 < rel.size(); ++i) {
    cur += "/" + rel[i];
    struct stat st;
    if (lstat(cur.c_str(), &st) != 0) return std::nullopt;  // missing: a placeholder follows
    if (S_ISLNK(st.st_mode)) return std::nullopt;
    if (!S_ISDIR(st.st_mode) || cannot_create_in(cur, rel[i + 1])) return i + 1;
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
