#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "job_control_shell.hpp"
#include "json_argv.hpp"
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
//   amp-tostop-ttou-blocked: the job starts in the background (`&`, the terminal on 0-2)
//                 under `stty tostop`, zpolicy with SIGTTOU blocked (a mask its parent
//                 left); whether it stops, ends, or neither within 5 s, and its output.
//   ctrl-z-storm, amp-tostop-storm: the job (in the foreground once `ready` exists, or
//                 started with `&` under `stty tostop`) gets 40 rounds of ^Z and `bg` as
//                 fast as signals go, a last ^Z and at once `fg`, and `go` is created; how often it stopped
//                 after that `fg` (each answered with `fg`), and how it ended.
//   setsid:       the job is `setsid zpolicy run …` (the terminal on 0-2): setsid forks, its
//                 parent ends the job at once and the shell takes the terminal back; once
//                 `ready` exists a line is typed to the shell; waits for `done`.
//   amp-settings: the job starts in the background (`&`, the terminal on 0-2); once `ready`
//                 exists, the shell turns echo off (a foreground program's password
//                 prompt) and creates `go`; whether echo is still off once the job ended.
//   amp-hangup:   the job starts in the background (`&`, the terminal on 0-2); once `ready`
//                 exists, the terminal is closed (its window shut: a hangup); whether the
//                 job ends within 5 s (the harness ignores SIGHUP, as `disown` or `nohup`
//                 keeps a job's, so only the terminal's failure can end it).
//   amp-nonblock: the job starts in the background (`&`, the terminal on 0-2) on a terminal whose open file is non-blocking (node and
//                 others leave it so); nothing reads the terminal until 0.5 s after
//                 `writing` exists; prints how many bytes the terminal got and whether the
//                 last ones (`LAST`) came.
const std::string kJobShell = std::string(kJobControlShell) + R"PY(
import fcntl, json, os, select, signal, sys, termios, time
z, ws, how, argv = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
master, slave = job_control_shell(ws, termios.ECHO | termios.ICANON, raw_output=True,
                                  ignore_hangup=True)
shell = os.getpgrp()
background = how.startswith("amp")
if "tostop" in how:
    a = termios.tcgetattr(slave); a[3] |= termios.TOSTOP
    termios.tcsetattr(slave, termios.TCSANOW, a)
if how == "amp-nonblock":
    fcntl.fcntl(slave, fcntl.F_SETFL, fcntl.fcntl(slave, fcntl.F_GETFL) | os.O_NONBLOCK)
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    if not background: os.tcsetpgrp(slave, os.getpgrp())
    for s in (signal.SIGTTOU, signal.SIGPIPE, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
    if "blocked" in how:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU if "ttou" in how else signal.SIGTTIN})
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null if "null" in how else slave, 0); os.dup2(slave, 1); os.dup2(slave, 2)
    if how == "setsid": os.execv("/usr/bin/setsid", ["setsid", z, "run", "--"] + argv)
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
if how == "amp-tostop-ttou-blocked":
    end = time.time() + 5
    while True:
        pid, st = os.waitpid(job, os.WUNTRACED | os.WNOHANG)
        if pid or time.time() > end: break
        drain(); time.sleep(0.01)
    if not pid: print("neither stopped nor ended in 5 s"); os.killpg(job, signal.SIGKILL); sys.exit(0)
    if os.WIFSTOPPED(st): print("stopped"); os.killpg(job, signal.SIGKILL); sys.exit(0)
    ended(st); sys.exit(0)
if how.endswith("storm"):
    # ^Z, bg, ^Z, bg … as fast as signals go, then fg; a stop after that fg is answered
    # with fg again, up to five times.
    if not background: until(lambda: os.path.exists("ready"))
    for _ in range(40):
        os.killpg(job, signal.SIGTSTP); os.tcsetpgrp(slave, shell); os.killpg(job, signal.SIGCONT)
    os.killpg(job, signal.SIGTSTP)                                    # a last ^Z, and at once
    stops = 0
    os.tcsetpgrp(slave, job); os.killpg(job, signal.SIGCONT)        # fg
    open("go", "w").close()
    end = time.time() + 15
    while True:
        pid, st = os.waitpid(job, os.WUNTRACED | os.WNOHANG)
        if pid and os.WIFSTOPPED(st):
            stops += 1
            if stops == 5: os.killpg(job, signal.SIGKILL)
            os.tcsetpgrp(slave, job); os.killpg(job, signal.SIGCONT)
            continue
        if pid or time.time() > end: break
        drain(); time.sleep(0.005)
    print("stops after the last fg:", stops)
    if pid: ended(st)
    else: print("hung after fg"); os.killpg(job, signal.SIGKILL)
    sys.exit(0)
if how == "setsid":
    # setsid forks (the job's leader) and its parent exits at once: the shell's prompt.
    os.waitpid(job, 0)
    os.tcsetpgrp(slave, shell)
    until(lambda: os.path.exists("ready"))
    os.write(master, b"secret-typed-to-the-shell\n")
    shell_reads()
    until(lambda: os.path.exists("done"))
    sys.exit(0)
until(lambda: os.path.exists("ready"))
if how == "amp-hangup":
    for fd in (mine, slave, master): os.close(fd)   # the window is closed: a hangup
    end = time.time() + 5
    while True:
        pid, st = os.waitpid(job, os.WNOHANG)
        if pid or time.time() > end: break
        time.sleep(0.01)
    if pid: print("ended", os.waitstatus_to_exitcode(st))
    else: print("runs on after the hangup"); os.killpg(job, signal.SIGKILL)
    sys.exit(0)
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

