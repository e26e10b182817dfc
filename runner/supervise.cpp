#include "runner/supervise.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "runner/child_exec.hpp"
#include "runner/job_control.hpp"
#include "runner/sandbox_guard.hpp"
#include "zpolicy/exit_code.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

namespace zpolicy::runner {
namespace {

using Clock = std::chrono::steady_clock;

// Forwarded to the command (INT, TERM, HUP) or taken (CHLD), and every other signal whose
// default action ends the process and that can be caught: left at its default, any of
// them killed zpolicy with the caller's terminal as the sandbox had set it (`stty -echo
// -icanon` outlived the run after SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGXCPU, SIGVTALRM:
// red team H17-9). All but CHLD are handled only while at their default: one the caller
// left ignored stays ignored, for zpolicy and, across the exec, for the command (`nohup
// zpolicy run -- make`: a hangup once killed the build), and an embedder's own handler (a
// profiler's SIGPROF, a runtime's SIGUSR2) stays its own. The faults (SEGV, BUS, FPE, ILL,
// ABRT, TRAP, SYS) are zpolicy's own and are not caught. SIGTSTP (^Z), SIGTTIN and SIGTTOU
// are taken on the same terms, to stop the sandbox with zpolicy (`suspend`), and SIGCONT to
// hold it stopped while zpolicy is a background job of the terminal on its stdin.
const std::vector<int>& watched() {
  static const std::vector<int> v = [] {
    std::vector<int> out{SIGINT,  SIGTERM, SIGHUP,  SIGCHLD,   SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
                         SIGPIPE, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO,   SIGTSTP,
                         SIGTTIN, SIGTTOU, SIGCONT};
#if defined(__linux__)
    out.insert(out.end(), {SIGPWR, SIGSTKFLT});
    for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) out.push_back(s);
#endif
    return out;
  }();
  return v;
}

// SIGCHLD is caught even when the caller left it ignored: ignored, the kernel would reap
// the child before the supervision loop could read its status.
bool always_caught(int sig) { return sig == SIGCHLD; }

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : watched()) sigaddset(&set, s);
  return set;
}

// The signal mask the outermost live HeldSignals of this thread found, which supervise()
// gives its child and puts in place while it supervises; `g_holds` counts them.
thread_local int g_holds = 0;
thread_local sigset_t g_unheld_mask;

// The self-pipe: the handler writes the signal number, the supervision loop polls the
// read end. Plain POSIX, so that Linux and macOS supervise through the same code.
int g_signal_pipe = -1;

void on_signal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = write(g_signal_pipe, &b, 1);
  errno = saved;
}

bool is_stop_signal(int sig) { return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

// Empties the signal pipe (its read end `sfd`) of the stop signals a stop answers and puts
// the others back, in order. With `keep_after_continue`, a stop signal that came after the
// last SIGCONT is not answered: the kernel discards a pending stop signal when SIGCONT is
// sent, so the stop being answered was overtaken by that SIGCONT, and one sent after it is
// a stop of its own. Returns whether a SIGCONT was in the pipe.
bool drop_stop_signals(int sfd, bool keep_after_continue) {
  std::string got;
  for (unsigned char b; read(sfd, &b, 1) == 1;) got += static_cast<char>(b);
  const size_t last_continue = got.rfind(static_cast<char>(SIGCONT));
  const size_t answered =
      keep_after_continue && last_continue != std::string::npos ? last_continue : got.size();
  std::string kept;
  for (size_t i = 0; i < got.size(); ++i)
    if (i >= answered || !is_stop_signal(static_cast<unsigned char>(got[i]))) kept += got[i];
  if (!kept.empty()) {
    [[maybe_unused]] ssize_t n = write(g_signal_pipe, kept.data(), kept.size());
  }
  return last_continue != std::string::npos;
}

bool nonblocking_cloexec_pipe(int fds[2]) {
  if (pipe(fds) != 0) return false;
  for (int i = 0; i < 2; ++i)
    if (fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK) != 0) {
      close(fds[0]);
      close(fds[1]);
      return false;
    }
  return true;
}

// The runner's link to its guard (Linux only: elsewhere nothing is guarded).
bool guard_relay(int fds[2]) {
#if defined(__linux__)
  return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) == 0;
#else
  (void)fds;
  return false;
#endif
}

