#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 29a (docs/redteam-2026-12.md "Attack 29a"): signals, the run's status
// and the terminal, after session 29's A28D-4 fix. Each case runs as root and as uid 65534
// and is judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// A RunSpec::root_prefix: a job of its own (a process group whose parent, this script, is
// in another group of the session: not orphaned, so a stop signal stops it) running
// `strace -f` over what follows, bwrap's init's fork of the command (glibc's fork():
// clone(CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD)) held 0.5 s on entry. While
// it is held, the script sends zpolicy (strace's child) SIGTSTP, and once zpolicy is
// stopped looks 1.5 s long for the command's file `ran` in `workspace` (a process that
// runs while the job shows stopped); it writes what it saw into `seen`, then continues
// zpolicy and exits with the job's status.
std::vector<std::string> stop_while_the_init_forks(const std::string& workspace,
                                                   const std::string& seen) {
  const std::string script = python_own_job(R"(
def mine(pid):
    while pid > 1:
        if pid == job:
            return True
        status = read('/proc/%d/status' % pid).decode(errors='replace')
        pid = next((int(l.split()[1]) for l in status.splitlines() if l.startswith('PPid:')), 0)
    return False
def held():
    for d in os.listdir('/proc'):
        if d.isdigit() and read('/proc/%s/syscall' % d).startswith(b'%d 0x1200011 ' % SYS_CLONE) \
                and b'bwrap' in read('/proc/%s/cmdline' % d) and mine(int(d)):
            return True
    return False
def zpolicy():
    for d in os.listdir('/proc'):
        if d.isdigit():
            status = read('/proc/%s/status' % d).decode(errors='replace').splitlines()
            if 'Name:\tzpolicy' in status and 'PPid:\t%d' % job in status:
                return int(d)
    return 0
what = 'the init\'s fork was not held'
for _ in range(1000):
    if held():
        z = zpolicy()
        what = 'zpolicy not found'
        if z:
            os.kill(z, signal.SIGTSTP)
            what = 'zpolicy did not stop'
            for _ in range(500):
                if state(z) in 'tT':
                    what = 'nothing ran while zpolicy was stopped'
                    for _ in range(150):
                        if os.path.exists(os.path.join(workspace, 'ran')):
                            what = 'the command ran while zpolicy was stopped'
                            break
                        time.sleep(0.01)
                    break
                time.sleep(0.01)
            os.kill(z, signal.SIGCONT)
        break
    time.sleep(0.01)
)");
  const std::string with_number = "SYS_CLONE = " + std::to_string(SYS_clone) + "\n" + script;
  std::vector<std::string> argv = {"/usr/bin/python3", "-c", with_number, workspace, seen};
  for (auto& a : strace_holding("clone", 500000)) argv.push_back(std::move(a));
  return argv;
}

