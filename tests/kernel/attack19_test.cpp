#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "job_control_shell.hpp"
#include "sandbox_fixture.hpp"

// Attack 19 (docs/redteam-2026-12.md "Attack 19 (attack19)"): session 18's job control
// (R18-3, R18-4) attacked from the terminals and shells users have. Each case is a
// finding's reproduction, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack19)

namespace {

// On the host, as the caller: a job-control shell of its own making (a session leader
// holding a pseudo-terminal's both ends: it types into the master and is the foreground
// process group between jobs) that starts `zpolicy run -- sh -c CMD` as a job in a process
// group of its own, with the terminal on stdout and stderr, and on stdin unless `null` is
// in HOW. Every step waits for the event it needs (a stop, an exit, a file), not for time.
// Prints what the shell itself read from the terminal and how the job ended; the command
// writes what it read to `stolen` in the workspace.
//   amp:   the line is typed before the job starts in the background (`&`);
//   bg:    the job starts in the foreground, is stopped (^Z) once its command runs, sent
//          to the background (`bg`), and the line is typed;
//   early: as bg, but ^Z comes while bwrap still sets up, before the command is released.
// Where the job is held stopped in the background, the shell reads the line itself, then
// `fg`, types `after-fg`, and the job ends.
const std::string kShell = std::string(kJobControlShell) + R"PY(
import fcntl, os, select, signal, sys, termios, time
z, ws, how, cmd = sys.argv[1:5]
master, slave = job_control_shell(ws, termios.ECHO | termios.ICANON)
shell = os.getpgrp()
if how.startswith("amp-tostop"):
    a = termios.tcgetattr(slave); a[3] |= termios.TOSTOP
    termios.tcsetattr(slave, termios.TCSANOW, a)
elif how.startswith("amp"):
    os.write(master, b"secret-typed-to-the-shell\n")
def start(group):
    job = os.fork()
    if job == 0:
        if group: os.setpgid(0, 0)
        if not how.startswith("amp"): os.tcsetpgrp(slave, os.getpgrp())
        for s in (signal.SIGTTOU, signal.SIGPIPE): signal.signal(s, signal.SIG_DFL)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null if "null" in how else slave, 0); os.dup2(slave, 1); os.dup2(slave, 2)
        os.execv(z, [z, "run", "--", "/bin/sh", "-c", cmd])
    if group:
        try: os.setpgid(job, job)
        except OSError: pass
        groups.append(job)
    return job
out = b""
def drain():
    global out
    while select.select([master], [], [], 0)[0]: out += os.read(master, 4096)
def until(check):
    while not check(): drain(); time.sleep(0.005)
def shell_reads():
    if not select.select([slave], [], [], 1.0)[0]: print("shell got nothing")
    else: print("shell got", os.read(slave, 100).decode().strip())
def ended(st):
    print("ended", os.waitstatus_to_exitcode(st)); drain(); print(out.decode(errors="replace"))
def parent(p):
    try: return open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1]
    except OSError: return None
def has_child(pid):
    return any(parent(p) == str(pid) for p in os.listdir("/proc") if p.isdigit())
def state(p):
    try: return open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[0]
    except OSError: return "gone"
def alive(pid):
    try: return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError: return False
if how == "orphan-null":
    # A script, the shell's foreground job, starts the run with `&` (no job control: in the
    # script's process group, stdin /dev/null) and exits once the command runs; the shell
    # takes the terminal back, and nothing signals the run.
    rd, wr = os.pipe()
    script = os.fork()
    if script == 0:
        os.setpgid(0, 0); os.tcsetpgrp(slave, os.getpgrp())
        os.write(wr, str(start(False)).encode())
        while not os.path.exists("ready"): time.sleep(0.005)
        os._exit(0)
    os.setpgid(script, script)
    groups.append(script)
    os.close(wr)
    job = int(os.read(rd, 32))
    os.waitpid(script, 0)
    os.tcsetpgrp(slave, shell)
    end = time.time() + 3
    until(lambda: not alive(job) or time.time() > end)
    os.write(master, b"secret-typed-to-the-shell\n")
    shell_reads()
    end = time.time() + 5
    until(lambda: not alive(job) or time.time() > end)
    drain(); print("job gone" if not alive(job) else "job runs on")
    print(out.decode(errors="replace"))
    sys.exit(0)