// On Linux the child starts the way posix_spawn starts one (CLONE_VM | CLONE_VFORK): no
// copy of our page tables and no copy-on-write faults on either side, which fork() cost
// on every run. The child has its own file table and signal dispositions; we are
// suspended until it has exec'd or exited, so it is in its process group before anything
// can signal that group. posix_spawn itself cannot set PR_SET_PDEATHSIG. Elsewhere, fork.
pid_t start_child(ChildSetup& c) {
#if defined(__linux__)
  // The child runs on this buffer, inside our own frame, which is suspended meanwhile.
  alignas(16) char stack[32 * 1024];
  return clone(exec_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
#else
  pid_t pid = fork();
  if (pid == 0) _exit(exec_child(&c));
  if (pid > 0) setpgid(pid, pid);  // also done in the child; whichever runs first wins
  return pid;
#endif
}

std::string ns_of(pid_t pid) {
  char buf[64];
  std::string link = "/proc/" + std::to_string(pid) + "/ns/pid";
  ssize_t n = readlink(link.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// The sandbox's init, once bwrap has named it, pinned: its pid is any process's once
// bwrap's monitor has reaped it, and zpolicy acts on the run a while longer (until the
// guard reports; a signal then, its re-sends every millisecond, the kill of a second signal
// and of the tree's end, 2 s more when the monitor is slow to report). Signalled by pid, a
// reused one killed a host process (with SIGKILL; by root's run, any process), or, taken
// for the init of another run's sandbox, that sandbox's processes (red team A29A-2). So it
// is signalled through a pidfd, and its pid namespace, held open, cannot be recycled for
// another namespace that processes of /proc would then be taken as the sandbox's for.
class SandboxInit {
 public:
  SandboxInit() = default;
  SandboxInit(const SandboxInit&) = delete;
  SandboxInit& operator=(const SandboxInit&) = delete;
  ~SandboxInit() {
    if (pidfd_ >= 0) close(pidfd_);
    if (ns_fd_ >= 0) close(ns_fd_);
  }
  // Once, when bwrap names it: false when it cannot be pinned, nor is it then ever
  // signalled; refused() tells a pid that is not (or cannot be shown to be) the init's
  // from an init gone already. Only a descendant of `ancestor` (the child zpolicy started,
  // whose pid no other process can have) in a pid namespace of its own is taken: named to
  // a zpolicy that read the name late (stopped meanwhile), the pid may be another's.
  bool pin(pid_t pid, pid_t ancestor) {
    pid_ = pid;
#if defined(__linux__)
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd_ < 0) {
      refused_ = errno != ESRCH;
      return false;
    }
    const std::string link = "/proc/" + std::to_string(pid) + "/ns/pid";
    ns_fd_ = open(link.c_str(), O_RDONLY | O_CLOEXEC);
    ns_ = ns_of(pid);
    const bool own_namespace = !ns_.empty() && ns_ != ns_of(getpid());
    bool descends = false;
    for (auto up = process_stat(std::to_string(pid)); up && up->parent > 1 && !descends;
         up = process_stat(std::to_string(up->parent)))
      descends = up->parent == ancestor;
    // Still alive once its namespace is open and named, and its parents looked at: they
    // were the init's.
    const bool gone = !alive();
    if (gone || ns_fd_ < 0 || !own_namespace || !descends) {
      refused_ = !gone;
      close(pidfd_);
      pidfd_ = -1;
      return false;
    }
    return true;
#else
    (void)ancestor;
    refused_ = true;
    return false;
#endif
  }
  bool refused() const { return refused_; }
  bool pinned() const { return pidfd_ >= 0; }
  pid_t pid() const { return pid_; }
  bool alive() const {
    pollfd exited{pidfd_, POLLIN, 0};
    return pidfd_ >= 0 && poll(&exited, 1, 0) == 0;
  }
  bool signal(int sig) const {
#if defined(__linux__)
    return pidfd_ >= 0 && syscall(SYS_pidfd_send_signal, pidfd_, sig, nullptr, 0) == 0;
#else
    (void)sig;
    return false;
#endif
  }
  // Its pid namespace (bwrap's --unshare-pid), not zpolicy's: every process of it is the
  // sandbox's.
  const std::string& ns() const { return ns_; }

 private:
  pid_t pid_ = 0;
  int pidfd_ = -1;
  int ns_fd_ = -1;  // the namespace, held so that its name stays its own
  std::string ns_;
  bool refused_ = false;
};

// Sends `sig` to `pid` if it is a process of pid namespace `ns` (which the caller holds
// open), through a pidfd opened before the namespace is looked at again: by number, a
// process of the sandbox that ended between the look and the kill left its pid to any new
// process, and a host process that took it got the signal (red team A29A-4; attack 20's
// note). Whether it was sent.
bool signal_if_in(pid_t pid, const std::string& ns, int sig) {
  if (ns_of(pid) != ns) return false;
#if defined(__linux__)
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;
  const bool sent = ns_of(pid) == ns && syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0;
  close(pidfd);
  return sent;
#else
  (void)sig;
  return false;
#endif
}

// Every process in the sandbox's pid namespace except its init, which only takes the
// signals it has handlers for and is not the command. Whether any process got it.
bool signal_sandbox(const SandboxInit& init, int sig) {
  if (!init.alive()) return false;
  DIR* d = opendir("/proc");
  if (!d) return false;
  bool delivered = false;
  while (dirent* e = readdir(d)) {
    char* end;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || pid == init.pid()) continue;
    if (signal_if_in(static_cast<pid_t>(pid), init.ns(), sig)) delivered = true;
  }
  closedir(d);
  return delivered;
}

// The state letter of /proc/PATH/stat ('R', 'S', 'D', 'T' ...), or 0 when gone.
char state_at(const std::string& path) {
  const std::string fields = stat_fields(path);
  return fields.empty() ? 0 : fields[0];
}

// Whether SIGSTOP is pending for the whole of process `pid` (/proc/PID/status ShdPnd).
bool stop_pending(const std::string& path) {
  char buf[2048];
  const int fd = open((path + "/status").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  const char* at = std::strstr(buf, "\nShdPnd:");
  return at && (std::strtoull(at + 8, nullptr, 16) >> (SIGSTOP - 1)) & 1;
}

bool stopped_or_gone(long pid) {
  const std::string path = "/proc/" + std::to_string(pid);
  const char state = state_at(path);
  if (!state || state == 'X') return true;
  // Every thread: one that runs, or sleeps where a signal wakes it, is not stopped yet (the
  // main thread's state alone passed a process whose other threads still ran). A main
  // thread that has exited (a plain exit(2), not exit_group) is a zombie while the others
  // run on: taken for a gone process, such a process was never stopped, and ran on and read
  // the terminal after ^Z (red team A20-1).
  DIR* d = opendir((path + "/task").c_str());
  if (!d) return state == 'Z' || state == 'T' || state == 't';
  bool waiting = false, stopped = false, running = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const char s = state_at(path + "/task/" + e->d_name);
    if (s == 'D')
      waiting = true;
    else if (s == 'T' || s == 't')
      stopped = true;
    else if (s && s != 'Z' && s != 'X')
      running = true;
  }
  closedir(d);
  if (running) return false;
  // A thread in an uninterruptible wait runs no code of its own, and stops before it does
  // if a SIGSTOP is pending or a stop of its threads is under way (another one stopped). A
  // vfork parent (posix_spawn: make, ninja, every runtime's subprocess) whose child was
  // stopped before its exec waits so for good: counted as running, it made every ^Z of a
  // build that starts programs kill the sandbox as one that could not be stopped (red
  // team A19-7).
  return !waiting || stopped || stop_pending(path);
}

// Stops every process in the sandbox's pid namespace, as signal_sandbox signals them,
// walking again until a walk finds none running: a process forked before its parent was
// stopped is stopped by the next walk. The init too, first (SIGSTOP reaches a namespace's
// init from its parent namespace): between the release and its fork of the command (the
// first milliseconds) it is the sandbox's only process, and a ^Z then stopped nothing, so
// the command started while zpolicy was stopped and ran on unsupervised, past its timeout,
// reading the terminal (red team A29A-1). False when processes still ran after a bounded
// number of walks (or /proc could not be read).
bool stop_sandbox(const SandboxInit& init) {
  if (!init.signal(SIGSTOP)) return !init.alive();
  for (int walk = 0; walk < 64; ++walk) {
    bool running = false;
    DIR* d = opendir("/proc");
    if (!d) return false;
    while (dirent* e = readdir(d)) {
      char* end;
      long pid = std::strtol(e->d_name, &end, 10);
      if (*end || pid <= 0 || pid == init.pid() || stopped_or_gone(pid)) continue;
      if (ns_of(static_cast<pid_t>(pid)) != init.ns()) continue;
      running = true;
      signal_if_in(static_cast<pid_t>(pid), init.ns(), SIGSTOP);
    }
    closedir(d);
    if (!running) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

// bwrap's status stream: {"child-pid": N ...} once the sandbox init exists (before its
// setup; the init waits for the monitor to write this), then {"exit-code": N} only if
// setup finished and the command was exec'd (bubblewrap.c, report_child_exit_status).
struct StatusStream {
  std::string text;
  bool open = false;
  int fd = -1;
  pid_t child_pid() const {
    auto at = text.find("\"child-pid\":");
    return at == std::string::npos ? 0 : static_cast<pid_t>(std::atol(text.c_str() + at + 12));
  }
  bool exec_reported() const { return text.find("\"exit-code\":") != std::string::npos; }
  // Reads what is there now (the descriptor is non-blocking).
  void drain() {
    char buf[256];
    while (open) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        if (text.size() < 4096) text.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      open = false;  // end of the stream, or an error
    }
  }
};

// Whether descriptor `fd` (0-2, of device `rdev`) reaches the command, as it is or opened
// again: not when it is replaced (a pipe, /dev/null in its place).
bool reaches_command(const SpawnSpec& spec, int fd, dev_t rdev) {
  for (const auto& [here, there] : spec.fds)
    if (there == fd) return false;
  for (const auto& s : spec.read_only_streams)
    if (s.fd == fd && s.rdev != rdev) return false;
  return true;
}

// The state of every terminal among stdin, stdout and stderr, put back after the run: a
// sandboxed `stty -echo -icanon` must not outlive it. Nor may what the command can change
// on the caller's terminal besides its settings, with the ioctls any holder of the
// descriptor may use (red team A11-1): the line discipline (TIOCSETD to N_NULL left a
// terminal whose reads and writes fail, so the caller's shell exited), exclusive mode
// (TIOCEXCL: the caller's next open of the terminal, a `sudo` asking for a password, failed
// EBUSY) and stopped output (tcflow TCOOFF: the terminal showed nothing more, and zpolicy's
// own last line blocked it forever). Each terminal once, by device. Only a terminal the
// command holds: one it never got (a run started in the background reads /dev/null and
// writes through a pipe zpolicy copies; another window's terminal given for output, red
// team A19-1, A19-6) is the foreground program's to set, and putting back what it was at
// the start turned echo on under a `sudo` password prompt when a background run ended (red
// team A20-4).
class TerminalSettings {
 public:
  explicit TerminalSettings(const SpawnSpec& spec) {
    for (int fd = 0; fd <= 2; ++fd) {
      struct stat st;
      Saved s{fd, 0, {}, N_TTY, 0};
      if (!isatty(fd) || fstat(fd, &st) != 0 || !reaches_command(spec, fd, st.st_rdev) ||
          tcgetattr(fd, &s.settings) != 0)
        continue;
      bool seen = false;
      for (const auto& o : saved_) seen |= o.device == st.st_rdev;
      if (seen) continue;
      s.device = st.st_rdev;
      ioctl(fd, TIOCGETD, &s.line_discipline);
      ioctl(fd, TIOCGEXCL, &s.exclusive);
      saved_.push_back(s);
    }
  }
  // From a background process group these calls would stop us with SIGTTOU; blocked, the
  // kernel lets them through. Output is restarted whatever it was before: nothing tells
  // whether it was stopped, and a terminal stopped by its user starts again with ^Q anyway.
  void restore() const {
    if (saved_.empty()) return;
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, &old);
    for (const auto& s : saved_) {
      int now = s.line_discipline;
      if (ioctl(s.fd, TIOCGETD, &now) == 0 && now != s.line_discipline)
        ioctl(s.fd, TIOCSETD, &s.line_discipline);
      while (tcsetattr(s.fd, TCSANOW, &s.settings) != 0 && errno == EINTR) {
      }
      tcflow(s.fd, TCOON);
      if (!s.exclusive) ioctl(s.fd, TIOCNXCL);
    }
    sigprocmask(SIG_SETMASK, &old, nullptr);
  }
  // Unless another process group is the foreground one of a terminal that is zpolicy's
  // controlling terminal (`bg`). On another terminal (`setsid zpolicy run`, an orphaned
  // process group the kernel never stopped) nothing else has it from zpolicy.
  void restore_in_foreground() const {
    for (const auto& s : saved_) {
      const pid_t foreground = tcgetpgrp(s.fd);
      if (foreground >= 0 && foreground != getpgrp()) return;
    }
    restore();
  }

 private:
  struct Saved {
    int fd;
    dev_t device;
    termios settings;
    int line_discipline;
    int exclusive;
  };
  std::vector<Saved> saved_;
};

// The file status flags of stdin, stdout and stderr, put back after the run. A pipe or
// socket on 0-2 reaches the command as the caller's own open file (a terminal or device is
// opened again, runner/read_only_streams.hpp), so what the command sets with F_SETFL is set
// on the caller's: `O_NONBLOCK` outlived the run, and the next writer into the caller's
// pipe (`{ zpolicy run …; other; } | consumer`) got EAGAIN (red team R18-5).
// A pipe's capacity is the pipe's, not the open file's, and outlives the run the same way:
// `F_SETPIPE_SZ` shrank the caller's stdout pipe from 64 KiB to 4 KiB for every later
// writer into it (red team A28A-2); it is put back too (a shrink back fails EBUSY while more
// than the old capacity is queued, which only the sandbox's growth made possible).
// Not those of a descriptor the command never got (replaced by a pipe or /dev/null): what
// another program sharing the caller's open file set meanwhile is its own (red team A20-4).
class StreamFlags {
 public:
  explicit StreamFlags(const SpawnSpec& spec) {
    for (int fd = 0; fd <= 2; ++fd) {
      struct stat st;
      const bool reaches = fstat(fd, &st) == 0 && reaches_command(spec, fd, st.st_rdev);
      flags_[fd] = reaches ? fcntl(fd, F_GETFL) : -1;
      pipe_size_[fd] = reaches && S_ISFIFO(st.st_mode) ? fcntl(fd, F_GETPIPE_SZ) : -1;
    }
  }
  void restore() const {
    for (int fd = 0; fd <= 2; ++fd) {
      if (flags_[fd] >= 0 && fcntl(fd, F_GETFL) != flags_[fd]) fcntl(fd, F_SETFL, flags_[fd]);
      if (pipe_size_[fd] > 0 && fcntl(fd, F_GETPIPE_SZ) != pipe_size_[fd])
        fcntl(fd, F_SETPIPE_SZ, pipe_size_[fd]);
    }
  }

 private:
  int flags_[3];
  int pipe_size_[3];
};

// Reaps `pid` now if it has exited, else on a thread of its own that waits for it (it
// exits as soon as it is let go); only without a thread does the caller wait.
void reap_when_gone(pid_t pid) {
  if (waitpid(pid, nullptr, WNOHANG) != 0) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    std::thread([pid] {
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }).detach();
  } catch (const std::system_error&) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// How long bwrap's monitor gets to report after the sandbox's init was killed, before
// its whole process group is killed too.
constexpr auto kReportGrace = std::chrono::seconds(2);

constexpr int kForegroundLookMs = static_cast<int>(kForegroundLook.count());

// How often a forwarded signal that found no process of the command yet is sent again: the
// init forks the command within milliseconds of its release.
constexpr int kUndeliveredLookMs = 1;

int ms_until(Clock::time_point t, Clock::time_point now) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - now).count();
  return static_cast<int>(std::clamp<long long>(left, 1, 1 << 30));
}

