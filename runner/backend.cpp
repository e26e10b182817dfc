#include "runner/backend.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#if defined(__linux__)
#include <sys/prctl.h>

#include "compiler/resolve/openat2.hpp"
#elif defined(__APPLE__)
#include "runner/macos_argv.hpp"
#endif

namespace zpolicy::runner {
namespace {

#if defined(__linux__) || defined(__APPLE__)
// A backend binary is trusted only if nobody but root can have changed it or any
// directory on its path.
BackendStatus check_binary(const std::string& binary, const std::string& install_hint) {
  struct stat st;
  if (lstat(binary.c_str(), &st) != 0)
    return {Unavailability::NotInstalled, binary + " does not exist" + install_hint};
  if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR) || st.st_size == 0)
    return {Unavailability::NotInstalled, binary + " is not an executable file"};
  for (std::string p = binary;; p = p.substr(0, std::max<size_t>(p.rfind('/'), 1))) {
    if (stat(p.c_str(), &st) != 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
      return {Unavailability::Untrusted, p + " is not owned by root or is writable by others"};
    if (p == "/") break;
  }
  return {};
}
#endif

#if defined(__linux__)
std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool file_exists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}

bool in_container() {
  if (file_exists("/.dockerenv") || file_exists("/run/.containerenv")) return true;
  std::ifstream in("/proc/1/cgroup");
  std::stringstream s;
  s << in.rdbuf();
  auto t = s.str();
  return t.find("docker") != std::string::npos || t.find("kubepods") != std::string::npos ||
         t.find("lxc") != std::string::npos;
}
#endif

}  // namespace

const char* to_string(Unavailability u) {
  switch (u) {
    case Unavailability::None:
      return "available";
    case Unavailability::UnsupportedPlatform:
      return "unsupported-platform";
    case Unavailability::Wsl1:
      return "wsl1";
    case Unavailability::NotInstalled:
      return "not-installed";
    case Unavailability::Untrusted:
      return "untrusted-binary";
    case Unavailability::UserNamespacesDisabled:
      return "user-namespaces-disabled";
    case Unavailability::AppArmorRestriction:
      return "apparmor-restriction";
    case Unavailability::ContainerWithoutNamespaces:
      return "container-without-namespaces";
    case Unavailability::SeccompUnavailable:
      return "seccomp-unavailable";
    case Unavailability::ForeignProcfs:
      return "foreign-procfs";
    case Unavailability::Openat2Unavailable:
      return "openat2-unavailable";
    case Unavailability::ProbeTimeout:
      return "probe-timeout";
    case Unavailability::ProbeFailed:
      return "probe-failed";
  }
  return "probe-failed";
}

std::string BackendStatus::str() const {
  return detail.empty() ? to_string(reason) : std::string(to_string(reason)) + ": " + detail;
}

std::string backend_description() {
#if defined(__APPLE__)
  return "macos backend: " + std::string(kSandboxExec);
#elif defined(__linux__)
  return std::string("linux backend: ") + kBwrapPath;
#else
  return "no backend for this platform";
#endif
}

std::string foreign_procfs() {
  char self[32] = {};  // readlink leaves the last byte 0
  const ssize_t n = readlink("/proc/self", self, sizeof self - 1);
  const std::string pid = std::to_string(getpid());
  if (n > 0 && self == pid) return "";
  const std::string named = n > 0 ? "is process " + std::string(self) : "cannot be read";
  return "/proc/self " + named + ", not this process (" + pid +
         "): /proc belongs to another pid namespace";
}

std::string openat2_unavailable() {
#if defined(__linux__)
  const int fd = compiler::openat2(AT_FDCWD, "/", O_PATH, compiler::Resolve::NoSymlinks);
  if (fd >= 0) {
    close(fd);
    return "";
  }
  const std::string use = ", and the runner opens every path it binds with it";
  if (errno == ENOSYS)
    return "openat2(2) does not exist here (ENOSYS: Linux before 5.6, or a seccomp filter "
           "answering so)" + use;
  if (errno == EPERM)
    return "openat2(2) is refused (EPERM: a seccomp filter of the container or service that "
           "predates it)" + use;
  return std::string("openat2(2) fails (") + std::strerror(errno) + ")" + use;
#else
  return "";
#endif
}

