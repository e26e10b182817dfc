#include "runner/setup_check.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <optional>
#include <thread>

#include "compiler/resolve/openat2.hpp"

namespace zpolicy::runner {
namespace {

using compiler::ExpectedObject;

// bwrap has no event for "set up, waiting on --block-fd"; the kernel shows it: the
// init's current system call is read() on that descriptor, which bwrap calls only
// there. Generous, since setup under load can take long; a sandbox still setting up
// after it is refused, never released.
constexpr auto kSetupDeadline = std::chrono::seconds(30);

enum class Blocked { Yes, Ended, Unreadable, TimedOut };

// The first line of /proc/PID/`name`, or none with errno set.
std::optional<std::string> proc_line(pid_t pid, const char* name) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  const int saved = errno;
  close(fd);
  errno = saved;
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

// Whether `syscall_line` (/proc/PID/syscall: "NR ARG0 ..." or "running") is read() on
// `fd`.
bool reads_from(const std::string& syscall_line, int fd) {
  long nr = -1;
  unsigned long arg0 = 0;
  return std::sscanf(syscall_line.c_str(), "%ld %lx", &nr, &arg0) == 2 && nr == SYS_read &&
         arg0 == static_cast<unsigned long>(fd);
}

Blocked wait_until_blocked(pid_t init, int block_fd) {
  const auto deadline = std::chrono::steady_clock::now() + kSetupDeadline;
  // Short pauses: setup takes a few milliseconds, and each one overshot is paid by every
  // run; a look costs two small procfs reads.
  auto pause = std::chrono::microseconds(100);
  while (std::chrono::steady_clock::now() < deadline) {
    auto line = proc_line(init, "syscall");
    if (!line && errno != EACCES && errno != EPERM)
      return errno == ENOENT || errno == ESRCH ? Blocked::Ended : Blocked::Unreadable;
    // EACCES and EPERM come and go: while bwrap changes credentials during setup the
    // kernel makes it undumpable, and bwrap makes itself dumpable again before it blocks
    // (red team R4-S1). Only the state below, or the deadline, ends the wait.
    if (line && reads_from(*line, block_fd)) return Blocked::Yes;
    // A zombie's syscall file reads as some other call: it will never block.
    auto stat = proc_line(init, "stat");
    const size_t paren = stat ? stat->rfind(')') : std::string::npos;
    if (paren == std::string::npos || paren + 2 >= stat->size()) return Blocked::Ended;
    const char state = (*stat)[paren + 2];
    if (state == 'Z' || state == 'X') return Blocked::Ended;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(250));
  }
  return Blocked::TimedOut;
}

// `dest` opened below `root` (the sandbox's "/") as an O_PATH descriptor, following no
// symlink on the way; the last component may be one and is then returned as such.
int open_in_sandbox(int root, const std::string& dest) {
  using compiler::Resolve;
  const std::string relative = dest == "/" ? "." : dest.substr(1);
  return compiler::openat2(root, relative.c_str(), O_PATH | O_NOFOLLOW,
                           Resolve::InRoot | Resolve::NoSymlinks | Resolve::NoMagicLinks);
}

// `path` looked up below `root` as the sandbox's command would: symlinks followed, their
// absolute targets taken from the sandbox's "/", no magic link of /proc.
int look_up_in_sandbox(int root, const std::string& path) {
  using compiler::Resolve;
  return compiler::openat2(root, path.substr(1).c_str(), O_PATH,
                           Resolve::InRoot | Resolve::NoMagicLinks);
}

struct Found {
  struct statx stx {};
  bool mount_root = false;
  bool read_only = false;
  long fs_type = 0;
};

std::optional<Found> inspect(int fd) {
  Found f;
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO, &f.stx) != 0)
    return std::nullopt;
  if (!(f.stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) return std::nullopt;
  f.mount_root = f.stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
  if (S_ISLNK(f.stx.stx_mode)) return f;
  struct statfs fs {};
  struct statvfs vfs {};
  if (fstatfs(fd, &fs) != 0 || fstatvfs(fd, &vfs) != 0) return std::nullopt;
  f.fs_type = static_cast<long>(fs.f_type);
  f.read_only = vfs.f_flag & ST_RDONLY;
  return f;
}

std::string kind_of(const Found& f) {
  const mode_t m = f.stx.stx_mode;
  std::string k = S_ISLNK(m) ? "a symlink" : S_ISDIR(m) ? "a directory" : "a file";
  if (f.mount_root) k += " mount";
  return k;
}

}  // namespace

SetupCheck::SetupCheck(std::vector<ExpectedObject> expected,
                       std::vector<std::pair<int, int>> sources, int block_fd,
                       std::vector<std::string> absent)
    : expected_(std::move(expected)),
      sources_(std::move(sources)),
      block_fd_(block_fd),
      absent_(std::move(absent)) {}

