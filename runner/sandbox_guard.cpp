#include "runner/sandbox_guard.hpp"

#if defined(__linux__)
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runner/bind_stage.hpp"
#include "runner/private_mounts.hpp"
#include "runner/read_only_streams.hpp"
#include "zpolicy/exit_code.hpp"
#endif

namespace zpolicy::runner {

#if defined(__linux__)
namespace {

// Everything in the guard runs in a fork of a process that may have other threads: system
// calls and stack buffers only, no allocation, no lock.

pid_t fork_without_handlers() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  return _Fork();  // no atfork handlers of an embedding program run in the guard
#else
  return fork();
#endif
}

// The parent of process `name` (a decimal pid, an entry of /proc), or 0.
pid_t parent_of(int proc, const char* name) {
  char path[32];
  const size_t len = strnlen(name, 16);
  if (len == 0 || len > 10) return 0;
  std::memcpy(path, name, len);
  std::memcpy(path + len, "/stat", 6);
  const int fd = openat(proc, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return 0;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // "PID (COMM) STATE PPID ...": COMM may hold anything, ')' included.
  const char* close_paren = std::strrchr(buf, ')');
  if (!close_paren || close_paren + 4 >= buf + n) return 0;
  pid_t ppid = 0;
  for (const char* p = close_paren + 4; *p >= '0' && *p <= '9'; ++p) ppid = ppid * 10 + (*p - '0');
  return ppid;
}

bool is_pid(const char* name) {
  if (*name == '\0') return false;
  for (; *name; ++name)
    if (*name < '0' || *name > '9') return false;
  return true;
}

pid_t pid_of(const char* name) {
  pid_t pid = 0;
  for (; *name; ++name) pid = pid * 10 + (*name - '0');
  return pid;
}

// The monitor may reap its child, and the pid be reused, between the look at its parent
// and the signal: the process is pinned (a pidfd) and its parent looked at again first.
void kill_if_child_of(int proc, const char* name, pid_t parent) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_of(name), 0));
  if (pidfd < 0) return;
  if (parent_of(proc, name) == parent) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  close(pidfd);
}

// SIGKILLs the children of `monitor` (the sandbox's init, before its monitor: killing the
// monitor first would let the init run on meanwhile), then the guard's own children
// (the monitor, an orphaned init). Only children are signalled: a child's pid cannot be
// reused before the guard reaps it. False if /proc cannot be read.
bool kill_children(pid_t self, pid_t monitor) {
  const int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return false;
  pid_t own[64];
  size_t owned = 0;
  alignas(8) char buf[4096];
  for (long n; (n = syscall(SYS_getdents64, proc, buf, sizeof buf)) > 0;) {
    for (long off = 0; off < n;) {
      // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
      unsigned short reclen;
      std::memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      off += reclen;
      if (!is_pid(name)) continue;
      const pid_t parent = parent_of(proc, name);
      if (monitor > 0 && parent == monitor) {
        kill_if_child_of(proc, name, monitor);
      } else if (parent == self) {
        if (owned < sizeof own / sizeof own[0])
          own[owned++] = pid_of(name);
        else
          kill(pid_of(name), SIGKILL);
      }
    }
  }
  close(proc);
  for (size_t i = 0; i < owned; ++i) kill(own[i], SIGKILL);
  return true;
}

