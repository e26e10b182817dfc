#include "runner/host_run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace zpolicy::runner {
namespace {

// Nobody but root can have made, and nobody but root can change, what this names.
bool only_root_writes(const struct stat& st) { return st.st_uid == 0 && (st.st_mode & 022) == 0; }

bool trusted_dir(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && only_root_writes(st);
}

bool trusted_file(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 && only_root_writes(st);
}

// Whether kPath still names the inode `fd` refers to (a swapped name is never followed).
bool names(int fd) {
  struct stat by_fd, by_name;
  return fstat(fd, &by_fd) == 0 &&
         fstatat(AT_FDCWD, HostRunLock::kPath, &by_name, AT_SYMLINK_NOFOLLOW) == 0 &&
         by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

// Opens the lock, root creating what is missing. Returns -1 with `why` set when it is
// missing (for a caller who cannot create it) or not trusted. Each component is opened
// from the one before without following a symlink.
int open_lock(std::string& why) {
  const bool root = geteuid() == 0;
  int dev = open("/dev", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dev < 0 || !trusted_dir(dev)) {
    why = "/dev is not a directory only root can write";
    if (dev >= 0) close(dev);
    return -1;
  }
  const bool made_dir = root && mkdirat(dev, "zpolicy", 0755) == 0;
  int dir = openat(dev, "zpolicy", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  const int dir_errno = errno;
  close(dev);
  if (dir < 0) {
    why = dir_errno == ENOENT ? std::string(HostRunLock::kDir) + " does not exist yet"
                              : std::string("cannot open ") + HostRunLock::kDir + ": " +
                                    std::strerror(dir_errno);
    return -1;
  }
  // The umask may have narrowed what this run made; other users' runs must open the lock.
  if (made_dir) fchmod(dir, 0755);
  if (!trusted_dir(dir)) {
    why = std::string(HostRunLock::kDir) + " is not a directory only root can write";
    close(dir);
    return -1;
  }
  constexpr int kOpen = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = root ? openat(dir, "runs.lock", kOpen | O_CREAT | O_EXCL, 0644) : -1;
  const bool made_file = fd >= 0;
  if (!made_file) fd = openat(dir, "runs.lock", kOpen);
  const int fd_errno = errno;
  close(dir);
  if (fd < 0) {
    why = fd_errno == ENOENT ? std::string(HostRunLock::kPath) + " does not exist yet"
                             : std::string("cannot open ") + HostRunLock::kPath + ": " +
                                   std::strerror(fd_errno);
    return -1;
  }
  if (made_file) fchmod(fd, 0644);
  if (!trusted_file(fd)) {
    why = std::string(HostRunLock::kPath) + " is not a file only root can write";
    close(fd);
    return -1;
  }
  return fd;
}

// Another run holds the lock exclusively only for the moment of its cleanup, so a shared
// lock comes within 5 s unless somebody else keeps it.
bool take_shared(int fd) {
  for (int tries = 0; tries < 500; ++tries) {
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) return true;
    usleep(10000);
  }
  return false;
}

std::string held_for_too_long() {
  return std::string("'") + HostRunLock::kPath +
         "' has been held exclusively for 5 s (`lslocks` names the holder); refusing to run";
}

}  // namespace

HostRunLock::~HostRunLock() { release(); }

bool HostRunLock::acquire(std::string& error, std::string& note) {
  std::string why;
  fd_ = open_lock(why);
  if (fd_ < 0) {
    note = why + ", so this run cannot tell whether another user's run relies on its "
                 "placeholders and leaves them (`zpolicy doctor` says how to fix it)";
    return true;
  }
  alone_ = flock(fd_, LOCK_EX | LOCK_NB) == 0;
  // Never try an exclusive lock while holding the shared one: a failed conversion drops
  // the lock held.
  if (!alone_ && !take_shared(fd_)) {
    release();
    error = held_for_too_long();
    return false;
  }
  if (!names(fd_)) {
    release();  // not the lock other runs take: holding it would only stall them
    note = std::string(kPath) + " was replaced while this run locked it, so this run leaves "
                                "its placeholders";
    return true;
  }
  coordinated_ = true;
  return true;
}

bool HostRunLock::share(std::string& error) {
  alone_ = false;
  // A conversion is not atomic: a cleanup may take the lock in between, which is harmless
  // before this run relies on any placeholder.
  if (fd_ < 0 || take_shared(fd_)) return true;
  release();
  error = held_for_too_long();
  return false;
}

bool HostRunLock::alone_at_the_end() {
  return coordinated_ && fd_ >= 0 && flock(fd_, LOCK_EX | LOCK_NB) == 0 && names(fd_);
}

void HostRunLock::release() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  coordinated_ = alone_ = false;
}

std::string HostRunLock::ensure() {
  std::string why;
  int fd = open_lock(why);
  if (fd >= 0) close(fd);
  return why;
}

}  // namespace zpolicy::runner
