#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "job_control_shell.hpp"
#include "json_argv.hpp"
#include "sandbox_fixture.hpp"

// Attack on session 20's copy of a sandbox's output (docs/redteam-2026-12.md "Attack copy
// 20 (attackcopy20)"): `StandardStreams::copy`, which writes a background run's output to
// the terminal and holds it under `stty tostop` until the job is in the foreground. Each
// case is a finding's reproduction, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack_copy20)

namespace {

// On the host, as the caller: a job-control shell of its own making (a session leader
// holding a pseudo-terminal's both ends) that starts `zpolicy run -- ARGV...` as a job with
// `&` (a process group of its own, in the background, the terminal on 0-2), `stty tostop`
// off. Once `writing` exists and 0.5 s passed with nothing reading the terminal (its buffer
// full, the copy's write blocked halfway), the job is stopped (`kill -TSTP %1`); once it
// is, the terminal is read empty, `stty tostop` set, and the job continued (`bg`). Prints
// how many bytes the terminal got in the background after that `bg` (the kernel stops a
// background job at its next write: none) and whether the job stopped or ended within 3 s;
// a stopped job is then put in the foreground (`fg`) and the terminal read to its end.
const std::string kCopyShell = std::string(kJobControlShell) + R"PY(
import fcntl, json, os, select, signal, sys, termios, time
z, ws, argv = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
master, slave = job_control_shell(ws, termios.ECHO | termios.ICANON, raw_output=True,
                                  ignore_hangup=True)
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    for s in (signal.SIGTTOU, signal.SIGPIPE, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
    os.dup2(slave, 0); os.dup2(slave, 1); os.dup2(slave, 2)
    os.execv(z, [z, "run", "--"] + argv)
try: os.setpgid(job, job)
except OSError: pass
groups.append(job)
def drain():
    n = 0
    while select.select([master], [], [], 0)[0]: n += len(os.read(master, 65536))
    return n
while not os.path.exists("writing"): time.sleep(0.005)
time.sleep(0.5)
os.killpg(job, signal.SIGTSTP)                          # kill -TSTP %1
_, st = os.waitpid(job, os.WUNTRACED)
if not os.WIFSTOPPED(st): print("job did not stop"); sys.exit(0)
time.sleep(0.2)
before = drain()
a = termios.tcgetattr(slave); a[3] |= termios.TOSTOP    # stty tostop
termios.tcsetattr(slave, termios.TCSANOW, a)
os.killpg(job, signal.SIGCONT)                          # bg
after, pid = 0, 0
end = time.time() + 3
while time.time() < end:
    after += drain()
    pid, st = os.waitpid(job, os.WUNTRACED | os.WNOHANG)
    if pid: break
    time.sleep(0.01)
after += drain()
print("in the background after bg:", after, "bytes")
if not pid: print("neither stopped nor ended in 3 s"); os.killpg(job, signal.SIGKILL); sys.exit(0)
if not os.WIFSTOPPED(st): print("ended", os.waitstatus_to_exitcode(st)); sys.exit(0)
print("stopped")
os.tcsetpgrp(slave, job); os.killpg(job, signal.SIGCONT)   # fg
total = before + after
while True:
    if select.select([master], [], [], 0.2)[0]:
        total += len(os.read(master, 65536)); continue
    pid, st = os.waitpid(job, os.WNOHANG)
    if pid: break
total += drain()
print("terminal got", total, "bytes; ended", os.waitstatus_to_exitcode(st))
)PY";

// On the host, as the caller: a job-control shell as kCopyShell's, under `stty tostop`,
// whose job (a process group of its own, in the background, the terminal on 0-2) is a
// script `(zpolicy run -- ARGV... &); sleep 30`: the subshell forks zpolicy and ends at
// once, so zpolicy's parent is init, while the script waits on in the group, its parent
// the shell (the group is not orphaned: the kernel stops it). Prints whether zpolicy
// stopped within 3 s; a stopped job is put in the foreground (`fg`), and once zpolicy is
// gone (within 10 s) the terminal's output is printed.
const std::string kScriptShell = std::string(kJobControlShell) + R"PY(
import fcntl, json, os, select, signal, sys, termios, time
z, ws, argv = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
master, slave = job_control_shell(ws, termios.TOSTOP, raw_output=True, ignore_hangup=True)
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    for s in (signal.SIGTTOU, signal.SIGPIPE, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
    os.dup2(slave, 0); os.dup2(slave, 1); os.dup2(slave, 2)
    sub = os.fork()
    if sub == 0:
        run = os.fork()
        if run == 0: os.execv(z, [z, "run", "--"] + argv)
        open("run-pid", "w").write(str(run))
        os._exit(0)
    os.waitpid(sub, 0)
    time.sleep(30)
    os._exit(0)
try: os.setpgid(job, job)
except OSError: pass
groups.append(job)
while not os.path.exists("run-pid"): time.sleep(0.005)
time.sleep(0.05)
run = open("run-pid").read()
def state():
    try: return open("/proc/%s/stat" % run).read().rsplit(")", 1)[1].split()[0]
    except OSError: return "gone"
out = b""
def drain():
    global out
    while select.select([master], [], [], 0)[0]: out += os.read(master, 65536)
end = time.time() + 3
while time.time() < end and state() not in ("T", "gone"): drain(); time.sleep(0.01)
print("zpolicy", "stopped" if state() == "T" else state())
if state() == "T":
    os.tcsetpgrp(slave, job); os.killpg(job, signal.SIGCONT)   # fg
end = time.time() + 10
while time.time() < end and state() not in ("gone", "Z"): drain(); time.sleep(0.01)
time.sleep(0.1); drain()
print("zpolicy", state(), "terminal:", out.decode(errors="replace"))
os.killpg(job, signal.SIGKILL)
)PY";

}  // namespace

