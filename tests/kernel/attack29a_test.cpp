#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

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
  const std::string script = R"(
import os, sys, time, signal
workspace, seen, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    os.execv(argv[0], argv)
os.setpgid(job, job)
def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError:
        return b''
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
def state(pid):
    stat = read('/proc/%d/stat' % pid).decode(errors='replace')
    return stat[stat.rfind(')') + 2:][:1]
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
with open(seen, 'w') as f:
    f.write(what)
_, status = os.waitpid(job, 0)
sys.exit(os.waitstatus_to_exitcode(status) & 255)
)";
  const std::string with_number = "SYS_CLONE = " + std::to_string(SYS_clone) + "\n" + script;
  return {"/usr/bin/python3",
          "-c",
          with_number,
          workspace,
          seen,
          "/usr/bin/strace",
          "-f",
          "-qq",
          "-o",
          "/dev/null",
          "-e",
          "trace=clone",
          "-e",
          "inject=clone:delay_enter=500000:when=1"};
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

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
