#include <signal.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// DESIGN.md "Command line": run returns the command's own status, 126/127 for a command
// that cannot be executed or found, 128+N for a signal, 2 for bad usage (nothing runs).
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_exit_codes)

BOOST_DATA_TEST_CASE(the_commands_status_passes_through, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("not-executable.sh"), "#!/bin/sh\nexit 0\n", 0644);
  box.make_dir(box.ws("a-directory"));
  struct Case {
    std::vector<std::string> command;
    int expected;
  };
  const std::vector<Case> cases{
      {{"/bin/sh", "-c", "exit 7"}, 7},
      {{"/bin/sh", "-c", "exit 0"}, 0},
      {{"/bin/sh", "-c", "kill -9 $$"}, 128 + SIGKILL},
      {{"/bin/sh", "-c", "kill -TERM $$"}, 128 + SIGTERM},
      {{"no-such-command-4731"}, 127},
      {{"/no/such/path-4732"}, 127},
      {{"./not-executable.sh"}, 126},
      {{box.ws("a-directory")}, 126},
  };
  for (const auto& c : cases) {
    RunSpec spec;
    spec.command = c.command;
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == c.expected, c.command.back() << "\n" << r.describe());
  }
}

BOOST_DATA_TEST_CASE(bad_usage_exits_2_and_runs_nothing, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string marker = box.ws("MARKER");
  const std::vector<std::vector<std::string>> bad_options{
      {"--mode", "danger-full-access"},  // wider than the default policy's ceiling
      {"--mode", "no-such-mode"},
      {"--timeout", "0"},
      {"--no-such-option"},
  };
  for (const auto& options : bad_options) {
    RunSpec spec;
    spec.options = options;
    spec.command = {"/usr/bin/touch", marker};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == 2, options[0] << "\n" << r.describe());
    BOOST_TEST(!exists(marker), options[0] << " ran the command");
  }
  // Control: the same command without them does run.
  RunSpec spec;
  spec.command = {"/usr/bin/touch", marker};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(exists(marker));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