// Stops zpolicy as `sig`'s default action would, the command (stopped or not yet
// released) with it; with `group`, its whole process group, as the kernel stops a
// background reader's: a script that runs zpolicy waits in the same group, and stopped
// alone zpolicy was a job its shell saw running, whose `fg` sends no SIGCONT (red team
// A19-5: the job hung after `bg`, `fg`).
void stop_self(int sig, bool group) {
  struct sigaction dfl = {}, ours = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, &ours);
  if (group)
    kill(0, sig);
  else
    raise(sig);
  sigaction(sig, &ours, nullptr);
}

// The stop signal to stop with: left blocked by the caller (a signal mask is inherited
// across exec), the hold's SIGTTIN stopped nothing: it was raised again and again, a CPU
// spun while the shell showed the job running, and `jobs` could not tell (red team A20-3).
// SIGSTOP cannot be blocked.
int unblocked(int sig) {
  sigset_t mask;
  return pthread_sigmask(SIG_BLOCK, nullptr, &mask) == 0 && sigismember(&mask, sig) ? SIGSTOP : sig;
}

// The signals zpolicy takes while it supervises (watched()), through the self-pipe, and
// the caller's dispositions and signal mask, put back afterwards.
class CaughtSignals {
 public:
  // Makes the pipe and installs the handler, the signals blocked (false, and nothing
  // changed, when the pipe cannot be made). Blocked until the child exists, so that the
  // child starts with them blocked and resets their handlers before anything can be
  // delivered to it.
  bool take() {
    if (!nonblocking_cloexec_pipe(pipe_)) return false;
    sigset_t set = watched_signals();
    sigprocmask(SIG_BLOCK, &set, &found_mask_);
    // Under a hold the mask found has the held signals blocked; the caller's is the one
    // the hold found, and a signal pending since reaches the handler at unblock().
    old_mask_ = g_holds > 0 ? g_unheld_mask : found_mask_;
    g_signal_pipe = pipe_[1];
    struct sigaction act = {};
    old_act_.resize(watched().size());
    act.sa_handler = on_signal;
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_RESTART;
    for (size_t i = 0; i < watched().size(); ++i) {
      sigaction(watched()[i], nullptr, &old_act_[i]);
      if (always_caught(watched()[i]) ||
          (!(old_act_[i].sa_flags & SA_SIGINFO) && old_act_[i].sa_handler == SIG_DFL))
        sigaction(watched()[i], &act, nullptr);
    }
    return true;
  }
  // Once the child exists.
  void unblock() const { sigprocmask(SIG_SETMASK, &old_mask_, nullptr); }
  // The mask first: under a hold, a signal from here on waits for the hold's end instead
  // of meeting the default action put back before the run's cleanup and status are done.
  void restore() {
    sigprocmask(SIG_SETMASK, &found_mask_, nullptr);
    for (size_t i = 0; i < watched().size(); ++i) sigaction(watched()[i], &old_act_[i], nullptr);
    g_signal_pipe = -1;
    close(pipe_[0]);
    close(pipe_[1]);
  }
  int read_end() const { return pipe_[0]; }
  const sigset_t& old_mask() const { return old_mask_; }

