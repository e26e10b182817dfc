#include "runner/standard_streams.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "runner/job_control.hpp"

namespace zpolicy::runner {
namespace {

const char* const kNames[] = {"stdin", "stdout", "stderr"};

// /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom: the memory devices that
// name nothing of the host (not /dev/mem, /dev/port or /dev/kmsg of the same major).
bool harmless_memory_device(dev_t rdev) {
  if (major(rdev) != 1) return false;
  const unsigned minor_number = minor(rdev);
  return minor_number == 3 || minor_number == 5 || minor_number == 7 || minor_number == 8 ||
         minor_number == 9;
}

// A socket through which the sandbox reaches its one peer and nothing else: connected,
// of a stream type. A datagram socket takes an address with every sendmsg(2) (connected
// or not, and seccomp cannot look into the message), a listening one accepts whoever
// connects on the host, and an unconnected stream socket connects with sendmsg(2)'s
// MSG_FASTOPEN: each would be a way to the network a policy closes (red team R8-D2).
bool connected_stream(int fd) {
  int type = 0, listening = 0;
  socklen_t len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) return false;
  len = sizeof listening;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening) return false;
  sockaddr_storage peer;
  len = sizeof peer;
  return (type == SOCK_STREAM || type == SOCK_SEQPACKET) &&
         getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0;
}

// The terminal's own side: a pseudo-terminal's master is a terminal too, but what is
// written to it is typed into the programs on its other side, outside the sandbox.
bool terminal_not_master(int fd) {
  unsigned int pty_number = 0;
  return isatty(fd) && ioctl(fd, TIOCGPTN, &pty_number) != 0;
}

// The caller's controlling terminal (the kernel's encoding, as TIOCGDEV gives a terminal's
// device; 0 for none); none when /proc/self/stat is unreadable.
std::optional<unsigned int> controlling_terminal() {
  const auto self = process_stat("self");
  if (!self) return std::nullopt;
  return self->tty;
}

// A terminal that is not a pseudo-terminal's (a virtual console, a serial line, whichever
// name opened it: /dev/tty0, /dev/console) and not the caller's controlling terminal (red
// team R17-1). No session holds such a terminal, so a sandboxed session leader takes it
// for its own (TIOCSCTTY, or any open of /proc/self/fd/N without O_NOCTTY). A virtual
// console's own session may then use the ioctls that change the host's screen and
// keyboard: VT_ACTIVATE (which console is shown), KDSETMODE (graphics: no text drawn),
// KDSKBMODE (a raw or dead keyboard), PIO_FONT. And when that session ends, the kernel
// hangs up every open file of a terminal that is not a pseudo-terminal's
// (tty_vhangup_session), the caller's own among them. The caller's controlling terminal
// is its session's, which no other session can take.
bool foreign_terminal(int fd) {
  unsigned int tty = 0;
  if (ioctl(fd, TIOCGDEV, &tty) != 0) return true;
  // UNIX98 pseudo-terminals' slaves (136-143), BSD ones' (3).
  const unsigned int kind = major(tty);
  if ((kind >= 136 && kind <= 143) || kind == 3) return false;
  const auto ours = controlling_terminal();
  return !ours || *ours != tty;
}

// Whether terminal `tty` on stdin, which is not this process's controlling terminal, is read
// by a session that holds it while the command would read it too (red team A20-5). A run
// started outside the terminal's session (`setsid zpolicy run …` in an interactive shell:
// setsid forks, the job ends at once, and the shell reads the terminal again) read what was
// typed to the shell: no job control stands between a session and a terminal that is not
// its own. It may read the terminal when the nearest of its ancestors that holds the
// terminal is in its foreground (`su -c`: su waits there while its child, in a session of
// its own, runs zpolicy), or when no process holds it (a pseudo-terminal a harness made for
// the command). /proc unreadable counts as held.
bool read_by_another_session(unsigned int tty) {
  pid_t pid = getppid();
  for (int depth = 0; pid > 1 && depth < 64; ++depth) {
    const auto line = process_stat(std::to_string(pid));
    if (!line) break;
    if (line->tty == tty) return line->foreground != line->group;
    pid = line->parent;
  }
  return any_process([&](const ProcessStat& p) { return p.tty == tty; }).value_or(true);
}