// A RunSpec::root_prefix: strace over what follows holds each process's first exit_group
// 2.5 s on entry (bwrap's monitor's, once it has reaped the sandbox's init and reported:
// the sandbox's own processes are killed, and make no such call). Meanwhile a script, as
// root, waits for the command's `ready` in `workspace`, notes the sandbox's init (pid 1 of
// its namespace, below this script), sends zpolicy SIGTERM twice (the second kills the
// sandbox), and once the init is gone starts a host process as uid `uid` that takes the
// init's pid (ns_last_pid; tried again while other processes take it first). A third
// SIGTERM follows, and the script writes into `seen` how that process ended.
std::vector<std::string> reuse_the_inits_pid(const std::string& workspace, const std::string& seen,
                                             uid_t uid) {
  const std::string script =
      std::string(kShellOwnProcesses) +
      "( w=\"$1\"; seen=\"$2\"; u=$3; echo 'the command did not start' > \"$seen\"; "
      "i=0; until [ -e \"$w/ready\" ] || [ $i -ge 1000 ]; do sleep 0.01; i=$((i+1)); done; "
      "z=; init=; for s in /proc/[0-9]*/status; do d=${s%/status}; p=${d#/proc/}; "
      "grep -qs \"^PPid:\t$$\\$\" $s && grep -qs \"^Name:\tzpolicy\\$\" $s && z=$p; "
      "grep -qs \"^NSpid:.*\t1\\$\" $s && grep -qs \"^Name:\tbwrap\" $s && mine $p && init=$p; "
      "done; "
      "echo \"no zpolicy ($z) or init ($init)\" > \"$seen\"; [ -n \"$z\" ] && [ -n \"$init\" ] || "
      "exit; "
      "kill -TERM $z; sleep 0.3; kill -TERM $z; "
      "i=0; while [ -e /proc/$init ] && [ $i -lt 100 ]; do sleep 0.01; i=$((i+1)); done; "
      "v=; for t in $(seq 1 50); do echo $((init-1)) > /proc/sys/kernel/ns_last_pid; "
      "setpriv --reuid $u --regid $u --clear-groups sleep 300 & v=$!; "
      "[ $v = $init ] && break; kill $v; wait $v; v=; done; "
      "echo 'no process took the pid of the init' > \"$seen\"; [ -n \"$v\" ] || exit; "
      "kill -TERM $z; sleep 0.5; "
      "if kill -0 $v; then echo 'alive' > \"$seen\"; kill $v; else wait $v; "
      "echo \"killed (status $?)\" > \"$seen\"; fi ) >/dev/null 2>&1 & shift 3; exec \"$@\"";
  std::vector<std::string> argv = {"/bin/sh",          "-c", script, "sh", workspace, seen,
                                   std::to_string(uid)};
  for (auto& a : strace_holding("exit_group", 2500000)) argv.push_back(std::move(a));
  return argv;
}

// On the host, as the caller: a file larger than zpolicy holds in memory (16 MiB) on the
// run's stdin, so that zpolicy feeds the rest through a pipe, and a unix socket pair on
// stdout that the harness reads only once zpolicy has exited (as one that collects output
// after the exit does). The command sends its stdin (the pipe's read end) into stdout
// (SCM_RIGHTS), says so in `sent`, and exits without reading. Prints how zpolicy ended, or
// that it had not 20 s on.
const std::string kFedStdinSentAway = R"PY(
import os, socket, subprocess, sys, tempfile
z, ws = sys.argv[1:3]
inner = (
    "import array, socket\n"
    "s = socket.socket(fileno=1)\n"
    "s.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [0]))])\n"
    "open('sent', 'w').write('sent')\n")
big = tempfile.TemporaryFile()
big.write(b'\0' * (20 << 20))
big.seek(0)
ours, theirs = socket.socketpair()
p = subprocess.Popen([z, "run", "--", "/usr/bin/python3", "-c", inner], stdin=big, stdout=theirs,
                     stderr=subprocess.DEVNULL, cwd=ws)
theirs.close()
try:
    print("zpolicy returned", p.wait(timeout=20))
except subprocess.TimeoutExpired:
    print("zpolicy still running 20 s on")
    p.kill()
    p.wait()
ours.close()
)PY";

