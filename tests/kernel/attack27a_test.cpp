#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "job_control_shell.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 27a (docs/redteam-2026-12.md "Attack 27a"): `zpolicy run` outside git,
// the terminal and the signals a sandbox can send. Each case runs as root and as uid 65534
// and is judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// On the host, as the caller: a session leader with a pseudo-terminal for its controlling
// terminal (job_control_shell) starts, as its foreground job, what a script run from a
// terminal does: `zpolicy run … | cat; echo after-run $?` in one process group, the
// terminal on 0-2. Once the command says "armed", a line is typed. Prints how the job
// ended (exited, killed or stopped by which signal) and what the terminal showed.
const std::string kScriptJob = std::string(kJobControlShell) + R"PY(
import fcntl, os, select, signal, sys, termios, time
z, ws, mode, inner, sig, how = sys.argv[1:7]
master, slave = job_control_shell(ws, termios.ECHO | termios.ICANON)
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    os.tcsetpgrp(slave, os.getpgrp())
    for s in (signal.SIGTTOU, signal.SIGPIPE): signal.signal(s, signal.SIG_DFL)
    os.dup2(slave, 0); os.dup2(slave, 1); os.dup2(slave, 2)
    os.execv("/bin/sh", ["/bin/sh", "-c",
        '"$0" run --mode "$1" -- /usr/bin/python3 -c "$2" "$3" "$4" | cat; echo "after-run $?"',
        z, mode, inner, sig, how])
try: os.setpgid(job, job)
except OSError: pass
groups.append(job)
out = b""
def drain(wait):
    global out
    while select.select([master], [], [], wait)[0]:
        try: got = os.read(master, 4096)
        except OSError: return
        if not got: return
        out += got
        wait = 0
end = time.time() + 20
while b"armed" not in out and time.time() < end: drain(0.05)
os.write(master, b"typed-line\n")
end = time.time() + 15
st = None
while st is None and time.time() < end:
    pid, s = os.waitpid(job, os.WNOHANG | os.WUNTRACED)
    if pid: st = s
    else: drain(0.05)
if st is None:
    print("job still running")
elif os.WIFSTOPPED(st):
    print("job stopped by", signal.Signals(os.WSTOPSIG(st)).name)
elif os.WIFSIGNALED(st):
    print("job killed by", signal.Signals(os.WTERMSIG(st)).name)
else:
    print("job exited", os.WEXITSTATUS(st))
if st is None or os.WIFSTOPPED(st):
    os.killpg(job, signal.SIGKILL)
    os.waitpid(job, 0)
drain(0.2)
print(out.decode(errors="replace"))
)PY";

// In the sandbox: F_SETSIG chooses the signal (0: SIGIO), then signal-driven I/O is turned
// on for the terminal on stdin, by fcntl(F_SETFL, O_ASYNC), by ioctl(FIOASYNC), or asked
// for by opening the terminal again with O_ASYNC (which the kernel ignores at open); then
// the command reads the line typed.
const std::string kArmAsync = R"PY(
import fcntl, os, struct, sys, time
sig, how = int(sys.argv[1]), sys.argv[2]
fd = 0
try:
    if how == "open":
        fd = os.open("/proc/self/fd/0", os.O_RDONLY | os.O_ASYNC)
        print("async opened", flush=True)
    fcntl.fcntl(fd, 10, sig)
    if how == "fcntl":
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
    elif how == "ioctl":
        fcntl.ioctl(fd, 0x5452, struct.pack("i", 1))
    if how != "open": print("async on", flush=True)
except OSError as e:
    print("async refused", e.errno, flush=True)
print("armed", flush=True)
print("read", os.read(fd, 100).decode().strip(), flush=True)
time.sleep(1)
)PY";

// On the host, as the caller: a process that uses signal-driven I/O itself on the pipe it
// gives the run for stdin (O_ASYNC on, itself the owner, SIGIO handled) starts `zpolicy run`,
// whose command tries F_SETSIG(SIGKILL) on its stdin, the caller's own open file; then the
// caller writes into the pipe, and its own SIGIO comes. Prints what the command said and
// how the caller ended.
const std::string kAsyncCaller = R"PY(
import fcntl, os, signal, subprocess, sys, time
z, ws, mode = sys.argv[1:4]
inner = (
    "import fcntl, sys\n"
    "try:\n"
    "    fcntl.fcntl(0, 10, 9)\n"
    "    print('setsig done', flush=True)\n"
    "except OSError as e:\n"
    "    print('setsig refused', e.errno, flush=True)\n"
    "sys.stdin.read()\n")
