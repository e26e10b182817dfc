#include "runner/child_exec.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

namespace zpolicy::runner {
namespace {

void close_from(int lowest) {
#if defined(__linux__)
  syscall(SYS_close_range, lowest, ~0U, 0);
#else
  for (int fd = lowest, n = static_cast<int>(sysconf(_SC_OPEN_MAX)); fd < n; ++fd) close(fd);
#endif
}

int highest_child_fd(const SpawnSpec& spec) {
  int highest = 2;
  for (const auto& [from, to] : spec.fds) highest = std::max(highest, to);
  return highest;
}

bool is_child_fd(const SpawnSpec& spec, int fd) {
  for (const auto& [from, to] : spec.fds)
    if (to == fd) return true;
  return false;
}

}  // namespace

ChildSetup child_setup(const SpawnSpec& spec, const sigset_t& old_mask) {
  ChildSetup c;
  c.spec = &spec;
  c.old_mask = old_mask;
  c.parent = getpid();
  for (const auto& a : spec.argv) c.argv.push_back(const_cast<char*>(a.c_str()));
  c.argv.push_back(nullptr);
  for (const auto& e : spec.envp) c.envp.push_back(const_cast<char*>(e.c_str()));
  c.envp.push_back(nullptr);
  c.moved.assign(spec.fds.size(), -1);
  c.lingering.assign(spec.linger.size(), -1);
  return c;
}

int place_descriptors(ChildSetup& c, int keep) {
  const SpawnSpec& spec = *c.spec;
  const int highest = highest_child_fd(spec);
  // The numbers after `keep`'s are the lingering copies' own: every source goes above them
  // first, so that no dup2 clobbers a later one.
  const int first_lingering = highest + 2;
  const int scratch = first_lingering + static_cast<int>(spec.linger.size());
  for (size_t i = 0; i < spec.fds.size(); ++i)
    c.moved[i] = fcntl(spec.fds[i].first, F_DUPFD_CLOEXEC, scratch);
  for (size_t i = 0; i < spec.linger.size(); ++i)
    c.lingering[i] = fcntl(spec.linger[i], F_DUPFD_CLOEXEC, scratch);
  const int kept = keep >= 0 ? fcntl(keep, F_DUPFD_CLOEXEC, scratch) : -1;
  for (size_t i = 0; i < spec.fds.size(); ++i)
    if (c.moved[i] < 0 || dup2(c.moved[i], spec.fds[i].second) < 0) return -1;
  // A gap between the targets would hand the child whatever we hold at that number.
  for (int fd = 3; fd <= highest; ++fd)
    if (!is_child_fd(spec, fd)) close(fd);
  if (keep >= 0 && (kept < 0 || dup2(kept, highest + 1) < 0 ||
                    fcntl(highest + 1, F_SETFD, FD_CLOEXEC) != 0))
    return -1;
  for (size_t i = 0; i < spec.linger.size(); ++i) {
    const int at = first_lingering + static_cast<int>(i);
    if (c.lingering[i] < 0 || dup2(c.lingering[i], at) < 0 || fcntl(at, F_SETFD, FD_CLOEXEC) != 0)
      return -1;
  }
  close_from(keep >= 0 ? scratch : highest + 1);
  c.descriptors_placed = true;
  return keep >= 0 ? highest + 1 : highest;
}

int exec_child(void* arg) {
  ChildSetup& c = *static_cast<ChildSetup*>(arg);
  const SpawnSpec& spec = *c.spec;
  if (c.own_group) setpgid(0, 0);
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  if (getppid() != c.parent) _exit(125);  // the runner already died: start nothing
  if (!c.descriptors_placed && place_descriptors(c, -1) < 0) _exit(125);
  close_from(highest_child_fd(spec) + 1);
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) _exit(125);
  // The runner's handlers (runner/supervise.cpp) must not run here once the mask is
  // lifted; an ignored signal stays ignored across the exec, as the caller left it (the
  // runner catches SIGCHLD regardless, so the child gets it at its default).
  for (int s = 1; s < NSIG; ++s) {
    struct sigaction cur;
    if (sigaction(s, nullptr, &cur) != 0) continue;
    const bool handled = (cur.sa_flags & SA_SIGINFO)
                             ? cur.sa_sigaction != nullptr
                             : cur.sa_handler != SIG_IGN && cur.sa_handler != SIG_DFL;
    if (handled) signal(s, SIG_DFL);
  }
  sigprocmask(SIG_SETMASK, &c.old_mask, nullptr);
  execve(spec.exe.c_str(), c.argv.data(), c.envp.data());
  _exit(errno == ENOENT ? 127 : 126);
}

}  // namespace zpolicy::runner