// A20-2: A19-1's copy of a background run's output to the terminal drops everything after
// the first write that fails, and a terminal whose open file is non-blocking (node, and
// whatever program ran before in that shell, leave it so; it is the caller's open file,
// which zpolicy writes through) fails a write with EAGAIN whenever its buffer is full: of
// 300 000 bytes the terminal showed about 12 000, and the run ended 0. The command itself,
// holding the terminal, would have seen EAGAIN and could retry; behind the pipe it sees its
// writes succeed. The copy waits for the terminal instead.
BOOST_DATA_TEST_CASE(a_background_runs_output_reaches_a_non_blocking_terminal_whole,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string command =
      "import sys; open('writing', 'w').close(); sys.stdout.write('y' * 300000 + 'LAST'); "
      "sys.stdout.flush()";
  const RunResult r =
      box.host_command({"/usr/bin/python3", "-c", kJobShell, zpolicy_binary(), box.workspace(),
                        "amp-nonblock", json_argv({"/usr/bin/python3", "-c", command})});
  BOOST_TEST(r.out.find("terminal got 300004 bytes; the last came") != std::string::npos,
             r.describe());
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
}

// A20-5: `setsid zpolicy run -- agent` in an interactive shell runs zpolicy in a session of
// its own, with no controlling terminal, while the shell shows its prompt at once: the
// terminal on stdin passed as the command's input, and the command read the line typed to
// the shell. A terminal on stdin that another session holds, where no ancestor of zpolicy
// holding it is in its foreground, is /dev/null to the command, as for `&`.
BOOST_DATA_TEST_CASE(a_run_started_with_setsid_never_reads_what_is_typed_to_the_shell,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r = box.host_command(
      {"/usr/bin/python3", "-c", kJobShell, zpolicy_binary(), box.workspace(), "setsid",
       json_argv({"/bin/sh", "-c",
                  "touch ready; read -r l && echo \"$l\" >> stolen; touch done"})});
  BOOST_TEST(stolen(box).empty(), stolen(box));
  BOOST_TEST(r.out.find("shell got secret-typed-to-the-shell") != std::string::npos,
             r.describe());
}

// A20-6: the copy of a background run's output (A19-1) drops what the terminal refuses and
// goes on reading the pipe, so a command whose terminal is gone (its window closed: every
// write fails EIO) never learns it: one that writes until a write fails ran on until its
// timeout. Writing to the terminal itself, it would have ended at its next write. The copy
// should close the pipe's read end once the terminal fails for good (EIO), so that the
// command's next write fails (EPIPE) as it would have.
BOOST_DATA_TEST_CASE(a_background_run_learns_that_its_terminal_is_gone,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r = box.host_command(
      {"/usr/bin/python3", "-c", kJobShell, zpolicy_binary(), box.workspace(), "amp-hangup",
       json_argv({"/bin/sh", "-c", "touch ready; while echo x; do sleep 0.05; done"})});
  BOOST_TEST(r.out.find("ended") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("runs on after the hangup") == std::string::npos, r.describe());
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

// A20-7: session 20's fix of A19-4 holds a background run's copy to the terminal under `stty
// tostop` and stops the job for it with SIGTTOU, unless the caller left SIGTTOU ignored. One
// that left it blocked (a signal mask is inherited across exec) got its job held and
// stopped (A20-3's SIGSTOP) or, without it, raised a blocked SIGTTOU without end, where the
// kernel lets the write of a process that blocks SIGTTOU through. Blocked counts as ignored.
BOOST_DATA_TEST_CASE(a_background_run_under_tostop_with_sigttou_blocked_writes_through,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r = box.host_command({"/usr/bin/python3", "-c", kJobShell, zpolicy_binary(),
                                        box.workspace(), "amp-tostop-ttou-blocked",
                                        json_argv({"/bin/sh", "-c", "echo out-line; echo err-line >&2"})});
  BOOST_TEST(r.out.find("stopped") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
  BOOST_TEST(shows_in_order(r.out, "out-line", "err-line"), r.describe());
}

// A20-8: zpolicy answers ^Z by stopping the sandbox (a walk of its processes, milliseconds
// with many of them) and then itself. An `fg` that came meanwhile (a script's ^Z and SIGCONT,
// a storm of them) was over before zpolicy stopped, and the job stopped after it (one run in
// three of this case, with 30 processes in the sandbox), where the kernel discards a pending
// stop when SIGCONT is sent. A SIGCONT since the ^Z now answers it. The same storm on a run
// started with `&` under `stty tostop` (session 20's A19-4 fix) ends without a stop after fg.
BOOST_DATA_TEST_CASE(a_ctrl_z_overtaken_by_fg_does_not_stop_the_job_after_it,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string command =
      "for i in $(seq 30); do sleep 100 & done; touch ready; "
      "while [ ! -e go ]; do sleep 0.01; done; echo out-after-fg; echo err-after-fg >&2";
  for (const char* how : {"ctrl-z-storm", "amp-tostop-storm"}) {
    unlink(box.ws("go").c_str());
    unlink(box.ws("ready").c_str());
    const RunResult r =
        box.host_command({"/usr/bin/python3", "-c", kJobShell, zpolicy_binary(), box.workspace(),
                          how, json_argv({"/bin/sh", "-c", command})});
    BOOST_TEST(r.out.find("stops after the last fg: 0\n") != std::string::npos, how << r.describe());
    BOOST_TEST(r.out.find("ended 0") != std::string::npos, how << r.describe());
    BOOST_TEST(shows_in_order(r.out, "out-after-fg", "err-after-fg"), how << r.describe());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