if how == "script":
    # A script, the shell's foreground job, runs the run in its own process group (no job
    # control) and waits for it, as `sh -c 'zpolicy run …'` does; the job is the script's.
    script = os.fork()
    if script == 0:
        os.setpgid(0, 0); os.tcsetpgrp(slave, os.getpgrp())
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os._exit(os.waitstatus_to_exitcode(os.waitpid(start(False), 0)[1]) & 255)
    os.setpgid(script, script)
    groups.append(script)
    until(lambda: os.path.exists("ready"))
    os.killpg(script, signal.SIGTSTP)         # ^Z
    os.waitpid(script, os.WUNTRACED)
    zp = [p for p in os.listdir("/proc") if p.isdigit() and parent(p) == str(script)]
    until(lambda: all(state(p) == "T" for p in zp))   # the whole job stopped
    os.tcsetpgrp(slave, shell)
    os.killpg(script, signal.SIGCONT)         # bg
    os.write(master, b"secret-typed-to-the-shell\n")
    end = time.time() + 3
    while True:
        pid, st = os.waitpid(script, os.WUNTRACED | os.WNOHANG)
        if pid or time.time() > end: break
        drain(); time.sleep(0.005)
    print("held in the background" if pid and os.WIFSTOPPED(st) else "the shell saw no stop")
    shell_reads()
    os.tcsetpgrp(slave, script)               # fg
    os.killpg(script, signal.SIGCONT)
    os.write(master, b"after-fg\n")
    end = time.time() + 5
    while True:
        pid, st = os.waitpid(script, os.WNOHANG)
        if pid or time.time() > end: break
        drain(); time.sleep(0.005)
    if pid: ended(st)
    else: print("hung after fg"); os.killpg(script, signal.SIGKILL)
    sys.exit(0)
job = start(True)
if how.startswith("amp-tostop"):
    stops = 0
    while True:
        _, st = os.waitpid(job, os.WUNTRACED)
        if not os.WIFSTOPPED(st): break
        stops += 1
        print("stopped", stops, "times")
        if stops == 5: os.killpg(job, signal.SIGKILL)
        if how.startswith("amp-tostop-bg") and stops == 1:
            print("stopped by", signal.Signals(os.WSTOPSIG(st)).name)
            os.killpg(job, signal.SIGCONT)    # bg
            continue
        os.tcsetpgrp(slave, job)          # fg
        os.killpg(job, signal.SIGCONT)
    ended(st); sys.exit(0)
if how.startswith("amp"):
    _, st = os.waitpid(job, 0)
    shell_reads(); ended(st); sys.exit(0)
if how == "early":
    until(lambda: has_child(job))       # the guard: past the streams' look, before the release
else:
    until(lambda: os.path.exists("ready"))
os.killpg(job, signal.SIGTSTP)            # ^Z
_, st = os.waitpid(job, os.WUNTRACED)
print("job stopped" if os.WIFSTOPPED(st) else "job did not stop")
os.tcsetpgrp(slave, shell)                # the shell's prompt
os.killpg(job, signal.SIGCONT)            # bg
os.write(master, b"secret-typed-to-the-shell\n")
_, st = os.waitpid(job, os.WUNTRACED)
if not os.WIFSTOPPED(st):
    print("ran on in the background"); shell_reads(); ended(st); sys.exit(0)
print("held in the background")
shell_reads()
os.tcsetpgrp(slave, job)                  # fg
os.killpg(job, signal.SIGCONT)
until(lambda: os.path.exists("ready"))
os.write(master, b"after-fg\n")
_, st = os.waitpid(job, 0)
ended(st)
)PY";

// On the host, as the caller: another terminal of the caller's (a second window, not
// zpolicy's controlling terminal) with a line typed into it, given to the run for stdout and
// stderr only (`> /dev/pts/N 2>&1`); the command reads them at once, through the
// descriptors and opened again, then writes a line. Prints what the window shows and
// whether the typed line is still there for its own shell.
const std::string kOtherWindow = R"PY(
import os, select, sys
z, ws = sys.argv[1:3]
master, slave = os.openpty()
os.write(master, b"typed-in-the-other-window\n")
job = os.fork()
if job == 0:
    os.chdir(ws)
    fd = os.open(os.ttyname(slave), os.O_WRONLY | os.O_NOCTTY)
    os.dup2(fd, 1); os.dup2(fd, 2)
    os.execv(z, [z, "run", "--", "/usr/bin/python3", "-c", sys.argv[3]])
