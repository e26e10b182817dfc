#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "sandbox_fixture.hpp"

// Attack 20 (docs/redteam-2026-12.md "Attack 20 (attackjc20)"): `zpolicy run`'s terminal and
// job control after sessions 18 and 19, attacked from inside the sandbox and from the
// shells and scripts around a run. Each case is a finding's reproduction, observed from
// the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack20)

namespace {

// On the host, as the caller: a job-control shell of its own making (a session leader
// holding a pseudo-terminal's both ends: it types into the master and is the foreground
// process group between jobs) that starts `zpolicy run -- ARGV...` as a job in a process
// group of its own. Every step waits for the event it needs (a stop, an exit, a file), not
// for time, except where it measures what happens while nothing should.
//   ctrl-z:       the job starts in the foreground with the terminal on 0-2; once `ready`
//                 exists, ^Z; the shell takes the terminal back and a line is typed to it
//                 (the shell reads it, or says it got nothing); how much the command's
//                 `ticks` file grew in 0.5 s while the job was stopped; then `fg`, the line
//                 `after-fg` typed, and the job's end.
//   bg-blocked:   as ctrl-z, zpolicy started with SIGTTIN blocked (a mask its parent left);
//                 after ^Z, `bg` and a line typed to the shell: whether the shell sees the
//                 job stopped within 3 s, then `fg`, `after-fg` typed, and the job's end.
//   amp-settings: the job starts in the background (`&`, the terminal on 0-2); once `ready`
//                 exists, the shell turns echo off (a foreground program's password
//                 prompt) and creates `go`; whether echo is still off once the job ended.
//   amp-nonblock: the job starts in the background (`&`, the terminal on 0-2) on a terminal whose open file is non-blocking (node and
//                 others leave it so); nothing reads the terminal until 0.5 s after
//                 `writing` exists; prints how many bytes the terminal got and whether the
//                 last ones (`LAST`) came.
const std::string kJobShell = R"PY(
import fcntl, json, os, select, signal, sys, termios, time
z, ws, how, argv = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if os.fork():
    sys.exit(os.waitstatus_to_exitcode(os.wait()[1]))
groups = []
def give_up(*_):
    for g in groups:
        try: os.killpg(g, signal.SIGKILL)
        except OSError: pass
    os._exit(3)
signal.signal(signal.SIGALRM, give_up)
signal.alarm(40)
os.setsid()
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
a = termios.tcgetattr(slave); a[3] |= termios.ECHO | termios.ICANON; a[1] &= ~termios.OPOST
termios.tcsetattr(slave, termios.TCSANOW, a)
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
os.chdir(ws)
shell = os.getpgrp()
background = how.startswith("amp")
if how == "amp-nonblock":
    fcntl.fcntl(slave, fcntl.F_SETFL, fcntl.fcntl(slave, fcntl.F_GETFL) | os.O_NONBLOCK)
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    if not background: os.tcsetpgrp(slave, os.getpgrp())
    for s in (signal.SIGTTOU, signal.SIGPIPE): signal.signal(s, signal.SIG_DFL)
    if "blocked" in how: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTIN})
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null if "null" in how else slave, 0); os.dup2(slave, 1); os.dup2(slave, 2)
    os.execv(z, [z, "run", "--"] + argv)
try: os.setpgid(job, job)
except OSError: pass
groups.append(job)
out = b""
def drain():
    global out
    while select.select([master], [], [], 0)[0]: out += os.read(master, 65536)
def until(check):
    while not check(): drain(); time.sleep(0.005)
def size(name):
    try: return os.path.getsize(name)
    except OSError: return 0
# The shell's own open file of the terminal, non-blocking: a line the command read first
# must not leave the shell waiting for good.
mine = os.open(os.ttyname(slave), os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
def shell_reads():
    try:
        if select.select([mine], [], [], 1.0)[0]:
            print("shell got", os.read(mine, 100).decode().strip()); return
    except BlockingIOError: pass
    print("shell got nothing")
def ended(st):
    print("ended", os.waitstatus_to_exitcode(st)); drain(); print(out.decode(errors="replace"))
if how == "amp-nonblock":
    # Long enough for the terminal's buffer to fill up while nothing reads it.
    while not os.path.exists("writing"): time.sleep(0.005)
    time.sleep(0.5)
    got, last = 0, b""
    while True:
        if select.select([master], [], [], 0.2)[0]:
            b = os.read(master, 65536); got += len(b); last = (last + b)[-16:]
            continue
        pid, st = os.waitpid(job, os.WNOHANG)
        if pid: break
    print("terminal got", got, "bytes;", "the last came" if last.endswith(b"LAST") else "the last did not come")
    print("ended", os.waitstatus_to_exitcode(st))
    sys.exit(0)
until(lambda: os.path.exists("ready"))
if how == "amp-settings":
    # The foreground program (`sudo` asking for a password) turns echo off meanwhile.
    a = termios.tcgetattr(slave); a[3] &= ~(termios.ECHO | termios.ICANON)
    termios.tcsetattr(slave, termios.TCSANOW, a)
    open("go", "w").close()
    _, st = os.waitpid(job, 0)
    a = termios.tcgetattr(slave)
    print("echo after the run:", "on" if a[3] & termios.ECHO else "off")
    ended(st); sys.exit(0)
os.killpg(job, signal.SIGTSTP)            # ^Z
_, st = os.waitpid(job, os.WUNTRACED)
print("job stopped" if os.WIFSTOPPED(st) else "job did not stop")
if not os.WIFSTOPPED(st): ended(st); sys.exit(0)
os.tcsetpgrp(slave, shell)                # the shell's prompt
if how.startswith("bg"):
    os.killpg(job, signal.SIGCONT)        # bg
    os.write(master, b"secret-typed-to-the-shell\n")
    end = time.time() + 3
    while True:
        pid, st = os.waitpid(job, os.WUNTRACED | os.WNOHANG)
        if pid or time.time() > end: break
        drain(); time.sleep(0.005)
    print("held in the background" if pid and os.WIFSTOPPED(st) else "the shell saw no stop")
    shell_reads()
    os.tcsetpgrp(slave, job)              # fg
    os.killpg(job, signal.SIGCONT)
    os.write(master, b"after-fg\n")
    _, st = os.waitpid(job, 0)
    ended(st); sys.exit(0)
before = size("ticks")
os.write(master, b"secret-typed-to-the-shell\n")
shell_reads()
time.sleep(0.5)
print("ticks while stopped:", size("ticks") - before)
os.tcsetpgrp(slave, job)                  # fg
os.killpg(job, signal.SIGCONT)
os.write(master, b"after-fg\n")
_, st = os.waitpid(job, 0)
ended(st)
)PY";

