#include <boost/test/unit_test.hpp>

#include "runner/macos_argv.hpp"

using namespace zpolicy::runner;

namespace {

std::vector<std::string> argv_of(std::variant<std::vector<std::string>, SandboxExecArgvError> v) {
  if (auto* err = std::get_if<SandboxExecArgvError>(&v)) BOOST_FAIL(err->message);
  return std::get<std::vector<std::string>>(v);
}

std::string error_of(std::variant<std::vector<std::string>, SandboxExecArgvError> v) {
  auto* err = std::get_if<SandboxExecArgvError>(&v);
  return err ? err->message : "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_runner_argv)

BOOST_AUTO_TEST_CASE(pinned_binary_profile_params_then_the_command_after_double_dash) {
  auto argv = argv_of(sandbox_exec_argv(
      "(version 1)\n(deny default)\n",
      {{"WRITABLE_ROOT_0", "/Users/u/x\")(allow default)("}, {"PROTECTED_0", "/Users/u/p/-p"}},
      {"-p", "--", "arg with space"}));
  std::vector<std::string> expected = {"/usr/bin/sandbox-exec",
                                       "-p",
                                       "(version 1)\n(deny default)\n",
                                       "-D",
                                       "WRITABLE_ROOT_0=/Users/u/x\")(allow default)(",
                                       "-D",
                                       "PROTECTED_0=/Users/u/p/-p",
                                       "--",
                                       "-p",
                                       "--",
                                       "arg with space"};
  BOOST_TEST(argv == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_preflight_runs_the_same_profile_around_usr_bin_true) {
  auto argv = argv_of(preflight_argv("(version 1)\n(deny default)\n", {{"A", "/a"}}));
  std::vector<std::string> expected = {
      "/usr/bin/sandbox-exec", "-p", "(version 1)\n(deny default)\n", "-D", "A=/a", "--",
      "/usr/bin/true"};
  BOOST_TEST(argv == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(refuses_what_would_be_misread) {
  BOOST_TEST(error_of(sandbox_exec_argv("(version 1)", {}, {})) == "no command to run");
  BOOST_TEST(error_of(sandbox_exec_argv("(version 1)", {{"a", "/x"}}, {"ls"})) ==
             "invalid parameter name 'a'");
  BOOST_TEST(error_of(sandbox_exec_argv("(version 1)", {{"A=B", "/x"}}, {"ls"})) ==
             "invalid parameter name 'A=B'");
  BOOST_TEST(error_of(sandbox_exec_argv("(version 1)", {{"0A", "/x"}}, {"ls"})) ==
             "invalid parameter name '0A'");
  BOOST_TEST(error_of(sandbox_exec_argv("(version 1)", {{"A", std::string("/x\0y", 4)}}, {"ls"})) ==
             "parameter A contains a NUL byte");
  BOOST_TEST(error_of(sandbox_exec_argv(std::string("(v\0", 3), {}, {"ls"})) ==
             "the profile contains a NUL byte");
  BOOST_TEST(error_of(sandbox_exec_argv("(version 1)", {}, {"ls", std::string("a\0b", 3)})) ==
             "a command argument contains a NUL byte");
}

BOOST_AUTO_TEST_CASE(preflight_status_maps_to_typed_refusals) {
  BOOST_TEST(!classify_preflight(0, false));
  auto bad = classify_preflight(65, false);
  BOOST_REQUIRE(bad);
  BOOST_TEST((bad->refusal == SandboxExecRefusal::BadProfile));
  BOOST_TEST(std::string(to_string(bad->refusal)) == "bad-profile");
  auto nested = classify_preflight(71, false);
  BOOST_REQUIRE(nested);
  BOOST_TEST((nested->refusal == SandboxExecRefusal::AlreadySandboxed));
  BOOST_TEST(nested->message.find("already") != std::string::npos);
  auto other = classify_preflight(1, false);
  BOOST_REQUIRE(other);
  BOOST_TEST((other->refusal == SandboxExecRefusal::Failed));
  BOOST_TEST(other->message == "sandbox-exec failed with exit status 1");
  auto sig = classify_preflight(9, true);
  BOOST_REQUIRE(sig);
  BOOST_TEST((sig->refusal == SandboxExecRefusal::Failed));
  BOOST_TEST(sig->message == "sandbox-exec was killed by signal 9");
}

BOOST_AUTO_TEST_SUITE_END()
