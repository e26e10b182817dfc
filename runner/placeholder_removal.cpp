#include "runner/placeholder_removal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "runner/open_no_symlinks.hpp"

namespace zpolicy::runner {
namespace {

// The parent of `path` opened without following any symlink, and the last component's name.
struct Parent {
  int fd = -1;
  std::string name;
  Parent(const Parent&) = delete;
  Parent& operator=(const Parent&) = delete;
  explicit Parent(const std::string& path) {
    const auto slash = path.find_last_of('/');
    errno = EINVAL;
    if (slash == std::string::npos || slash + 1 >= path.size()) return;
    name = path.substr(slash + 1);
    if (name == "." || name == "..") return;
    fd = open_no_symlinks(slash == 0 ? "/" : path.substr(0, slash), O_PATH | O_DIRECTORY);
  }
  ~Parent() {
    if (fd >= 0) close(fd);
  }
};

bool is_recorded(const struct stat& st, const RecordedPlaceholder& p) {
  return S_ISDIR(st.st_mode) && st.st_dev == p.dev && st.st_ino == p.ino;
}

}  // namespace

const char* to_string(Removal r) {
  switch (r) {
    case Removal::Removed:
      return "removed";
    case Removal::Gone:
      return "already gone";
    case Removal::NotEmpty:
      return "not empty: what a command put there is never deleted";
    case Removal::NotOurs:
      return "no longer the directory the run made";
    case Removal::Unreachable:
      return "cannot be reached: a symlink, or a directory this user cannot search, on the way";
  }
  return "";
}

void restore_access_if_ours(const RecordedPlaceholder& p) {
  Parent parent(p.path);
  if (parent.fd < 0) return;
  const int fd = openat(parent.fd, parent.name.c_str(), O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  // fchmod does not take an O_PATH descriptor; its /proc/self/fd name is that object.
  if (fstat(fd, &st) == 0 && is_recorded(st, p) && (st.st_mode & 0700) != 0700)
    chmod(("/proc/self/fd/" + std::to_string(fd)).c_str(), (st.st_mode & 07777) | 0700);
  close(fd);
}

bool still_recorded(const RecordedPlaceholder& p) {
  Parent parent(p.path);
  struct stat st;
  return parent.fd >= 0 &&
         fstatat(parent.fd, parent.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         is_recorded(st, p);
}

Removal remove_if_ours(const RecordedPlaceholder& p) {
  Parent parent(p.path);
  if (parent.fd < 0) return errno == ENOENT ? Removal::Gone : Removal::Unreachable;
  struct stat st;
  if (fstatat(parent.fd, parent.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? Removal::Gone : Removal::Unreachable;
  if (!is_recorded(st, p)) return Removal::NotOurs;
  if (unlinkat(parent.fd, parent.name.c_str(), AT_REMOVEDIR) == 0) return Removal::Removed;
  if (errno == ENOTEMPTY || errno == EEXIST) return Removal::NotEmpty;
  return errno == ENOENT ? Removal::Gone : Removal::Unreachable;
}

}  // namespace zpolicy::runner
