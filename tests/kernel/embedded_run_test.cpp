#include <signal.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <sstream>

#include "sandbox_fixture.hpp"

// The public API's run(plan), from C (examples/c/run_command.c: zpolicy_plan, then
// zpolicy_run, in the embedder's own process), supervises a command exactly as
// `zpolicy run` does: the same exit codes and messages, the placeholders made and
// removed, the timeout. `zpolicy run` executes through the same runner::execute; only it
// ends a failed command with the line pointing to `zpolicy explain` (it knows the request,
// a plan does not).
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

std::string without_explain_hint(const std::string& err) {
  std::string out;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);)
    if (!(line.starts_with("zpolicy: the command ") &&
          line.find("zpolicy explain") != std::string::npos))
      out += line + "\n";
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_embedded_run)

BOOST_DATA_TEST_CASE(an_embedder_runs_a_plan_with_runs_exit_codes_and_messages,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string timed = box.write_policy(
      "timed.yaml", "zpolicy: 1\nmode: workspace-write\nprocess:\n  timeout: 500ms\n");
  struct Case {
    std::vector<std::string> options, command;
    int expected;
  };
  const std::vector<Case> cases{
      {{}, {"/bin/true"}, 0},
      {{}, {"/bin/false"}, 1},
      {{}, {"/bin/sh", "-c", "echo inside > inside.txt; touch .git/x"}, 1},
      {{}, {"/bin/sh", "-c", "kill -TERM $$"}, 128 + SIGTERM},
      {{}, {"no-such-command-4741"}, 127},
      {{"--policy", timed}, {"/bin/sleep", "30"}, 124},
  };
  for (const auto& c : cases) {
    RunSpec spec;
    spec.options = c.options;
    spec.command = c.command;
    const RunResult by_zpolicy = box.run(spec);
    spec.launcher = {embedder_binary()};
    const RunResult embedded = box.run(spec);
    const std::string what = c.command.back();
    BOOST_TEST(by_zpolicy.exit_code == c.expected, what << "\n" << by_zpolicy.describe());
    BOOST_TEST(embedded.exit_code == c.expected, what << "\n" << embedded.describe());
    BOOST_TEST(embedded.err == without_explain_hint(by_zpolicy.err), what);
    // The placeholder for .git came and went; the workspace was writable.
    BOOST_TEST(!exists(box.ws(".git")), what);
  }
  BOOST_TEST(read_file(box.ws("inside.txt")).value_or("") == "inside\n");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