 private:
  int pipe_[2] = {-1, -1};
  sigset_t found_mask_;  // at take(), put back by restore()
  sigset_t old_mask_;    // the caller's: the child's, and ours while we supervise
  std::vector<struct sigaction> old_act_;
};

}  // namespace

HeldSignals::HeldSignals() {
  sigset_t held;
  sigemptyset(&held);
  for (int s : watched()) {
    struct sigaction cur;
    if (always_caught(s) || is_stop_signal(s) || s == SIGCONT || sigaction(s, nullptr, &cur) != 0)
      continue;
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL) sigaddset(&held, s);
  }
  pthread_sigmask(SIG_BLOCK, &held, &found_);
  if (g_holds++ == 0) g_unheld_mask = found_;
}

HeldSignals::~HeldSignals() {
  --g_holds;
  pthread_sigmask(SIG_SETMASK, &found_, nullptr);
}

namespace {

// The child started: the guard when guarded (and zpolicy's end of the relay to it, both
// ways: the guard reports on it, and is told the sandbox's init on it), else the child itself.
struct Started {
  pid_t pid;
  int relay = -1;
};

// None when the child could not be started; the signals are put back then.
std::optional<Started> start_supervised(const SpawnSpec& spec, CaughtSignals& signals) {
  ChildSetup child = child_setup(spec, signals.old_mask());
  int relay[2] = {-1, -1};
  if (spec.guarded && !guard_relay(relay)) {
    signals.restore();
    return std::nullopt;
  }
  const pid_t pid = spec.guarded ? start_guard(child, relay[1]) : start_child(child);
  if (relay[1] >= 0) close(relay[1]);
  if (pid < 0) {
    if (relay[0] >= 0) close(relay[0]);
    signals.restore();
    return std::nullopt;
  }
  return Started{pid, relay[0]};
}

// The supervision of a started child, until it is done (watch), what is left of its tree
// killed (end_tree), and what it came to (outcome).
class Supervision {
 public:
  Supervision(const SpawnSpec& spec, const TerminalSettings& terminal, int sfd, Started started)
      : spec_(spec),
        terminal_(terminal),
        sfd_(sfd),
        pid_(started.pid),
        relay_(started.relay),
        relay_open_(relay_ >= 0),
        released_(!spec.release) {
    status_.fd = spec.status_fd;
    status_.open = spec.status_fd >= 0;
  }

