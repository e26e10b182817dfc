#pragma once

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <utility>

namespace zpolicy::compiler {

// A directory held open by O_PATH, so that the names below it are looked up in it rather
// than by their path from "/", which costs a lookup of every component above (session 19).
// None (-1) when it cannot be opened: the caller looks the names below up by path then, or
// takes them for missing.
class DirFd {
 public:
  // Whether a symlink at the end of the path is followed to its directory or opens none;
  // NoneOnTheWay opens none where a symlink is met anywhere on the path (a path a walk
  // found link-free is opened again only this way).
  enum class Link { Follow, Refuse, NoneOnTheWay };

  DirFd(const std::string& path, Link link) : fd_(open_dir(path, link)) {}
  // Directory `name` in `dir`, not through a symlink; none when `dir` is none.
  DirFd(const DirFd& dir, const std::string& name)
      : fd_(dir.fd_ < 0
                ? -1
                : openat(dir.fd_, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) {}
  DirFd(const DirFd&) = delete;
  DirFd(DirFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  DirFd& operator=(DirFd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~DirFd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  static int open_dir(const std::string& path, Link link) {
    if (link != Link::NoneOnTheWay)
      return open(path.c_str(),
                  O_PATH | O_DIRECTORY | O_CLOEXEC | (link == Link::Refuse ? O_NOFOLLOW : 0));
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    return static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
  }

  int fd_;
};

}  // namespace zpolicy::compiler