std::string stolen(const Sandbox& box) { return read_file(box.ws("stolen")).value_or(""); }

std::string json_argv(const std::vector<std::string>& argv) {
  std::string out = "[";
  for (const auto& a : argv) {
    out += out.size() > 1 ? ", \"" : "\"";
    for (char c : a) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
  return out + "]";
}

}  // namespace

// A20-1: R18-3 stops the sandbox on ^Z by walking its processes until none runs, and took
// a process whose main thread is a zombie for a gone one. A main thread that ends with a
// plain exit(2) (not exit_group, which every libc's exit() is) leaves the process running
// on its other threads, and /proc/PID/stat shows the main thread's 'Z': the walk sent such
// a process no SIGSTOP, and while the job showed "Stopped" it ran on, read what was typed
// to the shell through its stdin, and past its timeout. Every thread is looked at now.
BOOST_DATA_TEST_CASE(a_process_whose_main_thread_exited_is_stopped_by_ctrl_z,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string command =
      "import ctypes, os, threading, time\n"
      "def ticker():\n"
      "    fd = os.open('ticks', os.O_WRONLY | os.O_CREAT | os.O_APPEND)\n"
      "    leader = '/proc/%d/stat' % os.getpid()\n"
      "    while True:\n"
      "        os.write(fd, b'x')\n"
      "        if open(leader).read().rsplit(')', 1)[1].split()[0] == 'Z' and "
      "not os.path.exists('ready'):\n"
      "            open('ready', 'w').close()\n"
      "        time.sleep(0.01)\n"
      "def reader():\n"
      "    while True:\n"
      "        line = os.read(0, 100)\n"
      "        open('stolen', 'ab').write(line)\n"
      "        if not line or line.startswith(b'after-fg'): os._exit(0)\n"
      "threading.Thread(target=ticker).start()\n"
      "threading.Thread(target=reader).start()\n"
      "ctypes.CDLL(None).syscall(60, 0)\n";
  const RunResult r =
      box.host_command({"/usr/bin/python3", "-c", kJobShell, zpolicy_binary(), box.workspace(),
                        "ctrl-z", json_argv({"/usr/bin/python3", "-c", command})});
  BOOST_TEST(r.out.find("job stopped") != std::string::npos, r.describe());
  BOOST_TEST(stolen(box).find("secret") == std::string::npos, stolen(box));
  BOOST_TEST(r.out.find("shell got secret-typed-to-the-shell") != std::string::npos,
             r.describe());
  BOOST_TEST(r.out.find("ticks while stopped: 0\n") != std::string::npos, r.describe());
  // Continued, it reads the terminal again.
  BOOST_TEST(stolen(box) == "after-fg\n", r.describe());
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
}

// A20-3: held in the background (R18-4, A19-1), zpolicy stops its process group with SIGTTIN,
// as the kernel stops a background reader's. A caller that leaves SIGTTIN blocked (a signal
// mask is inherited across exec; a runtime that blocks signals for its own threads and
// forgets them before it starts a program) made that stop a pending signal: the hold
// raised it again without end, a CPU spun, and the shell saw the job running, so `jobs`
// told nothing (the command stayed stopped: nothing was read). The hold stops with SIGSTOP
// there.
BOOST_DATA_TEST_CASE(a_run_held_in_the_background_with_sigttin_blocked_is_stopped,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r = box.host_command(
      {"/usr/bin/python3", "-c", kJobShell, zpolicy_binary(), box.workspace(), "bg-blocked",
       json_argv({"/bin/sh", "-c", "touch ready; read -r l; echo \"$l\" >> stolen"})});
  BOOST_TEST(r.out.find("job stopped") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("held in the background") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("shell got secret-typed-to-the-shell") != std::string::npos,
             r.describe());
  BOOST_TEST(stolen(box) == "after-fg\n", r.describe());
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
}

// A20-4: a run put back the settings of every terminal on its 0-2 when it ended, also of
// one its command never held: a run started in the background (its stdin /dev/null, its
// output copied through a pipe) ending while a foreground program had turned echo off (a
// `sudo` password prompt) turned echo on under it, so the password showed on the screen, and
// restarted output the user had stopped (^S). Only what the command holds is put back.
BOOST_DATA_TEST_CASE(a_background_run_leaves_the_foreground_programs_terminal_settings,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r = box.host_command(
      {"/usr/bin/python3", "-c", kJobShell, zpolicy_binary(), box.workspace(), "amp-settings",
       json_argv({"/bin/sh", "-c", "touch ready; while [ ! -e go ]; do sleep 0.01; done"})});
  BOOST_TEST(r.out.find("echo after the run: off") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
