#include "runner/open_no_symlinks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

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

// The same in one system call: the kernel refuses every symlink on the way
// (RESOLVE_NO_SYMLINKS; O_PATH | O_NOFOLLOW still opens a symlink at the end, refused
// below). -1 with errno ENOSYS where openat2 does not exist (Linux < 5.6).
int open_in_one_call(int root, const std::string& path, int flags) {
  // Below `root`: relative to it ("/" is the directory itself).
  const std::string below = root == AT_FDCWD ? path : path == "/" ? "." : path.substr(1);
  return compiler::openat2(root, below.c_str(), flags | O_NOFOLLOW, compiler::Resolve::NoSymlinks);
}

// open_no_symlinks from `root` (AT_FDCWD: "/").
int open_from(int root, const std::string& path, int flags) {
  if (path.empty() || path[0] != '/' || has_dot_component(path)) {
    errno = EINVAL;
    return -1;
  }
  if (const int fd = open_in_one_call(root, path, flags); fd >= 0 || errno != ENOSYS) {
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode))) {
      close(fd);
      errno = ELOOP;
      return -1;
    }
    return fd;
  }
  int dir = root == AT_FDCWD ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                             : openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  size_t pos = 1;
  while (dir >= 0) {
    while (pos < path.size() && path[pos] == '/') ++pos;
    if (pos >= path.size()) {
      // "/" itself: reopen it with the caller's flags.
      int fd = openat(dir, ".", flags | O_CLOEXEC);
      close(dir);
      return fd;
    }
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    const std::string name = path.substr(pos, end - pos);
    pos = end;
    const bool last = path.find_first_not_of('/', end) == std::string::npos;
    int next = openat(dir, name.c_str(),
                      (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
    const int saved = errno;
    close(dir);
    errno = saved;
    if (next < 0 || !last) {
      dir = next;
      continue;
    }
    // O_PATH | O_NOFOLLOW opens a symlink itself rather than failing: refuse it here.
    struct stat st;
    if (fstat(next, &st) != 0 || S_ISLNK(st.st_mode)) {
      close(next);
      errno = ELOOP;
      return -1;
    }
    return next;
  }
  return -1;
}

}  // namespace

int open_no_symlinks(const std::string& path, int flags) {
  return open_from(AT_FDCWD, path, flags);
}

int open_no_symlinks_below(int root, const std::string& path, int flags) {
  return open_from(root, path, flags);
}

}  // namespace zpolicy::runner