// Whether the guard has no child left, after reaping those that ended.
bool no_child_left(pid_t& monitor) {
  pid_t r;
  int st;
  while ((r = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
    if (r == monitor) monitor = 0;
  return r < 0 && errno == ECHILD;
}

// Returns once nothing is left below the guard: an init that outlived its monitor is
// reparented to the guard (a child subreaper), so every process left is found among its
// children, and the pid namespace of an init dies with it.
void kill_below(pid_t monitor) {
  const pid_t self = getpid();
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  for (;;) {
    if (no_child_left(monitor)) return;
    // /proc unreadable: the guard's process group holds the monitor and an init before
    // its setsid; the guard dies with them and reports nothing.
    if (!kill_children(self, monitor)) kill(0, SIGKILL);
    const timespec tick{0, 10'000'000};
    sigtimedwait(&child, nullptr, &tick);
  }
}

// Reaps what has ended; true once the monitor is among it (its wait status in `status`).
bool monitor_reaped(pid_t monitor, int& status) {
  bool reaped = false;
  pid_t r;
  int st;
  while ((r = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
    if (r == monitor) {
      status = st;
      reaped = true;
    }
  return reaped;
}

// Signals that do not end the run: a child's end, job control, terminal size.
bool passes(int sig) {
  return sig == SIGCHLD || sig == SIGCONT || sig == SIGWINCH || sig == SIGURG ||
         sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

// SIGKILLs the sandbox's init the runner named on the relay (bwrap's status stream gives
// it the pid), if it is still the guard's child: after the monitor's exit an init is
// reparented to the guard, and nothing else can be below it (the init was the monitor's
// only child, and everything of the command is in the init's pid namespace, which dies
// with it). False when the runner named none (bwrap failed before it had an init, or the
// runner is gone): then only a walk of /proc finds what is left.
bool kill_named_init(int relay, pid_t self) {
  pid_t init = 0;
  if (recv(relay, &init, sizeof init, MSG_DONTWAIT) != static_cast<ssize_t>(sizeof init) || init <= 0)
    return false;
  const int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return false;
  char name[16];
  int len = 0;
  char digits[12];
  for (pid_t p = init; p > 0; p /= 10) digits[len++] = static_cast<char>('0' + p % 10);
  for (int i = 0; i < len; ++i) name[i] = digits[len - 1 - i];
  name[len] = '\0';
  kill_if_child_of(proc, name, self);
  close(proc);
  return true;
}

// Returns when the runner closes its end of the relay (it has removed the run's
// placeholders), or is gone. Meanwhile the guard holds the lingering descriptors
// (SpawnSpec::linger), whose last close, at its exit, is then the guard's and not the
// runner's. A name of the init the runner sent and the guard did not need is read and
// dropped on the way.
void wait_to_be_let_go(int relay) {
  for (;;) {
    pollfd p{relay, POLLIN, 0};
    if (poll(&p, 1, -1) < 0 && errno != EINTR) return;
    char drop[64];
    const ssize_t n = read(relay, drop, sizeof drop);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return;
  }
}

// The guard's child: pins the bind sources (runner/bind_stage.hpp), hands the sandbox its
// device streams through read-only mounts (runner/read_only_streams.hpp), then execs bwrap. A
// failure is said on the run's standard error and marked in `c` (the child shares the
// guard's memory), and nothing starts.
int stage_then_exec(void* setup) {
  ChildSetup& c = *static_cast<ChildSetup*>(setup);
  const char* path = nullptr;
  if (const char* why = stage_bind_sources(c.spec->staged, c.spec->protections, path)) {
    static constexpr char kWhat[] = "zpolicy: cannot pin the bind sources where bwrap mounts them";
    static constexpr char kAt[] = ": '";
    static constexpr char kThen[] = "': ";
    iovec message[] = {{const_cast<char*>(kWhat), sizeof kWhat - 1},
                       {const_cast<char*>(path ? kAt : ": "), path ? sizeof kAt - 1 : 2},
                       {const_cast<char*>(path ? path : ""), path ? strlen(path) : 0},
                       {const_cast<char*>(path ? kThen : ""), path ? sizeof kThen - 1 : 0},
                       {const_cast<char*>(why), strlen(why)},
                       {const_cast<char*>("\n"), 1}};
    [[maybe_unused]] ssize_t n = writev(STDERR_FILENO, message, 6);
    c.staging_failed = true;
    _exit(kExitInternal);
  }
  int stream = 0;
  if (const char* why = reopen_read_only(c.spec->read_only_streams, stream)) {
    static constexpr char kWhat[] = "zpolicy: cannot hand the sandbox ";
    static constexpr char kHow[] =
        " through a read-only mount of its device (the sandbox could change the device on the "
        "host through the caller's own descriptor): ";
    static constexpr char kThen[] = "; give the command a pipe instead\n";
    static const char* const kNames[] = {"stdin", "stdout", "stderr"};
    const char* name = stream >= 0 && stream <= 2 ? kNames[stream] : "a standard stream";
    iovec message[] = {{const_cast<char*>(kWhat), sizeof kWhat - 1},
                       {const_cast<char*>(name), strlen(name)},
                       {const_cast<char*>(kHow), sizeof kHow - 1},
                       {const_cast<char*>(why), strlen(why)},
                       {const_cast<char*>(kThen), sizeof kThen - 1}};
    [[maybe_unused]] ssize_t n = writev(STDERR_FILENO, message, 5);
    c.staging_failed = true;
    _exit(kExitInternal);
  }
  return exec_child(setup);
}

[[noreturn]] void guard(ChildSetup& c, int relay) {
  setpgid(0, 0);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != c.parent) _exit(kExitInternal);  // the runner died before it was armed
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) _exit(kExitInternal);
  // Blocked, so taken by sigwaitinfo; SIGCHLD must not be ignored (children auto-reaped).
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, nullptr);
  relay = place_descriptors(c, relay);
  if (relay < 0) _exit(kExitInternal);
  if (const char* why = enter_private_mount_namespace()) {
    static constexpr char kWhat[] =
        "zpolicy: cannot give the sandbox a mount namespace the host's later mounts do not "
        "reach: ";
    iovec message[] = {{const_cast<char*>(kWhat), sizeof kWhat - 1},
                       {const_cast<char*>(why), strlen(why)},
                       {const_cast<char*>("\n"), 1}};
    [[maybe_unused]] ssize_t n = writev(STDERR_FILENO, message, 3);
    _exit(kExitInternal);
  }
  c.parent = getpid();
  c.own_group = false;
  alignas(16) char stack[32 * 1024];
  // In a mount namespace of its own, where it pins the bind sources: the guard's stays
  // what the runner's looks read (/proc/GUARD/root, /proc/GUARD/mountinfo).
  const pid_t monitor = clone(stage_then_exec, stack + sizeof stack,
                              CLONE_VM | CLONE_VFORK | CLONE_NEWNS | SIGCHLD, &c);
  // Standard streams included: a caller reading the command's output until its end must
  // not wait for the guard.
  syscall(SYS_close_range, 0U, static_cast<unsigned>(relay - 1), 0U);
  // Back from the vfork: the child has exec'd bwrap or exited. Staging failed: nothing
  // started, and the runner is told so by the guard's exit without a report.
  if (monitor < 0 || c.staging_failed) _exit(kExitInternal);
  int status = 0;
  for (;;) {
    siginfo_t si;
    const int sig = sigwaitinfo(&all, &si);
    if (sig < 0) continue;
    if (sig == SIGCHLD && monitor_reaped(monitor, status)) {
      // bwrap's monitor exits as soon as the command has, its init still on its way out
      // (a namespace's teardown takes milliseconds): what is left is SIGKILLed and left to
      // die wherever it is reparented next, not waited for.
      pid_t none = 0;
      if (!no_child_left(none) && !kill_named_init(relay, getpid()) &&
          !kill_children(getpid(), 0))
        kill_below(0);
      break;
    }
    if (passes(sig)) continue;
    kill_below(monitor);
    status = sig;  // the wait status of a process killed by `sig`
    break;
  }
  [[maybe_unused]] ssize_t n = write(relay, &status, sizeof status);
  wait_to_be_let_go(relay);
  _exit(0);
}

}  // namespace

pid_t start_guard(ChildSetup& c, int relay) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = fork_without_handlers();
  if (pid == 0) guard(c, relay);
  if (pid > 0) setpgid(pid, pid);  // also done in the guard; whichever runs first wins
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return pid;
}

void tell_guard_init(int relay, pid_t init) {
  [[maybe_unused]] ssize_t n = send(relay, &init, sizeof init, MSG_DONTWAIT | MSG_NOSIGNAL);
}

std::optional<int> relayed_status(int relay_read) {
  int status;
  ssize_t n;
  while ((n = read(relay_read, &status, sizeof status)) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof status)) return std::nullopt;
  return status;
}
#else
pid_t start_guard(ChildSetup&, int) { return -1; }
void tell_guard_init(int, pid_t) {}
std::optional<int> relayed_status(int) { return std::nullopt; }
#endif

}  // namespace zpolicy::runner