st = os.waitpid(job, 0)[1]
shown = b""
while select.select([master], [], [], 0)[0]: shown += os.read(master, 4096)
print("ended", os.waitstatus_to_exitcode(st))
print("shown:", shown.decode(errors="replace"))
left = os.read(slave, 100).decode().strip() if select.select([slave], [], [], 0)[0] else "nothing"
print("the window still has", left)
)PY";

// On the host, as the caller: `zpolicy run` in a process group of its own (a
// shell's job, no terminal), whose command starts a program with posix_spawn (vfork) and
// whose child blocks before its exec (opening a FIFO nobody writes): the parent waits in
// the kernel ('D') for an exec that does not come. Once it does, ^Z (SIGTSTP to the job),
// then SIGCONT, and the FIFO gets a writer: the child execs, and the run ends. Prints how
// the job stopped and ended.
const std::string kVforkStop = R"PY(
import os, signal, sys, time
z, ws = sys.argv[1:3]
os.chdir(ws)
spawn = ("import os; os.posix_spawn('/bin/true', ['true'], {}, "
         "file_actions=[(os.POSIX_SPAWN_OPEN, 0, 'fifo', os.O_RDONLY, 0)])")
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    os.execv(z, [z, "run", "--", "/bin/sh", "-c",
                 "mkfifo fifo && exec /usr/bin/python3 -c \"" + spawn + "\" zpolicy-a19-vfork"])
def state(p):
    try: return open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[0]
    except OSError: return None
def waits_for_its_child():
    for p in os.listdir("/proc"):
        try: marked = b"zpolicy-a19-vfork" in open("/proc/%s/cmdline" % p, "rb").read()
        except OSError: continue
        if marked and state(p) == "D": return True
    return False
end = time.time() + 15
while not waits_for_its_child() and time.time() < end: time.sleep(0.005)
os.kill(job, signal.SIGTSTP)
_, st = os.waitpid(job, os.WUNTRACED)
if os.WIFSTOPPED(st):
    print("stopped")
    os.kill(job, signal.SIGCONT)
    # The child's open goes through once the FIFO has a writer: it execs, and all ends.
    end = time.time() + 10
    while time.time() < end:
        pid, st = os.waitpid(job, os.WNOHANG)
        if pid: break
        try: os.close(os.open("fifo", os.O_WRONLY | os.O_NONBLOCK))
        except OSError: time.sleep(0.005)
    else:
        os.kill(job, signal.SIGKILL); _, st = os.waitpid(job, 0)
    if not pid: _, st = os.waitpid(job, 0)
print("ended", os.waitstatus_to_exitcode(st))
)PY";

std::string stolen(const Sandbox& box) { return read_file(box.ws("stolen")).value_or(""); }

// Python: reads, without blocking, what is there to read through each of `hows` (a tuple
// of 'fdN', descriptor N, or 'procN', /proc/self/fd/N opened anew), writes what it got (or
// the error) to `stolen`, then runs `then`.
std::string terminal_reader(const std::string& hows, const std::string& then) {
  return "import os, select\n"
         "got = []\n"
         "for how in " + hows + ":\n"
         "    try:\n"
         "        fd = os.open('/proc/self/fd/' + how[-1], os.O_RDONLY | os.O_NONBLOCK) "
         "if how.startswith('proc') else int(how[-1])\n"
         "        if select.select([fd], [], [], 0)[0]:\n"
         "            got.append(how + ' ' + os.read(fd, 100).decode())\n"
         "    except OSError as e: got.append(how + ' ' + e.strerror)\n"
         "open('stolen', 'w').write('\\n'.join(got))\n" + then;
}

// A run the shell `r` reports on was held in the background while the shell read what was
// typed to it, and read the terminal again only once in the foreground, then ended 0.
void expect_held_until_fg(const Sandbox& box, const RunResult& r) {
  BOOST_TEST(r.out.find("held in the background") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("shell got secret-typed-to-the-shell") != std::string::npos,
             r.describe());
  BOOST_TEST(stolen(box) == "after-fg\n", r.describe());
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
}

}  // namespace

