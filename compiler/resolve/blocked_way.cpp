#include "compiler/resolve/blocked_way.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <utility>

namespace zpolicy::compiler {
namespace {

// The directory at `path`, held open by O_PATH so that the names below it are looked up in
// it: a look-up of each prefix by its path from "/" cost the square of a protected path's
// depth (700 of them nested in a 1 400-deep workspace tree ran past a minute; session 19).
// None (-1) when it cannot be opened; then the names below are looked up by path, as before.
class Dir {
 public:
  Dir(int at, const std::string& name, std::string path)
      : fd_(openat(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)),
        path_(std::move(path)) {}
  Dir(const Dir&) = delete;
  Dir& operator=(Dir&& o) noexcept {
    std::swap(fd_, o.fd_);
    path_ = std::move(o.path_);
    return *this;
  }
  ~Dir() {
    if (fd_ >= 0) close(fd_);
  }
  const std::string& path() const { return path_; }  // "" for "/"
  // lstat of path/name; a path of PATH_MAX bytes or more fails, as lstat fails on it.
  bool lstat_below(const std::string& name, struct stat& st) const {
    const std::string below = path_ + "/" + name;
    if (below.size() >= PATH_MAX) {
      errno = ENAMETOOLONG;
      return false;
    }
    if (fd_ < 0) return lstat(below.c_str(), &st) == 0;
    return fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  }
  // access(path/name, W_OK | X_OK) == 0, for a directory `name` met without a link.
  bool can_change_below(const std::string& name) const {
    const std::string below = path_ + "/" + name;
    if (below.size() >= PATH_MAX) return false;
    if (fd_ < 0) return access(below.c_str(), W_OK | X_OK) == 0;
    return faccessat(fd_, name.c_str(), W_OK | X_OK, 0) == 0;
  }
  int fd() const { return fd_; }

 private:
  int fd_;
  std::string path_;
};

// Whether the caller cannot create `name` in `dir` (which it may change or not, as given)
// while it is missing (mode 0555: a dataset or a tree made read-only; 0644: not
// searchable): no placeholder can be made there, and every run failed with exit 125, yet
// the sandbox, with the caller's uid, could chmod the directory and create the path (red
// team H17-12).
bool cannot_create_in(const Dir& dir, const std::string& name, bool dir_can_change) {
  struct stat st;
  return !dir.lstat_below(name, st) && (errno == EACCES || errno == ENOENT) && !dir_can_change;
}

}  // namespace

std::optional<size_t> blocked_way_length(const std::string& root,
                                         const std::vector<std::string>& rel) {
  Dir dir(AT_FDCWD, root, root == "/" ? "" : root);
  const bool root_can_change = access(root.c_str(), W_OK | X_OK) == 0;
  if (!rel.empty() && cannot_create_in(dir, rel[0], root_can_change)) return 0;
  for (size_t i = 0; i + 1 < rel.size(); ++i) {
    struct stat st;
    if (!dir.lstat_below(rel[i], st)) return std::nullopt;  // missing: a placeholder follows
    if (S_ISLNK(st.st_mode)) return std::nullopt;
    if (!S_ISDIR(st.st_mode)) return i + 1;
    const bool can_change = dir.can_change_below(rel[i]);
    dir = Dir(dir.fd() >= 0 ? dir.fd() : AT_FDCWD,
              dir.fd() >= 0 ? rel[i] : dir.path() + "/" + rel[i], dir.path() + "/" + rel[i]);
    if (cannot_create_in(dir, rel[i + 1], can_change)) return i + 1;
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
