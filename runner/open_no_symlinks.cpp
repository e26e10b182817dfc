#include "runner/open_no_symlinks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace zpolicy::runner {

int open_no_symlinks(const std::string& path, int flags) {
  if (path.empty() || path[0] != '/') {
    errno = EINVAL;
    return -1;
  }
  int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
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
    if (name == "." || name == "..") {
      close(dir);
      errno = EINVAL;
      return -1;
    }
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

}  // namespace zpolicy::runner
