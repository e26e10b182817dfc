#include <signal.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <thread>

#include "sandbox_fixture.hpp"

// Invariant 8: on timeout or cancellation the whole tree dies, including background
// children and ones that left the session; checked by scanning the host's /proc.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

constexpr size_t kTreeSize = 4;  // the four sleeps started by tree()

// A tree of four sleeps: a background job, one in its own session, an orphaned one and
// the foreground one. `prelude` runs first (e.g. a trap).
RunSpec tree(const std::string& seconds, const std::string& prelude = "") {
  RunSpec spec;
  spec.command = {"/bin/sh", "-c",
                  prelude + "sleep " + seconds + " & setsid sleep " + seconds + " & (sleep " +
                      seconds + " &); sleep " + seconds};
  spec.limit = std::chrono::seconds(20);
  return spec;
}

size_t sleepers(const std::string& seconds) {
  return processes_with_argv({"sleep", seconds}).size();
}

bool tree_is_up(const std::string& seconds) {
  return wait_until([&] { return sleepers(seconds) == kTreeSize; }, std::chrono::seconds(10));
}

// Processes of a killed pid namespace disappear asynchronously; a short grace suffices.
bool tree_is_gone(const std::string& seconds) {
  return wait_until([&] { return sleepers(seconds) == 0; }, std::chrono::seconds(3));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_lifecycle)

BOOST_DATA_TEST_CASE(timeout_kills_the_whole_tree_with_124, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string seconds = unique_sleep_seconds();
  RunSpec spec = tree(seconds);
  spec.options = {"--timeout", "1"};
  Running running = box.start(spec);
  bool up = tree_is_up(seconds);
  RunResult r = box.finish(running);
  BOOST_TEST_REQUIRE(up, "the tree never started\n" << r.describe());
  BOOST_TEST(r.exit_code == 124, r.describe());
  BOOST_TEST(r.seconds < 5.0, r.describe());
  BOOST_TEST(tree_is_gone(seconds), sleepers(seconds) << " sleeps survived the timeout");
}

// On timeout every process of the sandbox gets SIGTERM first: a test runner's handler
// writes its report (after a pause of its own) and the run still exits 124.
BOOST_DATA_TEST_CASE(a_timeout_lets_a_sigterm_handler_write_its_report, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.options = {"--timeout", "1"};
  spec.command = {"/bin/sh", "-c",
                  "trap 'sleep 0.2; echo written > report.xml; exit 3' TERM; "
                  "echo started > started; sleep 30 & wait"};
  RunResult r = box.run(spec);
  BOOST_TEST_REQUIRE(exists(box.ws("started")), r.describe());
  BOOST_TEST(r.exit_code == 124, r.describe());
  BOOST_TEST(read_file(box.ws("report.xml")).value_or("") == "written\n", r.describe());
  BOOST_TEST(r.err.find("every process in the sandbox got SIGTERM and the sandbox ended within "
                        "the 2s grace (time for a test runner to write its report)") !=
                 std::string::npos,
             r.err);
}

// A tree that ignores the timeout's SIGTERM is killed once the grace is over (invariant 8).
BOOST_DATA_TEST_CASE(a_tree_ignoring_the_timeouts_sigterm_is_killed_after_the_grace,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string seconds = unique_sleep_seconds();
  RunSpec spec = tree(seconds, "trap '' TERM; ");
  spec.options = {"--timeout", "1"};
  Running running = box.start(spec);
  bool up = tree_is_up(seconds);
  RunResult r = box.finish(running);
  BOOST_TEST_REQUIRE(up, "the tree never started\n" << r.describe());
  BOOST_TEST(r.exit_code == 124, r.describe());
  BOOST_TEST(!r.hit_limit, r.describe());
  BOOST_TEST(r.err.find("every process in the sandbox got SIGTERM, then the sandbox and every "
                        "process still in it were killed after the 2s grace") != std::string::npos,
             r.err);
  BOOST_TEST(tree_is_gone(seconds), sleepers(seconds) << " sleeps survived the timeout's grace");
}

BOOST_DATA_TEST_CASE(the_policys_timeout_applies_too, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string seconds = unique_sleep_seconds();
  RunSpec spec = tree(seconds);
  spec.options = {"--policy", box.write_policy("timeout.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  write: ["${WORKSPACE}"]
process:
  timeout: 1s
)")};
  RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 124, r.describe());
  BOOST_TEST(r.seconds < 5.0, r.describe());
  BOOST_TEST(tree_is_gone(seconds), sleepers(seconds) << " sleeps survived the timeout");
}

BOOST_DATA_TEST_CASE(sigterm_to_zpolicy_kills_the_whole_tree, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string seconds = unique_sleep_seconds();
  Running running = box.start(tree(seconds));
  bool up = tree_is_up(seconds);
  kill(running.pid, SIGTERM);
  RunResult r = box.finish(running);
  BOOST_TEST_REQUIRE(up, "the tree never started\n" << r.describe());
  BOOST_TEST(r.exit_code == 128 + SIGTERM, r.describe());
  BOOST_TEST(!r.hit_limit, r.describe());
  BOOST_TEST(tree_is_gone(seconds), sleepers(seconds) << " sleeps survived SIGTERM");
}

BOOST_DATA_TEST_CASE(a_second_sigterm_kills_a_tree_that_ignores_the_first, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string seconds = unique_sleep_seconds();
  Running running = box.start(tree(seconds, "trap '' TERM INT HUP; "));
  bool up = tree_is_up(seconds);
  kill(running.pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(running.pid, SIGTERM);
  RunResult r = box.finish(running);
  BOOST_TEST_REQUIRE(up, "the tree never started\n" << r.describe());
  BOOST_TEST(!r.hit_limit, r.describe());
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(tree_is_gone(seconds), sleepers(seconds) << " sleeps survived two SIGTERMs");
}

BOOST_DATA_TEST_CASE(sigkill_to_zpolicy_kills_the_whole_tree, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string seconds = unique_sleep_seconds();
  Running running = box.start(tree(seconds));
  bool up = tree_is_up(seconds);
  kill(running.pid, SIGKILL);
  RunResult r = box.finish(running);
  BOOST_TEST_REQUIRE(up, "the tree never started\n" << r.describe());
  BOOST_TEST(r.exit_code == 128 + SIGKILL, r.describe());
  BOOST_TEST(tree_is_gone(seconds), sleepers(seconds) << " sleeps survived SIGKILL of zpolicy");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