caller = os.fork()
if caller == 0:
    signal.signal(signal.SIGIO, lambda *_: None)
    r, w = os.pipe()
    fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
    p = subprocess.Popen([z, "run", "--mode", mode, "--", "/usr/bin/python3", "-c", inner],
                         stdin=r, stdout=subprocess.PIPE, cwd=ws)
    print(p.stdout.readline().decode().strip(), flush=True)
    os.write(w, b"x")
    time.sleep(0.5)
    print("caller alive after its write", flush=True)
    os.close(w)
    p.stdout.read()
    os._exit(p.wait())
_, st = os.waitpid(caller, 0)
if os.WIFSIGNALED(st): print("caller killed by", signal.Signals(os.WTERMSIG(st)).name)
else: print("caller exited", os.WEXITSTATUS(st))
)PY";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack27a)

// A27A-1: signal-driven I/O on a terminal signals the terminal's foreground process group:
// the kernel makes it the open file's owner when O_ASYNC is turned on (__tty_fasync), and
// F_SETSIG chooses the signal. From a run in the foreground of the caller's terminal, the
// sandbox so signalled the caller's job on the host whenever a line was typed: SIGIO (its
// default ends a process) killed the script's shell and `cat`; SIGKILL killed them and
// zpolicy itself; SIGSTOP stopped zpolicy, and the command ran on past its timeout. Turning
// signal-driven I/O on is refused now (EPERM), both ways, and the job ends as it should; a
// terminal opened again with O_ASYNC gets nothing turned on (the kernel ignores the flag at
// open), before the fix and after.
BOOST_DATA_TEST_CASE(the_sandbox_cannot_signal_the_callers_job_through_its_terminal,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  struct Attempt {
    const char* signal;  // F_SETSIG's argument
    const char* how;
    const char* answer;  // what the command says of its attempt
  };
  for (const std::string mode : {"workspace-write", "read-only"})
    for (const Attempt a :
         {Attempt{"0", "fcntl", "async refused 1"}, Attempt{"9", "ioctl", "async refused 1"},
          Attempt{"19", "fcntl", "async refused 1"}, Attempt{"9", "open", "async opened"}}) {
      const RunResult r = box.host_command({"/usr/bin/python3", "-c", kScriptJob, zpolicy_binary(),
                                            box.workspace(), mode, kArmAsync, a.signal, a.how});
      const std::string what = mode + " signal " + a.signal + " by " + a.how + ": " + r.describe();
      BOOST_TEST(r.out.find(a.answer) != std::string::npos, what);
      BOOST_TEST(r.out.find("async on") == std::string::npos, what);
      BOOST_TEST(r.out.find("read typed-line") != std::string::npos, what);
      BOOST_TEST(r.out.find("after-run 0") != std::string::npos, what);
      BOOST_TEST(r.out.find("job exited 0") != std::string::npos, what);
    }
}

// A27A-1, the signal's other half: a pipe or socket on 0-2 reaches the command as the
// caller's own open file, and a caller that had signal-driven I/O on it for itself gets the
// signal that file names. The command's F_SETSIG(SIGKILL) on it made the caller's next SIGIO
// a SIGKILL: the caller died when it wrote into its pipe. F_SETSIG is refused now (EPERM).
BOOST_DATA_TEST_CASE(the_sandbox_cannot_choose_the_signal_of_the_callers_own_file,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const std::string mode : {"workspace-write", "read-only"}) {
    const RunResult r = box.host_command(
        {"/usr/bin/python3", "-c", kAsyncCaller, zpolicy_binary(), box.workspace(), mode});
    BOOST_TEST(r.out.find("setsig refused 1") != std::string::npos, mode + ": " + r.describe());
    BOOST_TEST(r.out.find("caller alive after its write") != std::string::npos,
               mode + ": " + r.describe());
    BOOST_TEST(r.out.find("caller exited 0") != std::string::npos, mode + ": " + r.describe());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
