// The macOS spawn path (runner/macos_run) driven with a stand-in for sandbox-exec: a
// shell script that records its arguments, environment and directory, answers the
// preflight with a chosen status, and otherwise execs the command as sandbox-exec does.
#include <signal.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "runner/macos_run.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
using namespace std::chrono_literals;

namespace {

const char* const kFake =
    "#!/bin/sh\n"
    "d=${0%/*}\n"
    "n=$(ls \"$d/calls\" | grep -c argv)\n"
    "for a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$d/calls/$n.argv\"\n"
    "tr '\\0' '\\n' < /proc/$$/environ > \"$d/calls/$n.env\"\n"
    "pwd -P > \"$d/calls/$n.cwd\"\n"
    "while [ \"$1\" != -- ]; do shift; done\n"
    "shift\n"
    "if [ \"$1\" = /usr/bin/true ]; then exit \"$(cat \"$d/preflight-status\")\"; fi\n"
    "exec \"$@\"\n";

struct Call {
  std::vector<std::string> argv;
  std::string env;
  std::string cwd;
};

struct FakeSandboxExec {
  test::TempDir dir;
  std::string binary = dir / "bin/sandbox-exec";
  std::string ws = dir.mkdir("ws");
  runner::SandboxExecRun run;

  explicit FakeSandboxExec(int preflight_status = 0) {
    dir.write("bin/sandbox-exec", kFake);
    std::filesystem::permissions(binary, std::filesystem::perms::owner_all);
    dir.mkdir("bin/calls");
    preflight(preflight_status);
    run.profile = "(version 1)\n(deny default)\n";
    run.params = {{"WRITABLE_ROOT_0", ws}, {"PROTECTED_0", ws + "/.git"}};
    run.env = {"HOME=/nonexistent", "LANG=C", "PATH=/usr/bin:/bin"};
    run.cwd = ws;
    run.timeout = 20s;
  }

  void preflight(int status) const { dir.write("bin/preflight-status", std::to_string(status)); }

  int start(std::vector<std::string> command, std::string& err) {
    run.command = std::move(command);
    std::ostringstream out;
    int status = runner::run_sandbox_exec(binary, run, out);
    err = out.str();
    return status;
  }

  std::vector<Call> calls() const {
    std::vector<Call> out;
    for (int n = 0; std::filesystem::exists(dir / ("bin/calls/" + std::to_string(n) + ".argv"));
         ++n) {
      const std::string base = dir / ("bin/calls/" + std::to_string(n));
      Call c;
      std::string raw = test::slurp(base + ".argv");
      for (size_t at = 0, end; (end = raw.find('\0', at)) != std::string::npos; at = end + 1)
        c.argv.push_back(raw.substr(at, end - at));
      c.env = test::slurp(base + ".env");
      c.cwd = test::slurp(base + ".cwd");
      out.push_back(c);
    }
    return out;
  }