// A19-1: R18-4 keeps the command from reading the terminal in the background through its
// stdin, but the terminal is one file whichever descriptor holds it: the shell's own
// descriptors are all read-write, so the command read what was typed to the shell through
// stdout (`read <&1`), and a write-only one (`> /dev/pts/N`) was opened again for reading
// through /proc/self/fd/1. Started in the background, stdout and stderr on the terminal
// now reach it through a pipe zpolicy copies (the output still shows, in order); sent to
// the background later, the command is held stopped until `fg`, as with the terminal on
// stdin.
BOOST_DATA_TEST_CASE(a_background_run_never_reads_the_terminal_through_its_output,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string reader = terminal_reader(
      "('fd0', 'fd1', 'fd2', 'proc1', 'proc2')",
      "print('visible-output', flush=True); print('second-line', file=__import__('sys').stderr)\n");
  const std::string amp = "/usr/bin/python3 -c \"" + reader + "\"";
  const RunResult started = box.host_command({"/usr/bin/python3", "-c", kShell, zpolicy_binary(),
                                              box.workspace(), "amp-null", amp});
  BOOST_TEST(stolen(box).find("secret") == std::string::npos, stolen(box));
  BOOST_TEST(started.out.find("shell got secret-typed-to-the-shell") != std::string::npos,
             started.describe());
  // What the command writes still shows on the terminal, stdout's before stderr's.
  BOOST_TEST(shows_in_order(started.out, "visible-output", "second-line"), started.describe());
  BOOST_TEST(started.out.find("ended 0") != std::string::npos, started.describe());

  unlink(box.ws("stolen").c_str());
  const std::string bg = "touch ready; read -r l <&1; echo \"$l\" >> stolen";
  const RunResult later = box.host_command({"/usr/bin/python3", "-c", kShell, zpolicy_binary(),
                                            box.workspace(), "bg-null", bg});
  BOOST_TEST(stolen(box).find("secret") == std::string::npos, stolen(box));
  // In the foreground again, the command reads the terminal as before.
  expect_held_until_fg(box, later);
}

