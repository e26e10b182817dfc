#include "runner/open_no_symlinks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "compiler/resolve/dir_fd.hpp"
#include "compiler/resolve/openat2.hpp"

namespace zpolicy::runner {

namespace {

// A "." or ".." component: never in a canonical path, refused rather than resolved.
bool has_dot_component(const std::string& path) {
  for (size_t pos = 0; pos < path.size();) {
    while (pos < path.size() && path[pos] == '/') ++pos;
    const size_t end = std::min(path.find('/', pos), path.size());
    const std::string_view name(path.data() + pos, end - pos);
    if (name == "." || name == "..") return true;
    pos = end;
  }
  return false;
}

// open_no_symlinks from `root` (AT_FDCWD: "/"). In one system call: the kernel refuses
// every symlink on the way (RESOLVE_NO_SYMLINKS; O_PATH | O_NOFOLLOW still opens a symlink
// at the end, refused below). Where openat2 does not exist (Linux < 5.6, ENOSYS) the walk
// the resolver falls back on, which answers as openat2 does; any other failure refuses,
// EPERM from a seccomp filter older than openat2 too (run and plan refuse up front there).
int open_from(int root, const std::string& path, int flags) {
  if (path.empty() || path[0] != '/' || has_dot_component(path)) {
    errno = EINVAL;
    return -1;
  }
  // Below `root`: relative to it ("/" is the directory itself).
  const std::string below = root == AT_FDCWD ? path : path == "/" ? "." : path.substr(1);
  const int fd =
      compiler::openat2(root, below.c_str(), flags | O_NOFOLLOW, compiler::Resolve::NoSymlinks);
  if (fd < 0 && errno == ENOSYS)
    return compiler::open_walking_without_links_at(root, below, flags & ~O_NOFOLLOW);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode))) {
    close(fd);
    errno = ELOOP;
    return -1;
  }
  return fd;
}

}  // namespace

int open_no_symlinks(const std::string& path, int flags) {
  return open_from(AT_FDCWD, path, flags);
}

int open_no_symlinks_below(int root, const std::string& path, int flags) {
  return open_from(root, path, flags);
}

}  // namespace zpolicy::runner