  std::vector<std::string> expected_argv(const std::vector<std::string>& command) const {
    std::vector<std::string> argv = {
        "-p", run.profile, "-D", "WRITABLE_ROOT_0=" + ws, "-D", "PROTECTED_0=" + ws + "/.git",
        "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
};

// Gone, or a zombie waiting for whoever adopted it.
bool dead(pid_t pid) {
  std::string stat = test::slurp("/proc/" + std::to_string(pid) + "/stat");
  auto close_paren = stat.rfind(')');
  return stat.empty() ||
         (close_paren != std::string::npos && stat.substr(close_paren + 2, 1) == "Z");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(macos_runner)

BOOST_AUTO_TEST_CASE(preflight_then_the_command_under_the_same_profile_environment_and_directory) {
  FakeSandboxExec fake;
  const std::vector<std::string> command = {"/bin/sh", "-c", "echo ran > marker; exit 3"};
  std::string err;
  BOOST_TEST(fake.start(command, err) == 3);
  BOOST_TEST(err == "");
  auto calls = fake.calls();
  BOOST_TEST_REQUIRE(calls.size() == 2u);
  BOOST_TEST(calls[0].argv == fake.expected_argv({"/usr/bin/true"}),
             boost::test_tools::per_element());
  BOOST_TEST(calls[1].argv == fake.expected_argv(command), boost::test_tools::per_element());
  for (const auto& c : calls) {
    BOOST_TEST(c.env == "HOME=/nonexistent\nLANG=C\nPATH=/usr/bin:/bin\n");
    BOOST_TEST(c.cwd == fake.ws + "\n");
  }
  BOOST_TEST(test::slurp(fake.ws + "/marker") == "ran\n");
}

// Once the preflight has passed, 65 and 71 are the command's own statuses.
BOOST_AUTO_TEST_CASE(the_commands_own_65_and_71_pass_through) {
  for (int code : {65, 71}) {
    FakeSandboxExec fake;
    std::string err;
    BOOST_TEST(fake.start({"/bin/sh", "-c", "exit " + std::to_string(code)}, err) == code);
    BOOST_TEST(err == "");
    BOOST_TEST(fake.calls().size() == 2u);
  }
}

BOOST_AUTO_TEST_CASE(a_failing_preflight_is_a_typed_refusal_and_the_command_never_runs) {
  const std::vector<std::pair<int, std::string>> cases = {
      {65, "bad-profile: sandbox-exec rejected the profile (exit 65)"},
      {71,
       "already-sandboxed: sandbox-exec cannot apply a sandbox here, most likely because "
       "zpolicy already runs inside one (exit 71)"},
      {1, "sandbox-exec-failed: sandbox-exec failed with exit status 1"}};
  for (const auto& [status, reason] : cases) {
    FakeSandboxExec fake(status);
    std::string err;
    BOOST_TEST(fake.start({"/bin/sh", "-c", "echo ran > marker"}, err) == 4);
    BOOST_TEST(err == "zpolicy: refusing to run without a sandbox: " + reason + "\n");
    BOOST_TEST(fake.calls().size() == 1u);
    BOOST_TEST(!std::filesystem::exists(fake.ws + "/marker"));
  }
}

BOOST_AUTO_TEST_CASE(a_missing_sandbox_exec_is_a_refusal) {
  FakeSandboxExec fake;
  fake.binary = fake.dir / "bin/absent";
  std::string err;
  BOOST_TEST(fake.start({"/bin/sh", "-c", "echo ran > marker"}, err) == 4);
  BOOST_TEST(err ==
             "zpolicy: refusing to run without a sandbox: sandbox-exec-failed: "
             "sandbox-exec failed with exit status 127\n");
  BOOST_TEST(!std::filesystem::exists(fake.ws + "/marker"));
}

BOOST_AUTO_TEST_CASE(timeout_kills_the_process_group_and_exits_124) {
  FakeSandboxExec fake;
  // Long enough for the shell to have started its background child and written its pid
  // on a loaded machine (at 300 ms the file was sometimes still empty at load 10).
  fake.run.timeout = 1s;
  std::string err;
  auto start = std::chrono::steady_clock::now();
  BOOST_TEST(fake.start({"/bin/sh", "-c", "sleep 30 & echo $! > bg.pid; wait"}, err) == 124);
  BOOST_TEST((std::chrono::steady_clock::now() - start < 10s));
  BOOST_TEST(err ==
             "zpolicy: timed out; the command's process group got SIGTERM and the command ended "
             "within the 2s grace (time for a test runner to write its report); the group was "
             "killed\n");
  const std::string bg_pid = test::slurp(fake.ws + "/bg.pid");
  BOOST_TEST_REQUIRE(!bg_pid.empty(), "the command was stopped before it started its child");
  pid_t bg = std::stoi(bg_pid);
  for (int i = 0; i < 100 && !dead(bg); ++i) std::this_thread::sleep_for(20ms);
  BOOST_TEST(dead(bg));
}

BOOST_AUTO_TEST_CASE(a_command_killed_by_signal_n_exits_128_plus_n) {
  FakeSandboxExec fake;
  std::string err;
  BOOST_TEST(fake.start({"/bin/sh", "-c", "kill -TERM $$"}, err) == 128 + SIGTERM);
}

// SIGINT to zpolicy reaches the command (its whole process group), which decides its
// own status.
BOOST_AUTO_TEST_CASE(signals_are_forwarded_to_the_command) {
  FakeSandboxExec fake;
  fake.run.timeout = 10s;
  const std::string ready = fake.ws + "/ready";
  std::thread interrupter([&] {
    for (int i = 0; i < 500 && !std::filesystem::exists(ready); ++i)
      std::this_thread::sleep_for(10ms);
    if (std::filesystem::exists(ready)) kill(getpid(), SIGINT);
  });
  std::string err;
  int status = fake.start(
      {"/bin/sh", "-c", "trap 'exit 42' INT; touch ready; while :; do sleep 0.05; done"}, err);
  interrupter.join();
  BOOST_TEST(status == 42);
}

BOOST_AUTO_TEST_SUITE_END()