  void watch() {
    while (!done_) {
      const auto now = Clock::now();
      check_deadline(now);
      end_graces(now);
      pollfd fds[4] = {{sfd_, POLLIN, 0},
                       {status_.open ? status_.fd : -1, POLLIN, 0},
                       {out_.tripped ? -1 : spec_.tripwire_fd, POLLIN, 0},
                       {relay_open_ ? relay_ : -1, POLLIN, 0}};
      poll(fds, 4, wait_ms(now));
      if (fds[1].revents) drain();
      if (fds[3].revents) take_report();
      // The guard signals only a child of its own by the name: no pin needed.
      if (relay_ >= 0 && !guard_told_)
        if (pid_t init = status_.child_pid()) {
          tell_guard_init(relay_, init);
          guard_told_ = true;
        }
      take_signals();
      forward_undelivered();
      // Left in the background with no stop and no SIGCONT to say so (red team A19-3): held
      // as after `bg`, or, in the orphaned process group such a job usually is, killed.
      if (!out_.killed_by_signal && hold_in_background()) suspend(hold_signal(), true);
      if (fds[2].revents) check_tripwire();
      if (spec_.on_started && !started_hook_ran_ && !out_.signal && !timed_out_ && !out_.tripped &&
          init_.pinned()) {
        started_hook_ran_ = true;
        start_command(init_.pid());
      }
      if (waitpid(pid_, &wstatus_, WNOHANG) == pid_) done_ = reaped_ = true;
    }
  }

