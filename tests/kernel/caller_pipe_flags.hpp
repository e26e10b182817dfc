#pragma once

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// R18's check that what a command does to the file status flags of the caller's pipe (its
// stdout, shared through the sandbox) ends with the run: for `zpolicy run` and for an
// executor of its plan alike.
namespace zpolicy::tests::kernel {

// A RunSpec::root_prefix that prints the flags of its stdout (the harness's pipe, which the
// run inherits) to stderr before and after the run, and exits with the run's status.
inline const std::vector<std::string> kShowStdoutFlags = {
    "/bin/bash", "-c",
    "grep '^flags' /proc/$$/fdinfo/1 >&2; \"$@\"; rc=$?; "
    "grep '^flags' /proc/$$/fdinfo/1 >&2; exit $rc",
    "sh"};

// A command that sets O_NONBLOCK and O_APPEND on its stdout, then prints "set".
inline const std::vector<std::string> kSetStdoutFlags = {
    "/usr/bin/python3", "-c",
    "import fcntl, os\n"
    "fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_NONBLOCK | "
    "os.O_APPEND)\n"
    "print('set')\n"};

// A run of kSetStdoutFlags behind kShowStdoutFlags: it worked, and the pipe's flags after it
// are those before it, O_NONBLOCK not among them.
inline void expect_stdout_flags_restored(const RunResult& r) {
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find("set") != std::string::npos, r.describe());
  const auto first = r.err.find("flags:");
  const auto last = r.err.rfind("flags:");
  BOOST_TEST_REQUIRE((first != std::string::npos && last != first), r.describe());
  auto flags_at = [&](size_t at) {
    return std::stoul(r.err.substr(at + 6, r.err.find('\n', at) - at - 6), nullptr, 8);
  };
  BOOST_TEST(flags_at(last) == flags_at(first), r.describe());
  BOOST_TEST((flags_at(last) & 04000u) == 0u, "O_NONBLOCK left on the caller's pipe");
}

}  // namespace zpolicy::tests::kernel
