#pragma once

#include <string>

namespace zpolicy::tests::kernel {

// Python: the start the job-control harnesses (attack19, attack20, attack_copy20) share, to
// be followed by the harness's own text. job_control_shell(ws, lflags) makes the harness
// a shell as the user's is: forked first, so that it can make a session of its own
// (setsid refuses a process group leader), whose exit status the caller gets; a session
// leader with a new pseudo-terminal for its controlling terminal, `lflags` set in its
// local modes, SIGTTOU ignored as a shell ignores it to move the terminal between its
// jobs, in `ws`. Returns the terminal's master (where the harness types and reads what was
// shown) and slave. With `raw_output`, output is not post-processed ("\n" is not shown as
// "\r\n"); with `ignore_hangup`, SIGHUP is ignored (and so for the jobs, as `nohup` and
// `disown` leave them, unless they restore it). After 40 s the harness gives up: the
// process groups in `groups`, its jobs, are killed, and it exits 3.
inline constexpr char kJobControlShell[] = R"PY(
import fcntl, os, signal, sys, termios
groups = []
def give_up(*_):
    for g in groups:
        try: os.killpg(g, signal.SIGKILL)
        except OSError: pass
    os._exit(3)
def job_control_shell(ws, lflags, raw_output=False, ignore_hangup=False):
    if os.fork():
        sys.exit(os.waitstatus_to_exitcode(os.wait()[1]))
    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(40)
    os.setsid()
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    a = termios.tcgetattr(slave); a[3] |= lflags
    if raw_output: a[1] &= ~termios.OPOST
    termios.tcsetattr(slave, termios.TCSANOW, a)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    if ignore_hangup: signal.signal(signal.SIGHUP, signal.SIG_IGN)
    os.chdir(ws)
    return master, slave
)PY";

// What the terminal showed holds `first`, and `then` after it (a command's stdout written
// before its stderr shows in that order).
inline bool shows_in_order(const std::string& shown, const std::string& first,
                           const std::string& then) {
  const auto at = shown.find(first);
  return at != std::string::npos && shown.find(then, at) != std::string::npos;
}

}  // namespace zpolicy::tests::kernel