// A19-6: a terminal on stdout or stderr that is not zpolicy's controlling terminal (another
// window's, `> /dev/pts/N`; any terminal under `setsid`) was handed to the sandbox as it was:
// no job control stands between the sandbox and it, and opened again for reading through
// /proc/self/fd/1 it gave the sandbox what was typed in that window. Such a terminal now
// gets what the command writes through a pipe zpolicy copies into it.
BOOST_DATA_TEST_CASE(a_terminal_given_for_output_only_is_not_read, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string reader = terminal_reader("('fd1', 'fd2', 'proc1', 'proc2')",
                                             "print('written-to-the-window', flush=True)\n");
  const RunResult r = box.host_command(
      {"/usr/bin/python3", "-c", kOtherWindow, zpolicy_binary(), box.workspace(), reader});
  BOOST_TEST(stolen(box).find("typed") == std::string::npos, stolen(box));
  BOOST_TEST(r.out.find("the window still has typed-in-the-other-window") != std::string::npos,
             r.describe());
  BOOST_TEST(r.out.find("written-to-the-window") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
}

// A19-7: R18-3 stops the sandbox by walking it until no process runs, and took a process
// waiting in the kernel ('D') for running: a vfork parent (posix_spawn, as make, ninja and
// every runtime start programs) whose child the walk stopped before its exec waits so for
// good, and ^Z of such a build killed the sandbox as one that could not be stopped (exit
// 148; one ^Z in three of a loop of posix_spawn). Such a process runs no code of its own
// and stops before it does: it counts as stopped.
BOOST_DATA_TEST_CASE(a_build_that_starts_programs_is_stopped_not_killed_by_ctrl_z,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r =
      box.host_command({"/usr/bin/python3", "-c", kVforkStop, zpolicy_binary(), box.workspace()});
  BOOST_TEST(r.out.find("stopped") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
  BOOST_TEST(r.err.find("interrupted") == std::string::npos, r.describe());
}

// A19-4: under `stty tostop` the copy to the terminal (A19-1) of a run started in the
// background stops the job, as the command's own write would: each retry of the copy's
// write raised SIGTTOU until zpolicy stopped, and the ones left over stopped the job again
// after `fg` (status 150); one that came while zpolicy stopped itself for the first stopped
// the job a second time after `fg`. It stops once, and `fg` shows the output.
BOOST_DATA_TEST_CASE(a_background_run_under_tostop_stops_and_shows_its_output_after_fg,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r = box.host_command({"/usr/bin/python3", "-c", kShell, zpolicy_binary(),
                                        box.workspace(), "amp-tostop-null",
                                        "echo out-after-fg; echo err-after-fg >&2"});
  BOOST_TEST(r.out.find("stopped 1 times") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("stopped 2 times") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
  BOOST_TEST(shows_in_order(r.out, "out-after-fg", "err-after-fg"), r.describe());
}

// A19-4, the same after `bg`: the job stops again, as a background writer does under
// `stty tostop` ("Stopped (tty output)"), and `fg` shows the output; the command's output
// comes after a while, and the job is continued in the background while the sandbox still
// runs, and after it has ended.
BOOST_DATA_TEST_CASE(a_background_run_under_tostop_stops_again_after_bg,
                     bdata::make(kCallers), caller) {
  for (const std::string command : {"echo out-after-fg; echo err-after-fg >&2",
                                    "sleep 0.3; echo out-after-fg; echo err-after-fg >&2"}) {
    Sandbox box(caller);
    const RunResult r = box.host_command({"/usr/bin/python3", "-c", kShell, zpolicy_binary(),
                                          box.workspace(), "amp-tostop-bg-null", command});
    BOOST_TEST(r.out.find("stopped by SIGTTOU") != std::string::npos, r.describe());
    BOOST_TEST(r.out.find("stopped 2 times") != std::string::npos, r.describe());
    BOOST_TEST(r.out.find("stopped 3 times") == std::string::npos, r.describe());
    BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
    BOOST_TEST(shows_in_order(r.out, "out-after-fg", "err-after-fg"), r.describe());
  }
}

// A19-5: held in the background (R18-4, A19-1), zpolicy stopped alone, and when a script
// runs it (`sh -c 'zpolicy run …'`, in the script's process group), the script ran on: the
// shell saw its job running, and its `fg` sends no SIGCONT to a running job, so the run
// hung for good; a second `bg` took the group for orphaned (zpolicy's parent is in it) and
// killed the sandbox. The kernel stops a background reader's whole group: so does zpolicy.
BOOST_DATA_TEST_CASE(a_run_in_a_script_held_in_the_background_goes_on_after_fg,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r =
      box.host_command({"/usr/bin/python3", "-c", kShell, zpolicy_binary(), box.workspace(),
                        "script", "touch ready; read -r l; echo \"$l\" >> stolen"});
  expect_held_until_fg(box, r);
}

// A19-2: R18-4 holds a command stopped in the background only once it was released. ^Z
// while bwrap still set up (a workspace of many mounts takes seconds), then `bg`, found no
// command to hold, and the command was released into the background with the terminal on
// stdin: it read what was typed to the shell. It is not released until `fg`.
BOOST_DATA_TEST_CASE(a_run_stopped_before_its_command_starts_is_not_released_into_the_background,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  // Mounts that make bwrap's setup take long enough for ^Z to land in it.
  box.host_command({"/bin/sh", "-c", "cd \"$1\" && for i in $(seq 60); do mkfifo f$i; done", "sh",
                    box.workspace()});
  const std::string command = "touch ready; read -r l; echo \"$l\" >> stolen";
  const RunResult r = box.host_command(
      {"/usr/bin/python3", "-c", kShell, zpolicy_binary(), box.workspace(), "early", command});
  BOOST_TEST(r.out.find("job stopped") != std::string::npos, r.describe());
  BOOST_TEST(stolen(box).find("secret") == std::string::npos, stolen(box));
  expect_held_until_fg(box, r);
}

// A19-3: a run's process group leaves the terminal's foreground without a stop or a
// SIGCONT when what started it is gone: a script that runs `zpolicy run … &` (no job
// control: the script's process group, stdin /dev/null) and exits while the command runs,
// or `( zpolicy run … & )`; the shell then takes the terminal back. Nothing told zpolicy,
// and the command read what was typed at the prompt through its stdout. The foreground is
// now looked at while the command holds the terminal, and such a run (orphaned: nothing can
// stop it) is killed before the next line typed to the shell.
BOOST_DATA_TEST_CASE(a_run_its_script_left_in_the_background_never_reads_the_terminal,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string command = "touch ready; read -r l <&1; echo \"$l\" >> stolen";
  const RunResult r = box.host_command({"/usr/bin/python3", "-c", kShell, zpolicy_binary(),
                                        box.workspace(), "orphan-null", command});
  BOOST_TEST(stolen(box).empty(), stolen(box));
  BOOST_TEST(r.out.find("shell got secret-typed-to-the-shell") != std::string::npos,
             r.describe());
  BOOST_TEST(r.out.find("job gone") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("left in the background of the terminal its command holds") !=
                 std::string::npos,
             r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