// A RunSpec::root_prefix: strace over what follows holds zpolicy's first kill() and first
// pidfd_send_signal() 1 s on entry. A script, as root, waits for the command's `ready` in
// `workspace` and sends zpolicy SIGTERM, which it forwards to every process of the sandbox
// by a walk of /proc. While the walk's first signal is held, the script reads the process
// it is for (kill's pid, or the pidfd's), SIGKILLs that process (a process of the sandbox
// that ends on its own at that moment), and starts a host process as uid `uid` that takes
// its pid (ns_last_pid). Once the held call has returned it writes into `seen` how that
// process fared.
std::vector<std::string> reuse_a_walked_pid(const std::string& workspace, const std::string& seen,
                                            uid_t uid) {
  const std::string kill_nr = std::to_string(SYS_kill);
  const std::string pidfd_nr = std::to_string(SYS_pidfd_send_signal);
  const std::string script =
      "( w=\"$1\"; seen=\"$2\"; u=$3; echo 'the command did not start' > \"$seen\"; "
      "i=0; until [ -e \"$w/ready\" ] || [ $i -ge 1000 ]; do sleep 0.01; i=$((i+1)); done; "
      "z=; for s in /proc/[0-9]*/status; do d=${s%/status}; "
      "grep -qs \"^PPid:\t$$\\$\" $s && grep -qs \"^Name:\tzpolicy\\$\" $s && z=${d#/proc/}; done; "
      "echo \"no zpolicy\" > \"$seen\"; [ -n \"$z\" ] || exit; "
      "kill -TERM $z; x=; i=0; while [ -z \"$x\" ] && [ $i -lt 500 ]; do "
      "set -- $(cat /proc/$z/syscall); "
      "if [ \"$1\" = " +
      kill_nr +
      " ]; then x=$(($2)); "
      "elif [ \"$1\" = " +
      pidfd_nr +
      " ]; then "
      "x=$(sed -n 's/^Pid:[[:space:]]*//p' /proc/$z/fdinfo/$(($2))); fi; "
      "[ -n \"$x\" ] || sleep 0.005; i=$((i+1)); done; "
      "echo 'no signal of the walk was held' > \"$seen\"; [ -n \"$x\" ] || exit; "
      "kill -KILL $x; i=0; while [ -e /proc/$x ] && [ $i -lt 100 ]; do sleep 0.01; i=$((i+1)); "
      "done; "
      "v=; for t in $(seq 1 50); do echo $((x-1)) > /proc/sys/kernel/ns_last_pid; "
      "setpriv --reuid $u --regid $u --clear-groups sleep 300 & v=$!; "
      "[ $v = $x ] && break; kill $v; wait $v; v=; done; "
      "echo 'no process took the pid' > \"$seen\"; [ -n \"$v\" ] || exit; "
      "i=0; while grep -qs \"^\\(" +
      kill_nr + "\\|" + pidfd_nr +
      "\\) \" /proc/$z/syscall && "
      "[ $i -lt 300 ]; do sleep 0.01; i=$((i+1)); done; sleep 0.3; "
      "if kill -0 $v; then echo 'alive' > \"$seen\"; kill $v; else wait $v; "
      "echo \"killed (status $?)\" > \"$seen\"; fi ) >/dev/null 2>&1 & shift 3; exec \"$@\"";
  std::vector<std::string> argv = {"/bin/sh",          "-c", script, "sh", workspace, seen,
                                   std::to_string(uid)};
  for (auto& a : strace_holding(std::vector<std::string>{"kill", "pidfd_send_signal"}, 1000000))
    argv.push_back(std::move(a));
  return argv;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack29a)

// A29A-1: a ^Z (SIGTSTP; the same for the hold of a background job) stops every process of
// the sandbox but its init, and then zpolicy. Between the release and the init's fork of
// the command (the first milliseconds of the command) the init is the sandbox's only
// process: nothing was stopped, the init forked the command, and the command ran while
// zpolicy, its timeout and its supervision of the terminal were stopped (the job showed
// "Stopped"). The init is stopped too: the command starts only once zpolicy goes on.
BOOST_DATA_TEST_CASE(a_stop_before_the_init_forks_the_command_stops_the_command,
                     bdata::make(kCallers), caller) {
  BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
  Sandbox box(caller);
  const std::string seen = box.base() + "/seen";
  RunSpec spec;
  spec.root_prefix = stop_while_the_init_forks(box.workspace(), seen);
  spec.command = {"/bin/sh", "-c", "echo ran > ran"};
  const RunResult r = box.run(spec);
  const std::string what = read_file(seen).value_or("(the script wrote nothing)");
  BOOST_TEST(what == "nothing ran while zpolicy was stopped", what << "; " << r.describe());
  // Continued, it runs to its end.
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(read_file(box.ws("ran")).value_or("") == "ran\n", r.describe());
}

