#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <thread>

#include "exec_gate.hpp"
#include "process_tree.hpp"
#include "sandbox_fixture.hpp"

// The guard between zpolicy and bwrap (docs/run.md "The guard"; red team R5-K3, R6-K1):
// whenever zpolicy dies, nothing of its sandbox outlives it, wherever bwrap's init was.
// Observed from the host: the init and every process of the command are gone, and what
// the command would write later is never written.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

using namespace std::chrono_literals;

// Whether `pid` waits in read(FD, BUF, 8): bwrap's init on the eventfd its monitor
// signals once the sandbox's uid and gid maps are written.
bool blocked_on_eventfd(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/syscall");
  std::string nr, fd, buf, count;
  return in >> nr >> fd >> buf >> count && nr == "0" && count == "0x8";
}

// Fills the pipe behind descriptor `fd` of `pid` and makes it blocking for its writer
// (the descriptor is the same open file): `pid`'s next write there waits until the pipe
// is read. Root only (pidfd_getfd needs ptrace rights over `pid`).
bool fill_and_block(pid_t pid, int fd) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;
  const int dup = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  close(pidfd);
  if (dup < 0) return false;
  const int flags = fcntl(dup, F_GETFL);
  bool ok = fcntl(dup, F_SETFL, flags | O_NONBLOCK) == 0;
  char block[4096] = {};
  while (ok && write(dup, block, sizeof block) > 0) {
  }
  while (ok && write(dup, block, 1) > 0) {
  }
  ok = ok && errno == EAGAIN && fcntl(dup, F_SETFL, flags & ~O_NONBLOCK) == 0;
  close(dup);
  return ok;
}

// Ends the test's own leftovers when the sandbox escaped: its init, so its pid namespace.
void check_gone(pid_t init, const std::string& sleeper) {
  const bool ended = wait_until([&] { return gone_or_zombie(init); }, 3s);
  BOOST_CHECK_MESSAGE(ended, "the sandbox's init outlived zpolicy");
  BOOST_CHECK_MESSAGE(processes_with_argv({"sleep", sleeper}).empty(),
                      "a process of the command outlived zpolicy");
  if (!ended) kill(init, SIGKILL);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_sandbox_guard)

// R5-K3: zpolicy killed while bwrap's monitor has not yet signalled the init's eventfd
// (held there: the pipe of its status stream, which it writes just before, is full). The
// monitor died with zpolicy and the init waited forever, orphaned, on the eventfd, with
// the run's bind descriptors. Now the guard kills it.
BOOST_DATA_TEST_CASE(a_runner_killed_before_the_init_is_let_go_leaves_no_init,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string sleeper = unique_sleep_seconds();
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", "echo x > ran; sleep " + sleeper};
  Running r;
  bool filled = false;
  ExecGate gate([&] {
    kill(r.pid, SIGSTOP);  // zpolicy must not drain the status stream meanwhile
    filled = fill_and_block(gate.bwrap(), 4);
  });
  r = box.start(spec);
  gate.watch(r.pid);
  pid_t init = 0;
  wait_until([&] { return (init = sandbox_init(r.pid)) != 0 && blocked_on_eventfd(init); }, 5s);
  const bool at_eventfd = init != 0 && blocked_on_eventfd(init);
  kill(r.pid, SIGKILL);
  box.finish(r);
  BOOST_TEST_REQUIRE(gate.acted(), "the gate never saw the run exec bwrap");
  BOOST_TEST_REQUIRE(filled, "could not fill bwrap's status pipe");
  BOOST_TEST_REQUIRE(at_eventfd, "no sandbox init waited on its eventfd");
  check_gone(init, sleeper);
  BOOST_TEST(!exists(box.ws("ran")), "the command ran");
}

// R6-K1: zpolicy killed just after it released the sandbox, before bwrap's init re-armed
// its parent-death signal. Made deterministic: zpolicy is stopped while bwrap sets up, the
// init is stopped in its release read, zpolicy goes on and releases it, and is SIGKILLed
// once the byte is in the pipe; then the init goes on. The command ran on with no
// supervisor and no timeout, and wrote `late` a second later. Now nothing of the run
// survives zpolicy.
BOOST_DATA_TEST_CASE(a_runner_killed_just_after_the_release_leaves_nothing_running,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  bool held = false;
  for (int attempt = 0; attempt < 3 && !held; ++attempt) {
    const std::string sleeper = "1." + unique_sleep_seconds().substr(7);  // about a second
    RunSpec spec;
    spec.options = {"--timeout", "30s"};
    spec.command = {"/bin/sh", "-c", "sleep " + sleeper + "; echo late > late"};
    Running r = box.start(spec);
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (children_of(r.pid).empty() && std::chrono::steady_clock::now() < until) {
    }
    kill(r.pid, SIGSTOP);
    // Only once it is stopped: until then it may still release the sandbox.
    wait_until([&] { return process_state(r.pid) == 'T'; }, 5s);
    pid_t init = 0;
    wait_until([&] { return (init = sandbox_init(r.pid)) != 0; }, 5s);
    const int block = init ? block_fd_of(parent_of(init)) : -1;
    const bool at_release =
        init && block >= 0 && wait_until([&] { return blocked_on_release(init); }, 5s);
    if (at_release) kill(init, SIGSTOP);
    kill(r.pid, SIGCONT);
    held = at_release && wait_until([&] { return pipe_bytes(init, block) == 1; }, 5s);
    kill(r.pid, SIGKILL);
    box.finish(r);
    if (init) kill(init, SIGCONT);
    if (!held) {
      if (init) kill(init, SIGKILL);
      continue;
    }
    const auto resumed = std::chrono::steady_clock::now();
    check_gone(init, sleeper);
    std::this_thread::sleep_until(resumed + 1500ms);
    BOOST_TEST(!exists(box.ws("late")), "the command outlived zpolicy and its timeout");
  }
  BOOST_TEST(held, "no sandbox init was held in its release read until zpolicy released it");
}

// The guard itself killed (SIGKILL) while the command runs: bwrap's monitor dies with it
// (its parent-death signal), and zpolicy, alive, kills the init it was told of and the
// group. Nothing survives, and zpolicy does not claim that nothing ran.
BOOST_DATA_TEST_CASE(a_guard_killed_alone_leaves_nothing_and_no_false_report,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string sleeper = unique_sleep_seconds();
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", "sleep " + sleeper + "; echo late > late"};
  Running r = box.start(spec);
  BOOST_REQUIRE(wait_until([&] { return !processes_with_argv({"sleep", sleeper}).empty(); }, 5s));
  const pid_t init = sandbox_init(r.pid);
  const pid_t guard = parent_of(parent_of(init));
  BOOST_REQUIRE(init != 0);
  BOOST_REQUIRE_MESSAGE(parent_of(guard) == r.pid, "no guard between zpolicy and bwrap");
  kill(guard, SIGKILL);
  const RunResult res = box.finish(r);
  BOOST_TEST(res.exit_code == 128 + SIGKILL, res.describe());
  BOOST_TEST(res.err.find("nothing ran") == std::string::npos, res.describe());
  check_gone(init, sleeper);
}

// The guard hands the sandbox nothing of its own or of zpolicy's: the command sees
// standard input, output and error, and the directory `ls` itself opens.
BOOST_DATA_TEST_CASE(the_command_inherits_no_descriptor_of_the_guard, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const RunResult r = box.sh("ls /proc/self/fd | tr '\\n' ' '; echo");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.substr(0, r.out.find('\n')) == "0 1 2 3 ", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