  void end_tree() {
    // A guard that exited wrote whatever it reported before.
    if (relay_open_ && !relayed_) relayed_ = relayed_status(relay_);
    drain();  // the monitor is gone: whatever it wrote is in the pipe
    // A guard that reported left nothing below it. Otherwise (no guard, or a guard killed
    // itself) make sure nothing of the tree survives: the group, and the init, which leaves
    // the group (bwrap's setsid) once it is released.
    if (!relayed_) {
      init_.signal(SIGKILL);
      kill(-pid_, SIGKILL);
    }
  }

  // What the run came to, once the guard is let go and the child reaped.
  Outcome outcome() {
    if (relayed_ && spec_.reported) spec_.reported();
    if (relay_ >= 0) close(relay_);  // lets the guard go (runner/sandbox_guard.hpp)
    if (!reaped_) reap_when_gone(pid_);
    out_.started = status_.child_pid() != 0;
    out_.released = released_;
    out_.setup_finished = status_.exec_reported();
    if (relayed_) wstatus_ = *relayed_;
    if (timed_out_) {
      out_.kind = Outcome::Kind::TimedOut;
    } else if (spec_.guarded && !relayed_ && WIFEXITED(wstatus_)) {
      out_.kind = Outcome::Kind::SpawnFailed;  // the guard could not start bwrap
    } else if (WIFEXITED(wstatus_)) {
      out_.kind = Outcome::Kind::Exited;
      out_.code = WEXITSTATUS(wstatus_);
    } else {
      out_.kind = Outcome::Kind::Signaled;
      out_.code = WTERMSIG(wstatus_);
    }
    return out_;
  }

 private:
  // The guard's report: bwrap's monitor is gone and nothing is left below the guard, which
  // then waits to be let go (it holds spec.linger): the run ends here, not at its exit.
  void take_report() {
    int st;
    const ssize_t n = read(relay_, &st, sizeof st);
    if (n == static_cast<ssize_t>(sizeof st)) {
      relayed_ = st;
      done_ = true;
    }
    if (n >= 0 || (errno != EAGAIN && errno != EINTR)) relay_open_ = false;
  }

  // Kills the sandbox through its init when bwrap has named it: the pid namespace dies
  // with it, and bwrap's monitor, alive, still reports whether the command was exec'd.
  // Without an init (not started yet, or no bwrap) the whole process group is killed.
  void kill_sandbox() {
    undelivered_ = 0;
    drain();
    if (init_.pinned()) {
      init_.signal(SIGKILL);
      if (!grace_until_) grace_until_ = Clock::now() + kReportGrace;
    } else {
      signal_all(SIGKILL);
    }
  }

  // Every process of the sandbox but its init (which is not the command), or the process
  // group before bwrap has named an init, or without one (an unconfined command) that
  // group or, once it is gone, the child: a command that moved to another process group
  // (setpgid) was signalled through its empty group alone, ESRCH, so a forwarded signal
  // and the timeout's SIGTERM and SIGKILL reached nothing, and it ran past its timeout (red
  // team A29D-3). Unreaped, the child's pid is its own.
  bool signal_all(int sig) {
    if (init_.pinned()) return signal_sandbox(init_, sig);
    if (kill(-pid_, sig) == 0) return true;
    return errno == ESRCH && !reaped_ && kill(pid_, sig) == 0;
  }

  // bwrap's status stream, read; the init it names is pinned at once (SandboxInit). One
  // that cannot be pinned is neither released nor ever signalled (a pid no longer the
  // init's, named to a zpolicy that was stopped meanwhile): the tree is killed through its
  // process group (the init dies with its monitor, --die-with-parent). One gone already
  // (bwrap's setup failed) is left to the monitor's report.
  void drain() {
    status_.drain();
    const pid_t init = status_.child_pid();
    if (!init || init_named_) return;
    init_named_ = true;
    if (init_.pin(init, pid_) || !init_.refused()) return;
    if (!released_) out_.start_refused = true;
    if (!reaped_) kill(-pid_, SIGKILL);
  }

  // A signal for the command, once it is released. Between the release and the init's fork
  // of the command (milliseconds) the sandbox holds only its init, which is not signalled:
  // a SIGTERM then reached nobody, counted as forwarded, and the command ran to its end
  // with exit 0 (red team A28D-4). Such a signal is kept and sent again on each look until
  // a process of the command takes it. Only then: without an init (an unconfined command)
  // a kill that failed fails again on each look (EPERM for a setuid command's processes),
  // and its re-sends every millisecond kept zpolicy busy to the run's end (A29D-3).
  void forward(int sig) {
    if (!signal_all(sig) && init_.pinned()) undelivered_ = sig;
  }

  void forward_undelivered() {
    if (undelivered_ && signal_all(undelivered_)) undelivered_ = 0;
  }

  // Before the release nothing of the command exists to get a SIGTERM or a forwarded
  // signal: the run ends there, and the sandbox with it.
  void check_deadline(Clock::time_point now) {
    if (!has_deadline_ || timed_out_ || now < deadline_) return;
    timed_out_ = true;
    if (!released_) {
      kill_sandbox();
      return;
    }
    drain();
    forward(SIGTERM);
    in_grace_ = true;
    kill_at_ = now + spec_.timeout_grace;
  }

  // The timeout's SIGTERM grace over, the sandbox is killed; bwrap's time to report over,
  // its process group.
  void end_graces(Clock::time_point now) {
    if (in_grace_ && now >= kill_at_) {
      in_grace_ = false;
      out_.grace_expired = true;
      kill_sandbox();
    }
    if (grace_until_ && now >= *grace_until_) kill(-pid_, SIGKILL);
  }