// C20-1: the copy looked at the foreground once for what one read of the pipe got (up to 64
// KiB) and wrote it with as many writes as the terminal took. A write cut short by a stop
// (^Z, `kill -TSTP`: it returns what it wrote) went on after `bg` without a look, so the
// rest of that read (53 760 bytes here) reached the terminal in the background under `stty
// tostop`, where the kernel stops a background job at its next write. Every write looks now.
BOOST_DATA_TEST_CASE(a_write_cut_short_by_a_stop_is_held_after_bg_under_tostop,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string command =
      "import os\n"
      "open('writing', 'w').close()\n"
      "d = b'y' * 300000 + b'LAST'\n"
      "while d: d = d[os.write(1, d):]\n";
  const RunResult r =
      box.host_command({"/usr/bin/python3", "-c", kCopyShell, zpolicy_binary(), box.workspace(),
                        json_argv({"/usr/bin/python3", "-c", command})});
  BOOST_TEST(r.out.find("in the background after bg: 0 bytes\n") != std::string::npos,
             r.describe());
  BOOST_TEST(r.out.find("stopped\n") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("terminal got 300004 bytes; ended 0") != std::string::npos,
             r.describe());
}

// C20-2: whether the kernel stops a process group (not orphaned: a member has its parent in
// another group of the session) was judged by zpolicy's ancestors in its group alone. `(zpolicy
// run … &)` in a script run as a job leaves zpolicy's parent gone while the script waits in
// the group: taken for orphaned, the copy under `stty tostop` dropped the output ("hi" never
// shown) and the run ended 0, where the kernel stops the job (the same writer as the
// script's child: stopped). Every member of the group is looked at now.
BOOST_DATA_TEST_CASE(a_run_whose_parent_is_gone_in_a_group_the_kernel_stops_is_held_under_tostop,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r =
      box.host_command({"/usr/bin/python3", "-c", kScriptShell, zpolicy_binary(),
                        box.workspace(), json_argv({"/bin/sh", "-c", "echo out-line"})});
  BOOST_TEST(r.out.find("zpolicy stopped\n") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("out-line") != std::string::npos, r.describe());
}

// C20-3: a regular file on stdout and stderr (`> log 2>&1`, the way docs/run.md gives to run
// a command in the background) got a pipe and a copy each, so the log held stdout and
// stderr in whichever order the two threads ran: "err1" … "err200" before "out1". stderr on
// stdout's file shares its pipe now, as on a terminal.
BOOST_DATA_TEST_CASE(stdout_and_stderr_to_one_file_keep_their_order, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const RunResult r = box.host_command(
      {"/bin/sh", "-c",
       zpolicy_binary() +
           " run -- /bin/sh -c 'for i in $(seq 200); do echo out$i; echo err$i >&2; done' "
           "> log 2>&1 < /dev/null; echo ended $?"});
  std::string expected;
  for (int i = 1; i <= 200; ++i)
    expected += "out" + std::to_string(i) + "\nerr" + std::to_string(i) + "\n";
  BOOST_TEST(r.out.find("ended 0") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("log")).value_or("") == expected, r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
