#include "runner/backend.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace zpolicy::runner {
namespace {

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

// A backend binary is trusted only if nobody but root can have changed it or any
// directory on its path.
BackendStatus check_binary() {
  struct stat st;
  if (lstat(kBwrapPath, &st) != 0)
    return {Unavailability::NotInstalled, std::string(kBwrapPath) + " does not exist (apt-get install bubblewrap)"};
  if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR) || st.st_size == 0)
    return {Unavailability::NotInstalled, std::string(kBwrapPath) + " is not an executable file"};
  for (const char* p : {kBwrapPath, "/usr/bin", "/usr", "/"}) {
    if (stat(p, &st) != 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
      return {Unavailability::Untrusted,
              std::string(p) + " is not owned by root or is writable by others"};
  }
  return {};
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

BackendStatus preflight() {
#ifndef __linux__
  return {Unavailability::UnsupportedPlatform, "the linux target runs only on Linux"};
#else
  std::string osrelease = read_first_line("/proc/sys/kernel/osrelease");
  if (osrelease.find("Microsoft") != std::string::npos)
    return {Unavailability::Wsl1, "WSL1 has no namespaces; use WSL2"};
  if (auto b = check_binary(); !b.usable()) return b;
  if (read_first_line("/proc/sys/user/max_user_namespaces") == "0")
    return {Unavailability::UserNamespacesDisabled, "sysctl user.max_user_namespaces is 0"};
  if (getuid() != 0 && read_first_line("/proc/sys/kernel/unprivileged_userns_clone") == "0")
    return {Unavailability::UserNamespacesDisabled,
            "sysctl kernel.unprivileged_userns_clone is 0"};
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
    return {Unavailability::SeccompUnavailable, "the kernel has no seccomp filter support"};
  return {};
#endif
}

BackendStatus probe(int timeout_ms) {
  if (auto pre = preflight(); !pre.usable()) return pre;
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
}

}  // namespace zpolicy::runner
