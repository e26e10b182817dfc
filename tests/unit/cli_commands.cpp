// The command-line surface: help for every subcommand, exit 2 for anything unknown.
#include <boost/test/unit_test.hpp>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace {

zpolicy::test::ProcessResult zpolicy_run(const std::vector<std::string>& args) {
  zpolicy::test::TempDir scratch;
  std::vector<std::string> argv = {ZPOLICY_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return zpolicy::test::run_process(argv, scratch.str(), scratch.str());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_commands)

BOOST_AUTO_TEST_CASE(help_for_each_subcommand_exits_0) {
  for (const char* cmd : {"compile", "show-default", "verify", "check", "explain", "inspect",
                          "run", "doctor"}) {
    for (const char* flag : {"--help", "-h"}) {
      auto r = zpolicy_run({cmd, flag});
      BOOST_TEST(r.exit_code == 0, cmd << " " << flag << ": " << r.err);
      BOOST_TEST(r.out.rfind(std::string("usage: zpolicy ") + cmd, 0) == 0, cmd << ": " << r.out);
      BOOST_TEST(r.err == "", cmd);
    }
  }
}

BOOST_AUTO_TEST_CASE(top_level_help_lists_every_command) {
  auto r = zpolicy_run({"--help"});
  BOOST_TEST(r.exit_code == 0);
  for (const char* cmd :
       {"compile", "verify", "check", "explain", "inspect", "run", "doctor", "show-default"})
    BOOST_TEST(r.out.find(std::string("\n  ") + cmd + " ") != std::string::npos, cmd);
}

BOOST_AUTO_TEST_CASE(unknown_or_missing_command_exits_2) {
  auto unknown = zpolicy_run({"frobnicate"});
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(unknown.out == "");
  BOOST_TEST(unknown.err.rfind("zpolicy: unknown command 'frobnicate'\n", 0) == 0, unknown.err);
  auto none = zpolicy_run({});
  BOOST_TEST(none.exit_code == 2);
  BOOST_TEST(none.out == "");
  BOOST_TEST(none.err.rfind("usage: zpolicy COMMAND", 0) == 0);
}

BOOST_AUTO_TEST_CASE(unknown_option_exits_2) {
  auto r = zpolicy_run({"compile", "p.yaml", "--target", "linux", "--frobnicate"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.out == "");
  BOOST_TEST(r.err.find("unrecognised option '--frobnicate'") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_SUITE_END()