  // How long the loop waits for something to come: until the deadline or the end of a
  // grace, and no longer than kForegroundLookMs while the terminal's foreground decides.
  int wait_ms(Clock::time_point now) const {
    int ms = has_deadline_ && !timed_out_ ? ms_until(deadline_, now) : -1;
    if (released_ && (spec_.controlling_terminal || spec_.output_held) && !out_.killed_by_signal)
      ms = ms < 0 ? kForegroundLookMs : std::min(ms, kForegroundLookMs);
    if (in_grace_) ms = ms_until(kill_at_, now);
    if (undelivered_) ms = ms < 0 ? kUndeliveredLookMs : std::min(ms, kUndeliveredLookMs);
    if (grace_until_ && now >= *grace_until_) return 200;
    if (grace_until_)
      ms = ms < 0 ? ms_until(*grace_until_, now) : std::min(ms, ms_until(*grace_until_, now));
    return ms;
  }

  // ^Z (SIGTSTP) stops zpolicy; bwrap's --new-session keeps the sandbox out of the
  // terminal's process groups, so it ran on unsupervised while its job showed "Stopped":
  // past its timeout (reported as exit 0), reading the terminal the user typed into next
  // (red team R18-3). The command is stopped first, then zpolicy as the signal's default
  // action would (in an orphaned process group, which the kernel does not stop, not at
  // all), and the command goes on when zpolicy does; a deadline passed meanwhile is acted
  // on then. Before the release nothing of the command runs. A sandbox that cannot be
  // stopped (it forks faster than the walks stop it) is killed: it must not run on
  // unsupervised.
  // A sandbox holding the terminal (on stdin, or on stdout or stderr, through which it reads
  // as well: red team A19-1) stays stopped while zpolicy is a background job of it (`bg`
  // after ^Z, or continued in the background after a SIGSTOP): outside the terminal's
  // session it would not get the SIGTTIN a background reader gets, and read what the user
  // types to the foreground shell (red team R18-4). zpolicy stops itself as
  // such a reader would be ("Stopped (tty input)") until `fg`; a process group that cannot
  // be stopped (orphaned) has its sandbox killed.
  // In an orphaned process group the copy drops what it held, as the kernel refuses the
  // write (EIO): nothing to stop for.
  bool output_held() const { return spec_.output_held && spec_.output_held() && stoppable(); }
  bool hold_in_background() const {
    return released_ && (spec_.controlling_terminal || output_held()) && in_background();
  }
  // The stop the kernel makes for a background job's use of the terminal: "Stopped (tty
  // input)" for the one that holds it, "(tty output)" for a copy that waits to write.
  int hold_signal() const { return spec_.controlling_terminal ? SIGTTIN : SIGTTOU; }

  // `hold`: zpolicy's own stop, as a background reader of the terminal (not a signal it got).
  void suspend(int sig, bool hold) {
    drain();
    if (released_) {
      if (init_.pinned()) {
        if (!stop_sandbox(init_)) {
          out_.signal = sig;
          out_.killed_by_signal = true;
          kill_sandbox();
        }
      } else {
        // The command out of its process group too (A29D-3): a stop that left it running.
        signal_all(SIGSTOP);
      }
    }
    // The caller's terminal settings while stopped, the command's again when continued in
    // the foreground, as a shell job's own ^Z handling does (`less`, `vim`): the command is
    // stopped by SIGSTOP and cannot. The terminal stayed `-echo -icanon` at the prompt,
    // and after `fg` the command had the shell's settings (red team A18-6). Not in the
    // background (`bg`): there the command's settings would be forced on the shell's.
    const TerminalSettings command_terminal(spec_);
    terminal_.restore_in_foreground();
    for (bool first = true; first || hold_in_background(); first = false, sig = hold_signal()) {
      if (!first && !stoppable()) {
        out_.signal = sig;
        out_.killed_by_signal = true;
        out_.orphaned_in_background = true;
        kill_sandbox();
        return;
      }
      // A stop signal zpolicy got stops zpolicy (its group got it too when it came from
      // the terminal); the hold that follows is zpolicy's own and stops the group. Either
      // may have been overtaken while the sandbox was stopped: by a SIGCONT, or for the hold
      // by an `fg`. A ^Z answered while `fg` came meanwhile (a walk of a sandbox of many
      // processes takes milliseconds) stopped the job after that `fg` (red team A20-8).
      if (first && (hold ? !hold_in_background() : drop_stop_signals(sfd_, true))) continue;
      stop_self(unblocked(sig), !first || hold);
    }
    // The stop signals that came before zpolicy stopped are answered: each one left in the
    // pipe (a double ^Z sends two) stopped the job again after `fg` (red team A19-4). The
    // other signals stay.
    drop_stop_signals(sfd_, false);
    command_terminal.restore_in_foreground();
    if (released_) continue_all();
  }

  // What suspend() stopped: the command's processes, and the init (stop_sandbox).
  void continue_all() {
    signal_all(SIGCONT);
    init_.signal(SIGCONT);
  }

  void take_signals() {
    unsigned char si;
    while (read(sfd_, &si, 1) == 1) {
      int sig = si;
      // A SIGPIPE is about zpolicy's own writes, not the command's.
      if (sig == SIGCHLD || sig == SIGPIPE) continue;
      if (is_stop_signal(sig)) {
        // The kernel sends SIGTTIN and SIGTTOU for a background job's use of the terminal:
        // one handled once zpolicy is back in the foreground is about a use that now goes
        // through, and stopped the job again after `fg` (red team A19-4).
        if (sig != SIGTSTP && in_foreground()) continue;
        suspend(sig, false);
        continue;
      }
      if (sig == SIGCONT) {
        if (hold_in_background()) suspend(hold_signal(), true);
        continue;
      }
      out_.signal = sig;
      if (!released_) {
        kill_sandbox();
        continue;
      }
      // The timeout's SIGTERM counts as the first: a signal in its grace kills at once.
      if (++forwarded_ > 1 || in_grace_) {
        out_.killed_by_signal = true;
        in_grace_ = false;
        kill_sandbox();
      } else {
        forward(sig);
      }
    }
  }