// The namespace's /dev/null on stdin, opened by the guard's child as any memory device.
ReadOnlyStream null_stdin() {
  ReadOnlyStream s;
  s.fd = 0;
  s.rdev = makedev(1, 3);
  s.memory_device = true;
  s.path = "/dev/null";
  s.flags = O_RDONLY;
  s.required = true;
  return s;
}

// What the guard's child needs to open device `fd` again through a read-only mount.
ReadOnlyStream read_only_stream(int fd, const struct stat& st) {
  ReadOnlyStream s;
  s.fd = fd;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.rdev = st.st_rdev;
  s.flags = fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK);
  s.required = st.st_uid == geteuid();
  s.memory_device = harmless_memory_device(st.st_rdev);
  if (s.memory_device) {
    static const char* const kMemory[] = {"", "", "", "null", "", "zero", "", "full", "random",
                                          "urandom"};
    s.path = std::string("/dev/") + kMemory[minor(st.st_rdev)];
    return s;
  }
  ioctl(fd, TIOCGDEV, &s.tty);
  char link[32], target[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target);
  // Not absolute (a node of a mount this namespace does not show): not found by name.
  if (n > 0 && static_cast<size_t>(n) < sizeof target && target[0] == '/') s.path.assign(target, n);
  return s;
}

// A connected socket of the host's network namespace that connect() can aim elsewhere:
// TCP (and every other AF_INET/AF_INET6 stream: MPTCP, SCTP) drops its connection on a
// connect() to an AF_UNSPEC address and then connects again wherever the next connect()
// says, in the host's network, not the sandbox's own. A unix stream or seqpacket socket
// refuses AF_UNSPEC (EINVAL) and stays connected to its peer for life. Under network
// `none` the filter denies connect() itself; under `loopback` and an allow list it cannot
// (TCP on the sandbox's own lo needs it), and a TCP socket on stdin reached any host
// address, the allow-list proxy bypassed (red team A26B-1).
bool reaimable(int fd) {
  int domain = 0;
  socklen_t len = sizeof domain;
  return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX;
}

bool passes_as_is(int fd, const struct stat& st) {
  if (S_ISSOCK(st.st_mode)) return connected_stream(fd);
  if (S_ISCHR(st.st_mode)) return terminal_not_master(fd) || harmless_memory_device(st.st_rdev);
  if (S_ISFIFO(st.st_mode)) {
    // An anonymous pipe; a named FIFO lives on a filesystem of the host.
    struct statfs fs;
    return fstatfs(fd, &fs) == 0 && fs.f_type == PIPEFS_MAGIC;
  }
  return false;
}

// At most this much of a file on stdin is held in memory; a larger rest reaches the
// command through a pipe (red team R8-D3: a 20 GB file on stdin took 20 GB of shared
// memory, before the command even started).
constexpr off_t kCopyLimit = 16 << 20;