SetupCheck::Result SetupCheck::check(pid_t init, std::string& why) const {
  switch (wait_until_blocked(init, block_fd_)) {
    case Blocked::Yes:
      break;
    case Blocked::Ended:
      return Result::SetupEnded;
    case Blocked::Unreadable:
      why = std::string("cannot watch the sandbox's setup (/proc/") + std::to_string(init) +
            "/syscall): " + std::strerror(errno);
      return Result::Differs;
    case Blocked::TimedOut:
      why = "the sandbox did not finish setting up within " +
            std::to_string(kSetupDeadline.count()) + " s";
      return Result::TimedOut;
  }
  const std::string root_path = "/proc/" + std::to_string(init) + "/root";
  const int root = open(root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) {
    why = "cannot open the sandbox's root (" + root_path + "): " + std::strerror(errno);
    return Result::Differs;
  }
  Result result = Result::Holds;
  for (const ExpectedObject& e : expected_) {
    auto differs = [&](const std::string& what) {
      why = "'" + e.dest + "' (bwrap.args line " + std::to_string(e.line) + ", " +
            compiler::to_string(e.kind) + ") " + what;
      result = Result::Differs;
    };
    const int fd = open_in_sandbox(root, e.dest);
    if (fd < 0) {
      differs(errno == ELOOP ? "is reached through a symlink"
                             : std::string("cannot be opened: ") + std::strerror(errno));
      break;
    }
    auto found = inspect(fd);
    if (!found) {
      differs(std::string("cannot be inspected: ") + std::strerror(errno));
    } else if (e.kind == ExpectedObject::Kind::Symlink) {
      char target[4096];
      const ssize_t n = S_ISLNK(found->stx.stx_mode) ? readlinkat(fd, "", target, sizeof target) : -1;
      if (n < 0 || std::string(target, static_cast<size_t>(n)) != e.link_target)
        differs("is " + kind_of(*found) + ", not the symlink to '" + e.link_target + "'");
    } else if (e.kind == ExpectedObject::Kind::Directory) {
      if (!S_ISDIR(found->stx.stx_mode)) differs("is " + kind_of(*found) + ", not a directory");
    } else if (!found->mount_root) {
      differs("is " + kind_of(*found) + " that is not a mount point: the mount went elsewhere");
    } else if (e.read_only && !found->read_only) {
      differs("is a writable mount, not read-only");
    } else if (e.kind == ExpectedObject::Kind::Bind) {
      int here = -1;
      for (const auto& [mine, theirs] : sources_)
        if (e.source_fd && theirs == *e.source_fd) here = mine;
      struct stat source {};
      if (here < 0) {
        differs("is bound by path: nothing recorded which object it must show");
      } else if (fstat(here, &source) != 0 ||
                 makedev(found->stx.stx_dev_major, found->stx.stx_dev_minor) != source.st_dev ||
                 found->stx.stx_ino != source.st_ino) {
        differs("shows another object than descriptor " + std::to_string(*e.source_fd));
      }
    } else {
      const long want = e.kind == ExpectedObject::Kind::Proc ? PROC_SUPER_MAGIC : TMPFS_MAGIC;
      if (found->fs_type != want)
        differs(std::string("is not a ") + (want == TMPFS_MAGIC ? "tmpfs" : "procfs") + " mount");
    }
    close(fd);
    if (result != Result::Holds) break;
  }
  for (size_t i = 0; result == Result::Holds && i < absent_.size(); ++i) {
    const int fd = look_up_in_sandbox(root, absent_[i]);
    // Not found, or not reachable with the caller's credentials, which the sandbox has
    // without any capability: the command cannot reach it either.
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ELOOP))
      continue;
    why = fd >= 0 ? "deny root '" + absent_[i] +
                        "' is in the sandbox and nothing masks it: it did not exist when the "
                        "run was checked (a filesystem mounted on the host since?)"
                  : "deny root '" + absent_[i] + "' cannot be looked up in the sandbox: " +
                        std::strerror(errno);
    if (fd >= 0) close(fd);
    result = Result::Differs;
  }
  close(root);
  return result;
}

std::optional<std::vector<compiler::MountEntry>> SetupCheck::mounts(pid_t init) const {
  const int dir = open(("/proc/" + std::to_string(init)).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return std::nullopt;
  auto read_all = [dir](const char* name, std::string& out) {
    const int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    close(fd);
    return n == 0;
  };
  std::string table, syscall_line;
  const bool read = read_all("mountinfo", table) && read_all("syscall", syscall_line);
  close(dir);
  if (!read || !reads_from(syscall_line, block_fd_)) return std::nullopt;
  return compiler::parse_mountinfo(table);
}

}  // namespace zpolicy::runner