// A29A-2: the sandbox's init was signalled by the pid bwrap named, after it had died too:
// once bwrap's monitor has reaped it, its pid is any new process's, and zpolicy acts on
// the run until the guard reports (2 s more when the monitor is slow: its report's grace).
// A signal then (the third here; a second's kill, the tree's end, the re-sends of a
// forwarded signal every millisecond) went to whatever process had the pid: a host process
// was SIGKILLed (by root's run, any process; another run's sandbox's processes through its
// init's pid namespace). The init is pinned by a pidfd: the process that took its pid lives.
BOOST_DATA_TEST_CASE(a_signal_after_the_init_is_gone_reaches_no_process_that_took_its_pid,
                     bdata::make(kCallers), caller) {
  BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
  Sandbox box(caller);
  const std::string seen = box.base() + "/seen";
  RunSpec spec;
  spec.root_prefix = reuse_the_inits_pid(box.workspace(), seen, uid_of(caller));
  spec.command = {"/bin/sh", "-c", "trap '' TERM; echo > ready; sleep 60"};
  const RunResult r = box.run(spec);
  const std::string what = read_file(seen).value_or("(the script wrote nothing)");
  BOOST_TEST(what == "alive\n", what << r.describe());
  // The second SIGTERM killed the sandbox.
  BOOST_TEST(r.exit_code == 128 + SIGTERM, r.describe());
  BOOST_TEST(r.err.find("interrupted (SIGTERM twice)") != std::string::npos, r.describe());
  BOOST_TEST(r.err.find("zpolicy explain") == std::string::npos, r.describe());
}

// A29A-3 (A28A-3's class, for stdin): zpolicy feeds the part of a file on stdin beyond
// what it holds in memory through a pipe, from a thread it waits for at the run's end. The
// command sent the pipe's read end out of the sandbox (SCM_RIGHTS into a socket on its
// stdout, which the caller reads only after zpolicy's exit) and exited without reading:
// the feed waited for room in the full pipe forever, zpolicy with it (no SIGTERM ends it
// then; its status file is never written), and the caller waiting for it. The feed stops
// once the sandbox is gone, as the output copies do.
BOOST_DATA_TEST_CASE(a_file_on_stdin_fed_to_a_pipe_sent_away_does_not_hold_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r = box.host_command(
      {"/usr/bin/python3", "-c", kFedStdinSentAway, zpolicy_binary(), box.workspace()});
  BOOST_TEST(read_file(box.ws("sent")).value_or("") == "sent", r.describe());
  BOOST_TEST(r.out.find("zpolicy returned 0") != std::string::npos, r.describe());
}

// A29A-4 (attack 20's note): the walk that forwards a signal to every process of the
// sandbox read a process's pid namespace, then signalled its pid: a process of the sandbox
// that ended in between left its pid to any new process, and a host process that took it
// got the signal (SIGTERM here; the stop walk's SIGSTOP the same). Each process is pinned by
// a pidfd before its namespace is read again, and signalled through it: the process that
// took the pid lives.
BOOST_DATA_TEST_CASE(a_forwarded_signal_reaches_no_process_that_took_a_walked_pid,
                     bdata::make(kCallers), caller) {
  BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
  Sandbox box(caller);
  const std::string seen = box.base() + "/seen";
  RunSpec spec;
  spec.root_prefix = reuse_a_walked_pid(box.workspace(), seen, uid_of(caller));
  spec.command = {"/bin/sh", "-c", "trap '' TERM; echo > ready; sleep 60"};
  const RunResult r = box.run(spec);
  const std::string what = read_file(seen).value_or("(the script wrote nothing)");
  BOOST_TEST(what == "alive\n", what << r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