std::string set_id_process() {
  if (getuid() != geteuid() || getgid() != getegid())
    return "zpolicy runs set-user-id or set-group-id (real uid " + std::to_string(getuid()) +
           " gid " + std::to_string(getgid()) + ", effective uid " + std::to_string(geteuid()) +
           " gid " + std::to_string(getegid()) +
           "); start it with one identity (its state and records are per user)";
  // One identity, but started with privileges its caller lacks all the same: file
  // capabilities (or a set-id start it has since undone).
#if defined(__linux__)
  const bool secure_start = getauxval(AT_SECURE) != 0;
#else
  const bool secure_start = issetugid() != 0;
#endif
  if (secure_start)
    return "zpolicy was started with privileges its caller lacks (file capabilities or a "
           "set-id bit: AT_SECURE); start it without them";
  return "";
}

BackendStatus preflight() {
#if defined(__APPLE__)
  return check_binary(std::string(kSandboxExec), "");
#elif !defined(__linux__)
  return {Unavailability::UnsupportedPlatform,
          "zpolicy runs sandboxes on Linux (bwrap) and macOS (sandbox-exec) only"};
#else
  std::string osrelease = read_first_line("/proc/sys/kernel/osrelease");
  if (osrelease.find("Microsoft") != std::string::npos)
    return {Unavailability::Wsl1, "WSL1 has no namespaces; use WSL2"};
  if (auto b = check_binary(kBwrapPath, " (apt-get install bubblewrap)"); !b.usable()) return b;
  if (auto foreign = foreign_procfs(); !foreign.empty())
    return {Unavailability::ForeignProcfs, foreign};
  if (read_first_line("/proc/sys/user/max_user_namespaces") == "0")
    return {Unavailability::UserNamespacesDisabled, "sysctl user.max_user_namespaces is 0"};
  if (getuid() != 0 && read_first_line("/proc/sys/kernel/unprivileged_userns_clone") == "0")
    return {Unavailability::UserNamespacesDisabled,
            "sysctl kernel.unprivileged_userns_clone is 0"};
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
    return {Unavailability::SeccompUnavailable, "the kernel has no seccomp filter support"};
  if (auto why = openat2_unavailable(); !why.empty())
    return {Unavailability::Openat2Unavailable, why};
  return {};
#endif
}

BackendStatus probe([[maybe_unused]] int timeout_ms) {
  if (auto pre = preflight(); !pre.usable()) return pre;
#if !defined(__linux__)
  // sandbox-exec is proven per run, by the preflight of runner/macos_run.
  return {};
#else
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) return {Unavailability::ProbeFailed, "pipe failed"};
  pid_t pid = fork();
  if (pid < 0) return {Unavailability::ProbeFailed, "fork failed"};
  if (pid == 0) {
    dup2(err[1], 2);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    const char* argv[] = {kBwrapPath, "--unshare-user", "--unshare-ipc", "--unshare-pid",
                          "--unshare-uts", "--unshare-net", "--disable-userns", "--cap-drop",
                          "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                          "--new-session", "--die-with-parent", "--", "/bin/true", nullptr};
    const char* envp[] = {"PATH=/usr/bin:/bin", nullptr};
    execve(kBwrapPath, const_cast<char**>(argv), const_cast<char**>(envp));
    _exit(127);
  }
  close(err[1]);
  std::string message;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool timed_out = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{err[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[512];
    ssize_t n = read(err[0], buf, sizeof buf);
    if (n <= 0) break;
    if (message.size() < 4096) message.append(buf, static_cast<size_t>(n));
  }
  close(err[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out)
    return {Unavailability::ProbeTimeout, "bwrap did not finish within " + std::to_string(timeout_ms) + " ms"};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  if (message.find('\n') != std::string::npos) message = message.substr(0, message.find('\n'));
  if (read_first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1")
    return {Unavailability::AppArmorRestriction,
            "kernel.apparmor_restrict_unprivileged_userns=1 blocks bwrap (" + message + ")"};
  if (in_container())
    return {Unavailability::ContainerWithoutNamespaces,
            "inside a container that does not allow namespaces (" + message + ")"};
  if (message.find("No permission") != std::string::npos ||
      message.find("Operation not permitted") != std::string::npos)
    return {Unavailability::UserNamespacesDisabled, message};
  return {Unavailability::ProbeFailed, message.empty() ? "bwrap failed" : message};
#endif
}

}  // namespace zpolicy::runner