bool write_all(int to, const char* data, size_t size) {
  for (size_t done = 0; done < size;) {
    const ssize_t w = write(to, data + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

// What is left of `fd` from its current offset, in a sealed memfd at offset 0: reopened
// through /proc/self/fd it is that memfd, which no one can write. When more than
// kCopyLimit is left (or the file grows past it while it is read), the copy is not sealed
// and `complete` is false: the caller sends the copy and the rest through a pipe.
int sealed_copy(int fd, bool& complete) {
  complete = false;
  const int copy = memfd_create("zpolicy-stdin", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (copy < 0) return -1;
  char buf[64 * 1024];
  off_t held = 0;
  for (;;) {
    const size_t want = static_cast<size_t>(std::min<off_t>(sizeof buf, kCopyLimit + 1 - held));
    ssize_t n = want ? read(fd, buf, want) : 0;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (n == 0 && held > kCopyLimit) {
      if (lseek(copy, 0, SEEK_SET) == 0) return copy;
      break;
    }
    if (n == 0) {
      if (fcntl(copy, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0 &&
          lseek(copy, 0, SEEK_SET) == 0) {
        complete = true;
        return copy;
      }
      break;
    }
    if (!write_all(copy, buf, static_cast<size_t>(n))) break;
    held += n;
  }
  const int saved = errno;
  close(copy);
  errno = saved;
  return -1;
}

// Writes all of `data` into the pipe `to` (non-blocking) unless `gone` (an eventfd) is
// readable first: false then, or when the pipe refuses it (its reader is gone: EPIPE).
bool write_until_gone(int to, int gone, const char* data, size_t size) {
  for (size_t done = 0; done < size;) {
    pollfd ready[2] = {{to, POLLOUT, 0}, {gone, POLLIN, 0}};
    if (poll(ready, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (ready[1].revents) return false;
    const ssize_t w = write(to, data + done, size - done);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

// Feeds the command's stdin pipe: what was copied, then the rest of the file. A command
// that stops reading ends it (EPIPE; SIGPIPE is blocked in this thread, so it does not end
// the runner), and so does the sandbox's end (`gone`, StandardStreams::finish()): the
// pipe's read end sent out of the sandbox (`SCM_RIGHTS` into a socket on its stdout, which
// the caller reads once zpolicy has exited) outlives every process of the sandbox, and
// the feed waited for room in a full pipe that nothing would ever read, and zpolicy with
// it, forever after the command had ended (red team A29A-3, A28A-3's class).
void feed(int copy, int from, int to, int gone) {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  char buf[64 * 1024];
  bool going = true;
  for (int source : {copy, from}) {
    while (going) {
      const ssize_t n = read(source, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      going = write_until_gone(to, gone, buf, static_cast<size_t>(n));
    }
  }
  close(copy);
  close(to);
}

// Whether the kernel would stop this process's job for a write to `terminal` now: its
// controlling terminal, of which the job is in the background, under `stty tostop`.
bool write_would_stop(int terminal) {
  const pid_t foreground = tcgetpgrp(terminal);
  termios settings;
  return foreground >= 0 && foreground != getpgrp() && tcgetattr(terminal, &settings) == 0 &&
         (settings.c_lflag & TOSTOP);
}

}  // namespace

StandardStreams::~StandardStreams() { finish(); }

bool StandardStreams::prepare(std::string& why, bool may_connect) {
  // Blocked too (a signal mask is inherited across exec): the kernel lets such a write
  // through as well, where holding it stopped the job for a signal the caller had blocked
  // (red team A20-7).
  struct sigaction output_signal;
  sigset_t mask;
  ttou_ignored_ = (sigaction(SIGTTOU, nullptr, &output_signal) == 0 &&
                   output_signal.sa_handler == SIG_IGN) ||
                  (pthread_sigmask(SIG_BLOCK, nullptr, &mask) == 0 && sigismember(&mask, SIGTTOU));
  for (int fd = 0; fd <= 2; ++fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) continue;  // closed: the sandbox gets it closed too
    const bool prepared = passes_as_is(fd, st) ? prepare_passed(fd, st, may_connect, why)
                          : S_ISREG(st.st_mode) && fd == 0 ? prepare_file_stdin(fd, why)
                          : S_ISREG(st.st_mode)            ? prepare_file_output(fd, st, why)
                                                           : refuse(fd, st, why);
    if (!prepared) return false;
  }
  return true;
}

// A stream that may pass as it is (passes_as_is): a terminal is judged, and what the
// sandbox must not read or reach gets a pipe, /dev/null or a read-only copy.
bool StandardStreams::prepare_passed(int fd, const struct stat& st, bool may_connect,
                                     std::string& why) {
  if (S_ISSOCK(st.st_mode) && may_connect && reaimable(fd)) {
    why = std::string(kNames[fd]) +
          " is a network (not a unix) socket, which the sandbox could disconnect (a "
          "connect() to AF_UNSPEC) and connect again to any address of the host's "
          "network, which this policy's network closes; give the command a pipe or a "
          "unix socket (socat ... EXEC: makes one), or run it with network: none";
    return false;
  }
  if (S_ISCHR(st.st_mode) && !harmless_memory_device(st.st_rdev) && foreign_terminal(fd)) {
    why = std::string(kNames[fd]) +
          " is a terminal that is neither a pseudo-terminal nor your controlling terminal "
          "(a virtual console, a serial line): the sandbox could take it for its own, "
          "switch, blank or rekey a console with it, and hang up every open file of it, "
          "yours too, when it ends; give the command a pipe, or run zpolicy with that "
          "terminal as its controlling terminal";
    return false;
  }
  if (fd != 0 && S_ISCHR(st.st_mode) && !harmless_memory_device(st.st_rdev) && tcgetpgrp(fd) < 0) {
    // A terminal that is not the caller's controlling terminal (another window's,
    // `> /dev/pts/N`; any terminal under `setsid`) given for output: no job control
    // keeps the sandbox from reading it, and opened again through /proc/self/fd/N it
    // read what was typed there (red team A19-6). It gets what is written through a
    // pipe this process copies into it.
    return relay_to_terminal(fd, st.st_rdev, why);
  }
  unsigned int tty = 0;
  if (fd == 0 && S_ISCHR(st.st_mode) && !harmless_memory_device(st.st_rdev) && tcgetpgrp(fd) < 0 &&
      ioctl(fd, TIOCGDEV, &tty) == 0 && read_by_another_session(tty)) {
    read_only_.push_back(null_stdin());
    return true;
  }
  if (S_ISCHR(st.st_mode) && tcgetpgrp(fd) >= 0) {
    // The caller's controlling terminal. Outside its session (bwrap's --new-session)
    // the sandbox gets no SIGTTIN for reading it in the background, and read what the
    // user typed to the foreground shell (red team R18-4), through any of 0-2: a
    // terminal is one file whichever descriptor holds it, read through stdout as well
    // (`exec 0<&1`), and a write-only one opened again for reading through
    // /proc/self/fd/1 (red team A19-1). A run started in the background reads
    // /dev/null instead, as a shell without job control gives `&`, and writes to the
    // terminal through a pipe this process copies into it; one that goes to the
    // background later is held stopped (supervise.cpp).
    if (tcgetpgrp(fd) != getpgrp()) {
      if (fd == 0) {
        read_only_.push_back(null_stdin());
        return true;
      }
      if (!relay_to_terminal(fd, st.st_rdev, why)) return false;
      may_hold_output_ = true;
      return true;
    }
    controlling_terminal_ = true;
  }
  if (S_ISCHR(st.st_mode)) read_only_.push_back(read_only_stream(fd, st));
  return true;
}

// A regular file on stdin: a sealed copy of it, or, where the copy is not complete, a pipe
// fed from it.
bool StandardStreams::prepare_file_stdin(int fd, std::string& why) {
  bool complete = false;
  const int copy = sealed_copy(fd, complete);
  if (copy < 0) {
    why = std::string("cannot copy the file on stdin: ") + std::strerror(errno);
    return false;
  }
  if (complete) {
    fds_.push_back({copy, fd});
    return true;
  }
  if (!gone_event(fd, why)) {
    close(copy);
    return false;
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    why = std::string("cannot make a pipe for stdin: ") + std::strerror(errno);
    close(copy);
    return false;
  }
  // This process's own end, never the sandbox's.
  fcntl(p[1], F_SETFL, O_NONBLOCK);
  fds_.push_back({p[0], fd});
  copies_.emplace_back(feed, copy, fd, p[1], sandbox_gone_);
  return true;
}

// A regular file on stdout or stderr: a pipe this process copies into it.
bool StandardStreams::prepare_file_output(int fd, const struct stat& st, std::string& why) {
  // stderr on the file stdout is on (`> log 2>&1`) shares stdout's pipe, as a terminal
  // does: two copies wrote them in whichever order their threads ran, all of stderr
  // before stdout's first line in a log (red team C20-3). Opened alike too: a pipe
  // copied through stdout's open file must not write what stderr's would not have.
  const int flags = fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND);
  for (const auto& f : file_copies_)
    if (f.dev == st.st_dev && f.ino == st.st_ino && f.flags == flags) {
      if (shares_pipe(f.write_end, fd)) return true;
      break;
    }
  const auto write_end = copied_pipe(fd, why);
  if (!write_end) return false;
  file_copies_.push_back({st.st_dev, st.st_ino, flags, *write_end});
  return true;
}

// Any other stream is refused: `why` says what it is and what to give instead.
bool StandardStreams::refuse(int fd, const struct stat& st, std::string& why) {
  if (S_ISSOCK(st.st_mode)) {
    why = std::string(kNames[fd]) +
          " is a socket that is not a connected stream (a datagram, listening or "
          "unconnected socket), through which the sandbox could reach addresses of its own "
          "choosing; give the command a connected stream socket or a pipe";
    return false;
  }
  if (S_ISCHR(st.st_mode) && isatty(fd)) {
    why = std::string(kNames[fd]) +
          " is the master side of a pseudo-terminal: what the sandbox wrote to it would be "
          "typed into the programs on its other side; give the command the terminal's own "
          "side (the slave) or a pipe";
    return false;
  }
  why = std::string(kNames[fd]) + " is " +
        (S_ISDIR(st.st_mode)    ? "a directory"
         : S_ISBLK(st.st_mode)  ? "a block device"
         : S_ISCHR(st.st_mode)  ? "a character device that is not a terminal"
         : S_ISFIFO(st.st_mode) ? "a named FIFO"
                                : "a file of another type") +
        ", which the sandbox could open again on the host through /proc/self/fd/" +
        std::to_string(fd) + "; redirect it through a pipe (cat FILE | zpolicy run ...)";
  return false;
}

bool StandardStreams::relay_to_terminal(int fd, dev_t terminal, std::string& why) {
  // stderr on the terminal stdout is on shares stdout's pipe: one copy keeps their order.
  for (const auto& r : relays_)
    if (r.terminal == terminal) {
      if (shares_pipe(r.write_end, fd)) return true;
      break;
    }
  const auto write_end = copied_pipe(fd, why);
  if (!write_end) return false;
  relays_.push_back({terminal, *write_end});
  return true;
}

bool StandardStreams::shares_pipe(int write_end, int fd) {
  const int again = fcntl(write_end, F_DUPFD_CLOEXEC, 3);
  if (again < 0) return false;
  fds_.push_back({again, fd});
  return true;
}

bool StandardStreams::gone_event(int fd, std::string& why) {
  if (sandbox_gone_ < 0) sandbox_gone_ = eventfd(0, EFD_CLOEXEC);
  if (sandbox_gone_ < 0)
    why =
        std::string("cannot make an event for ") + kNames[fd] + "'s copy: " + std::strerror(errno);
  return sandbox_gone_ >= 0;
}

std::optional<int> StandardStreams::copied_pipe(int fd, std::string& why) {
  if (!gone_event(fd, why)) return std::nullopt;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    why = std::string("cannot make a pipe for ") + kNames[fd] + ": " + std::strerror(errno);
    return std::nullopt;
  }
  fds_.push_back({p[1], fd});
  ++copying_;
  copies_.emplace_back(&StandardStreams::copy, this, p[0], fd);
  return p[1];
}

// No write of this thread raises SIGTTOU. For a background job's write under `stty tostop`
// the kernel sends it to the whole job on each retry, microseconds apart, until the job
// stops; one that came while zpolicy stopped itself for the first stopped the job a second
// time after `fg` (red team A19-4). The kernel lets the write of a thread that blocks
// SIGTTOU through, so this thread holds such a write itself until the job is in the
// foreground, and the job is stopped for it once: by the supervision while the sandbox runs
// (output_held()), by finish() after.
void StandardStreams::copy(int from, int to) {
  sigset_t output_signal;
  sigemptyset(&output_signal);
  sigaddset(&output_signal, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &output_signal, nullptr);
  char buf[64 * 1024];
  // Once a write fails for good, the copy stops reading: the command's next write fails
  // (EPIPE), as its own write there would have, instead of running on unheard. A terminal
  // hung up (its window closed) fails every write with EIO (red team A20-6), a full disk
  // with ENOSPC; a background job's write in an orphaned process group under `stty tostop`
  // with EIO.
  //
  // The copy ends at the pipe's end of file, or, once finish() says the sandbox is gone,
  // when the pipe is empty: a write end sent out of the sandbox (`SCM_RIGHTS` into a socket
  // on its stdin, which the caller holds and does not read) outlives every process of the
  // sandbox, and waiting for its end of file held zpolicy, and the caller waiting for it,
  // forever after the command had ended (red team A28A-3). Nothing the sandbox wrote is
  // lost: its processes are gone, so all it wrote is in the pipe.
  for (bool gone = false, ended = false; !gone;) {
    if (!ended) {
      pollfd in[2] = {{from, POLLIN, 0}, {sandbox_gone_, POLLIN, 0}};
      if (poll(in, 2, -1) < 0) continue;
      if (in[0].revents == 0) {
        ended = true;
        fcntl(from, F_SETFL, fcntl(from, F_GETFL) | O_NONBLOCK);  // this process's own end
        continue;
      }
    }
    const ssize_t n = read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file, or (ended) the pipe is empty: EAGAIN
    for (ssize_t done = 0; !gone && done < n;) {
      // Every write looks at the foreground, before it waits for room and again once the
      // terminal has it: the kernel looks at each write of a background job, and a write
      // cut short by a stop (^Z, `kill -TSTP`: it returns what it wrote) went on after `bg`
      // without a look, so the rest of what one read got (up to 64 KiB) reached the
      // terminal in the background under `tostop` (red team C20-1). Waiting for room keeps
      // a write from starting on a full terminal: one that wrote nothing when the stop came
      // is restarted by the kernel itself, and this thread's SIGTTOU is blocked; the look
      // before it holds the job as the kernel does where output was stopped (^S). A
      // non-blocking open file (node leaves a terminal so) refuses a write with EAGAIN when
      // full: a wait, not a loss (red team A20-2).
      if (!wait_for_the_foreground(to)) {
        gone = true;
        break;
      }
      pollfd out = {to, POLLOUT, 0};
      if (poll(&out, 1, -1) < 0 && errno == EINTR) continue;
      if (!wait_for_the_foreground(to)) {
        gone = true;
        break;
      }
      const ssize_t w = write(to, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (w <= 0) gone = true;
      else done += w;
    }
  }
  close(from);
  std::lock_guard lock(mutex_);
  --copying_;
  changed_.notify_all();
}

bool StandardStreams::wait_for_the_foreground(int to) {
  if (ttou_ignored_ || !write_would_stop(to)) return true;
  std::unique_lock lock(mutex_);
  ++held_;
  bool stops = true;
  while (write_would_stop(to)) {
    // The kernel discards a stop for an orphaned process group and refuses the write (EIO).
    if (!stoppable()) {
      stops = false;
      break;
    }
    changed_.wait_for(lock, kForegroundLook);
  }
  --held_;
  return stops;
}

bool StandardStreams::output_held() const {
  std::lock_guard lock(mutex_);
  return held_ > 0;
}

void StandardStreams::finish() {
  for (const auto& [here, there] : fds_) close(here);
  fds_.clear();
  if (sandbox_gone_ >= 0) eventfd_write(sandbox_gone_, 1);
  relays_.clear();
  file_copies_.clear();
  // Output held for the foreground once the sandbox is gone stops the job, as the kernel
  // stops a background writer (zpolicy's own handlers are gone: the default stops it),
  // again after each `bg`, until `fg`.
  std::unique_lock lock(mutex_);
  while (!changed_.wait_for(lock, kForegroundLook, [&] { return copying_ == 0; }))
    if (held_ > 0 && in_background() && stoppable()) {
      lock.unlock();
      kill(0, SIGTTOU);
      lock.lock();
    }
  lock.unlock();
  for (auto& t : copies_) t.join();
  copies_.clear();
  if (sandbox_gone_ >= 0) close(sandbox_gone_);
  sandbox_gone_ = -1;
}

}  // namespace zpolicy::runner