  void check_tripwire() {
    if (out_.tripped || !spec_.tripped || !spec_.tripped()) return;
    out_.tripped = true;
    kill_sandbox();
  }

  // bwrap has named the sandbox's init `init`: the check of what it started
  // (spec.on_started), then the command's release, unless something came meanwhile.
  void start_command(pid_t init) {
    if (!spec_.on_started(init, spec_.guarded ? pid_ : -1)) {
      out_.start_refused = true;
      kill_sandbox();
      return;
    }
    // The check may have taken long (up to its own deadline): what came meanwhile
    // decides before anything starts.
    take_signals();
    // Nor is it released into the background: a ^Z while bwrap set up (seconds, with
    // many mounts), then `bg`, found nothing to hold, and the command started a
    // background job holding the terminal (red team A19-2). It waits for `fg` as a
    // background reader would; in an orphaned process group, which the kernel does
    // not stop, it never starts.
    while (!out_.signal && !timed_out_ && spec_.controlling_terminal && in_background()) {
      if (!stoppable()) {
        out_.signal = SIGTTIN;
        out_.orphaned_in_background = true;
        kill_sandbox();
        break;
      }
      stop_self(unblocked(SIGTTIN), true);
      take_signals();
      check_deadline(Clock::now());
    }
    check_deadline(Clock::now());
    check_tripwire();
    if (!out_.signal && !timed_out_ && !out_.tripped) {
      released_ = true;
      if (spec_.release && !spec_.release()) {
        out_.start_refused = true;
        kill_sandbox();
      }
    }
  }

  const SpawnSpec& spec_;
  // The caller's terminal settings, as they were before the run.
  const TerminalSettings& terminal_;
  const int sfd_;  // the signal pipe's read end
  const pid_t pid_;
  const int relay_;  // the guard's relay, or -1
  Outcome out_;
  StatusStream status_;
  // Plain time points: GCC 12 takes an optional one for uninitialized (-Wmaybe-uninitialized).
  const bool has_deadline_ = spec_.timeout.has_value();
  const Clock::time_point deadline_ =
      Clock::now() + spec_.timeout.value_or(std::chrono::milliseconds{});
  std::optional<Clock::time_point> grace_until_;
  // The end of the timeout's SIGTERM grace, while it runs.
  bool in_grace_ = false;
  Clock::time_point kill_at_;
  int forwarded_ = 0;
  int undelivered_ = 0;  // a forwarded signal no process of the command has taken yet
  SandboxInit init_;
  bool init_named_ = false;
  int wstatus_ = 0;
  bool done_ = false, timed_out_ = false, started_hook_ran_ = false, guard_told_ = false;
  bool reaped_ = false;         // the child, whose wait status is then in wstatus_
  std::optional<int> relayed_;  // the guard's report (take_report)
  bool relay_open_;
  // Whether the command may have started: at once without a release to wait for.
  bool released_;
};

}  // namespace

Outcome supervise(const SpawnSpec& spec) {
  const TerminalSettings terminal(spec);
  const StreamFlags stream_flags(spec);
  CaughtSignals signals;
  if (!signals.take()) return {};
  const auto started = start_supervised(spec, signals);
  if (!started) return {};
  signals.unblock();
  Supervision supervision(spec, terminal, signals.read_end(), *started);
  supervision.watch();
  supervision.end_tree();
  signals.restore();
  terminal.restore();
  stream_flags.restore();
  return supervision.outcome();
}

Execution execution_of(const Outcome& o) {
  if (o.setup_finished) return Execution::Ran;
  if (!o.started || !o.released) return Execution::DidNotRun;
  // bwrap's monitor ran to its end and reported no exec: setup or exec failed.
  if (o.kind == Outcome::Kind::Exited) return Execution::DidNotRun;
  return Execution::Unknown;
}

std::string timeout_report(const Outcome& o, bool sandbox, const std::string& when) {
  const auto ms = kTimeoutGrace.count();
  const std::string grace =
      (ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms") +
      " grace (time for a test runner to write its report)";
  std::string out = "zpolicy: timed out" + when + "; ";
  out += sandbox ? "every process in the sandbox got SIGTERM"
                 : "the command's process group got SIGTERM";
  const std::string killed = sandbox
                                 ? ", then the sandbox and every process still in it were killed"
                                 : ", then the group was killed";
  if (o.grace_expired)
    out += killed + " after the " + grace;
  else if (o.killed_by_signal)
    out += killed + " on " +
           (o.signal == SIGINT    ? "SIGINT"
            : o.signal == SIGHUP  ? "SIGHUP"
            : o.signal == SIGTERM ? "SIGTERM"
                                  : "signal " + std::to_string(o.signal)) +
           ", within the " + grace;
  else
    out += sandbox ? " and the sandbox ended within the " + grace
                   : " and the command ended within the " + grace + "; the group was killed";
  return out + "\n";
}

int status_of(const Outcome& o) {
  switch (o.kind) {
    case Outcome::Kind::TimedOut:
      return kExitTimeout;
    case Outcome::Kind::Exited:
      return o.code;
    case Outcome::Kind::Signaled:
      return kExitSignalBase + o.code;
    case Outcome::Kind::SpawnFailed:
      return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace zpolicy::runner
