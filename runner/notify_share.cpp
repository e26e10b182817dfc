#include "runner/notify_share.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>

namespace zpolicy::runner {
namespace {

std::optional<long> read_limit(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[32];
  const ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  long v = 0;
  if (n <= 0 || std::from_chars(buf, buf + n, v).ec != std::errc() || v < 0) return std::nullopt;
  return v;
}

// The caller's limit: the lower of the initial user namespace's (fs.inotify.*) and the
// caller's own namespace's (user.*). A namespace between them (a container's) may be
// lower still; the share is then larger than a quarter of it, which the test of
// R8-L2 does not cover (docs/run.md says so).
std::optional<long> caller_limit(const char* initial, const char* own) {
  auto a = read_limit(initial), b = read_limit(own);
  if (!a || !b) return std::nullopt;
  return std::min(*a, *b);
}

struct Setting {
  const char* path;
  char value[24];
  size_t length;
};

bool format(long share, Setting& s) {
  auto r = std::to_chars(s.value, s.value + sizeof s.value, share);
  s.length = static_cast<size_t>(r.ptr - s.value);
  return r.ec == std::errc();
}

struct Helper {
  int user_fd;
  const Setting* settings;  // kNotifyLimitCount
};

// The helper: system calls only (it runs on a small stack, in the runner's memory). The
// sysctl a write reaches is the one of the writer's user namespace, whatever /proc it goes
// through. Its status is the errno of the step that failed.
int join_and_write(void* arg) {
  const auto* h = static_cast<const Helper*>(arg);
  if (setns(h->user_fd, CLONE_NEWUSER) != 0) return errno;
  for (size_t i = 0; i < kNotifyLimitCount; ++i) {
    const Setting& s = h->settings[i];
    const int fd = open(s.path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    const ssize_t n = write(fd, s.value, s.length);
    const int err = n == static_cast<ssize_t>(s.length) ? 0 : n < 0 ? errno : EIO;
    close(fd);
    if (err) return err;
  }
  return 0;
}

}  // namespace

std::optional<NotifyShare> sandbox_notify_share() {
  NotifyShare share;
  for (size_t i = 0; i < kNotifyLimitCount; ++i) {
    const auto limit = caller_limit(kNotifyLimits[i].initial, kNotifyLimits[i].in_namespace);
    if (!limit) return std::nullopt;
    share.limits[i] = std::max(1L, *limit / kNotifyShareDivisor);
  }
  return share;
}

bool limit_sandbox_notify(pid_t init, const NotifyShare& share, std::string& why) {
  Setting settings[kNotifyLimitCount];
  for (size_t i = 0; i < kNotifyLimitCount; ++i) {
    settings[i].path = kNotifyLimits[i].in_namespace;
    if (!format(share.limits[i], settings[i])) {
      why = "cannot format the sandbox's inotify and fanotify limits";
      return false;
    }
  }
  // The init is pinned while its namespace is looked up: this runs while bwrap sets up,
  // before anything has shown the init alive, and a pid reused meanwhile would name another
  // process's namespace. Still running once the namespace is open, it was the init's.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, init, 0));
  // Its pid namespace, which every verified argv unshares (--unshare-pid), not its network
  // namespace: under `network: full` that is the host's, owned by the caller's own user
  // namespace, and every such run was refused (red team A10-1).
  const std::string pid_ns = "/proc/" + std::to_string(init) + "/ns/pid";
  const int ns_fd = pidfd >= 0 ? open(pid_ns.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  int user_fd = ns_fd >= 0 ? ioctl(ns_fd, NS_GET_USERNS) : -1;
  if (ns_fd >= 0) close(ns_fd);
  if (pidfd >= 0) {
    pollfd exited{pidfd, POLLIN, 0};
    if (user_fd >= 0 && poll(&exited, 1, 0) != 0) {
      close(user_fd);
      user_fd = -1;
      errno = ESRCH;
    }
    close(pidfd);
  }
  struct stat ours {}, theirs {};
  if (user_fd < 0 || stat("/proc/self/ns/user", &ours) != 0 || fstat(user_fd, &theirs) != 0) {
    why = std::string("cannot reach the sandbox's user namespace: ") + std::strerror(errno);
    if (user_fd >= 0) close(user_fd);
    return false;
  }
  if (ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev) {
    // Lowering these would lower the caller's own limits, for every process of the user.
    close(user_fd);
    why = "the sandbox has no user namespace of its own to bound its inotify and fanotify use in";
    return false;
  }
  // A child that shares this process's memory and runs while it waits (CLONE_VM |
  // CLONE_VFORK): a fork would copy the runner's page tables, the most of this step's cost.
  // It has its own credentials and fs, so it may join another user namespace.
  // Signals stay blocked while it runs: a handler of the runner's, run by the helper in
  // the shared memory, would count a SIGINT the terminal sent to both twice.
  Helper helper{user_fd, settings};
  alignas(16) char stack[16 * 1024];  // the helper's, while this frame waits for it
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t child = clone(join_and_write, stack + sizeof stack,
                            CLONE_VM | CLONE_VFORK | SIGCHLD, &helper);
  const int saved = errno;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  close(user_fd);
  int status = 0;
  pid_t waited = -1;
  if (child > 0)
    while ((waited = waitpid(child, &status, 0)) < 0 && errno == EINTR) {
    }
  if (child < 0 || waited != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const int err = child < 0 ? saved : WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
    why = std::string("cannot limit the sandbox's share of the caller's inotify and fanotify limits: ") +
          std::strerror(err ? err : EIO);
    return false;
  }
  return true;
}

}  // namespace zpolicy::runner
