#include "runner/placeholder_removal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

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

// What `name` in `dir` (or `dir` itself for an empty name) is, examined without following
// it; false with errno set when it cannot be.
struct Object {
  bool directory = false;
  unsigned long long dev = 0, ino = 0;
  std::optional<BirthTime> birth;
};
bool examine(int dir, const std::string& name, Object& out) {
  struct statx stx {};
  const int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (name.empty() ? AT_EMPTY_PATH : 0);
  if (statx(dir, name.c_str(), flags, STATX_TYPE | STATX_INO | STATX_BTIME, &stx) != 0)
    return false;
  out.directory = S_ISDIR(stx.stx_mode);
  out.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  out.ino = stx.stx_ino;
  if (stx.stx_mask & STATX_BTIME)
    out.birth = BirthTime{static_cast<long long>(stx.stx_btime.tv_sec), stx.stx_btime.tv_nsec};
  return true;
}

enum class Match { Same, Other, Unidentified };

// Whether `now` is the directory `p` records, for a run that is gone (`held` < 0) or for
// the live run holding `held` on it.
Match identify(const Object& now, const RecordedPlaceholder& p, int held) {
  if (!now.directory || now.dev != p.dev || now.ino != p.ino) return Match::Other;
  if (held >= 0) {
    Object mine;
    return examine(held, "", mine) && mine.dev == now.dev && mine.ino == now.ino ? Match::Same
                                                                                 : Match::Other;
  }
  if (!p.birth || !now.birth) return Match::Unidentified;
  return *p.birth == *now.birth ? Match::Same : Match::Other;
}

void restore_access(const RecordedPlaceholder& p, int held) {
  Parent parent(p.path);
  if (parent.fd < 0) return;
  const int fd =
      openat(parent.fd, parent.name.c_str(), O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  Object now;
  struct stat st;
  // fchmod does not take an O_PATH descriptor; its /proc/self/fd name is that object.
  if (examine(fd, "", now) && identify(now, p, held) == Match::Same && fstat(fd, &st) == 0 &&
      (st.st_mode & 0700) != 0700)
    chmod(("/proc/self/fd/" + std::to_string(fd)).c_str(), (st.st_mode & 07777) | 0700);
  close(fd);
}

Removal remove(const RecordedPlaceholder& p, int held) {
  Parent parent(p.path);
  if (parent.fd < 0) return errno == ENOENT ? Removal::Gone : Removal::Unreachable;
  Object now;
  if (!examine(parent.fd, parent.name, now))
    return errno == ENOENT ? Removal::Gone : Removal::Unreachable;
  switch (identify(now, p, held)) {
    case Match::Other:
      return Removal::NotOurs;
    case Match::Unidentified:
      return Removal::Unidentified;
    case Match::Same:
      break;
  }
  if (unlinkat(parent.fd, parent.name.c_str(), AT_REMOVEDIR) == 0) return Removal::Removed;
  if (errno == ENOTEMPTY || errno == EEXIST) return Removal::NotEmpty;
  return errno == ENOENT ? Removal::Gone : Removal::Unreachable;
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
    case Removal::Unidentified:
      return "cannot be told from a directory made there since the run (no birth time recorded "
             "or reported by the filesystem): rmdir it if it is yours to remove";
  }
  return "";
}

void restore_access_if_ours(const RecordedPlaceholder& p) { restore_access(p, -1); }

void restore_access_if_ours(const RecordedPlaceholder& p, int held) {
  if (held >= 0) restore_access(p, held);
}

bool still_recorded(const RecordedPlaceholder& p) {
  Parent parent(p.path);
  Object now;
  return parent.fd >= 0 && examine(parent.fd, parent.name, now) &&
         identify(now, p, -1) != Match::Other;
}

Removal remove_if_ours(const RecordedPlaceholder& p) { return remove(p, -1); }

Removal remove_if_ours(const RecordedPlaceholder& p, int held) {
  return held >= 0 ? remove(p, held) : Removal::Unidentified;
}

std::optional<RecordedPlaceholder> examine_placeholder(int fd) {
  Object now;
  if (!examine(fd, "", now) || !now.directory) return std::nullopt;
  return RecordedPlaceholder{"", now.dev, now.ino, now.birth};
}

}  // namespace zpolicy::runner
