#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <thread>

#include "sandbox_fixture.hpp"

// Round 6 of the red-team pass (docs/redteam-2026-12.md "Round 6"): signals and timeouts
// around the release, and what a sandbox can leave for the runs and the host after it.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

using namespace std::chrono_literals;

std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

// The sandbox's init: bwrap's monitor is zpolicy's child, the init the monitor's.
pid_t sandbox_init(pid_t zpolicy) {
  for (pid_t monitor : children_of(zpolicy))
    for (pid_t init : children_of(monitor)) return init;
  return 0;
}

// Whether `pid` is blocked in read(FD, BUF, 1): bwrap's wait on --block-fd.
bool blocked_on_release(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/syscall");
  std::string nr, fd, buf, count;
  return in >> nr >> fd >> buf >> count && nr == "0" && count == "0x1";
}

// Starts `spec` and stops zpolicy as soon as it has started bwrap, before it can release
// anything; returns once the sandbox waits for the release (false: zpolicy had already
// released it, or no sandbox came).
bool held_before_release(Running& r, const Sandbox& box, const RunSpec& spec) {
  r = box.start(spec);
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (children_of(r.pid).empty() && std::chrono::steady_clock::now() < until) {
  }
  kill(r.pid, SIGSTOP);
  pid_t init = 0;
  if (!wait_until([&] { return (init = sandbox_init(r.pid)) != 0; }, 5s)) return false;
  return wait_until([&] { return blocked_on_release(init); }, 5s);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam6)

// R5-K2: the runner looked at its signals and its deadline only after the setup check and
// the release, so a SIGINT or a timeout that came while the sandbox was checked started
// the command anyway (then forwarded the signal, or gave it SIGTERM). zpolicy is held
// (stopped) while bwrap waits for the release, gets SIGINT, or passes its deadline, and
// continues: the run ends before the command starts, and says so truthfully.
BOOST_DATA_TEST_CASE(a_run_cancelled_while_the_sandbox_is_checked_never_starts_its_command,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  struct Case {
    std::string name;
    std::vector<std::string> options;
    int expected;
    std::string says;
  };
  const Case cases[] = {
      {"SIGINT", {}, 130, "interrupted by SIGINT before the command started; nothing ran"},
      {"timeout", {"--timeout", "500ms"}, 124, "timed out before the command started"},
  };
  for (const Case& c : cases) {
    bool held = false;
    for (int attempt = 0; attempt < 5 && !held; ++attempt) {
      RunSpec spec;
      spec.options = c.options;
      spec.command = {"/bin/sh", "-c", "echo x > ran"};
      Running r;
      held = held_before_release(r, box, spec);
      if (c.name == "SIGINT")
        kill(r.pid, SIGINT);
      else
        std::this_thread::sleep_until(r.started + 700ms);
      kill(r.pid, SIGCONT);
      const RunResult res = box.finish(r);
      if (!held) {
        unlink(box.ws("ran").c_str());
        continue;
      }
      BOOST_CHECK_MESSAGE(res.exit_code == c.expected, c.name << ": " << res.describe());
      BOOST_CHECK_MESSAGE(res.err.find(c.says) != std::string::npos, c.name << ": " << res.describe());
      BOOST_CHECK_MESSAGE(res.err.find("nothing ran") != std::string::npos, c.name << ": " << res.describe());
      BOOST_CHECK_MESSAGE(!exists(box.ws("ran")), c.name << ": the command ran");
    }
    BOOST_CHECK_MESSAGE(held, c.name << ": zpolicy released every sandbox before it could be stopped");
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
