#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <thread>

#include "pty.hpp"
#include "sandbox_fixture.hpp"

// Issue 14 §6: the status zpolicy reports is true (never "nothing ran" once the command
// was exec'd, 128+N when a signal ended the run), and the caller's terminal settings
// survive whatever the sandboxed command did to them.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

bool says_nothing_ran(const RunResult& r) {
  return r.err.find("nothing ran") != std::string::npos ||
         r.err.find("could not start") != std::string::npos;
}

// The value of the status document's "nothing_ran" (docs/run.md "Run status"), or what
// was found instead of it.
std::string says_nothing_ran_in_status(const std::string& file) {
  const std::string doc = read_file(file).value_or("(no status file)");
  const std::string key = "\"nothing_ran\": ";
  const size_t at = doc.find(key);
  if (at == std::string::npos) return doc;
  const size_t from = at + key.size();
  return doc.substr(from, doc.find_first_of(",}", from) - from);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_status_terminal)

// The reported bug: two SIGINTs 0.3 s apart while the command runs; zpolicy said "nothing
// ran" and exited 126. With and without a command that ignores SIGINT (then the second
// signal has to kill the sandbox).
BOOST_DATA_TEST_CASE(two_sigints_after_the_command_ran_never_claim_nothing_ran,
                     bdata::make(kCallers), caller) {
  for (const std::string prelude : {"", "trap '' INT; "}) {
    Sandbox box(caller);
    const std::string seconds = unique_sleep_seconds();
    const std::string ran = box.ws("ran");
    RunSpec spec;
    spec.options = {"--status-file", box.home() + "/status.json"};
    spec.command = {"/bin/sh", "-c", prelude + "echo yes > ran; sleep " + seconds};
    spec.limit = std::chrono::seconds(20);
    Running running = box.start(spec);
    // The whole line written: the shell is in its sleep.
    bool started = wait_until([&] { return read_file(ran).value_or("") == "yes\n"; },
                              std::chrono::seconds(10));
    kill(running.pid, SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(running.pid, SIGINT);
    RunResult r = box.finish(running);
    BOOST_TEST_REQUIRE(started, "the command never ran\n" << r.describe());
    BOOST_TEST(!says_nothing_ran(r), "'" << prelude << "'\n" << r.describe());
    BOOST_TEST(r.exit_code == 128 + SIGINT, "'" << prelude << "'\n" << r.describe());
    BOOST_TEST(!r.hit_limit, r.describe());
    BOOST_TEST(read_file(ran).value_or("") == "yes\n");
    BOOST_TEST(says_nothing_ran_in_status(box.home() + "/status.json") == "false");
    BOOST_TEST(wait_until([&] { return processes_with_argv({"sleep", seconds}).empty(); },
                          std::chrono::seconds(3)),
               "the sleep survived");
  }
}

// `nohup zpolicy run -- make`: a signal the caller left ignored stays ignored, for zpolicy
// (the command is not told) and for the command across its exec (its own SigIgn shows it).
// INT, TERM and HUP were caught regardless and forwarded: a hangup killed the command.
// The control, without the ignore, shows that each signal still reaches the command.
BOOST_DATA_TEST_CASE(a_signal_the_caller_ignores_stays_ignored_in_the_sandbox,
                     bdata::make(kCallers), caller) {
  for (int sig : {SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGUSR1}) {
    for (bool ignored : {true, false}) {
      Sandbox box(caller);
      RunSpec spec;
      if (ignored)
        spec.root_prefix = {"/bin/sh", "-c", "trap '' " + std::to_string(sig) + "; exec \"$@\"",
                            "sh"};
      spec.command = {"/bin/sh", "-c",
                      "grep '^SigIgn:' /proc/$$/status > ign; sleep 1; echo done > done"};
      spec.limit = std::chrono::seconds(20);
      Running running = box.start(spec);
      const bool started =
          wait_until([&] { return exists(box.ws("ign")); }, std::chrono::seconds(10));
      kill(running.pid, sig);
      RunResult r = box.finish(running);
      BOOST_TEST_REQUIRE(started, "the command never ran\n" << r.describe());
      const std::string what = strsignal(sig) + std::string(ignored ? ", ignored" : "");
      if (!ignored) {
        BOOST_TEST(r.exit_code == 128 + sig, what << "\n" << r.describe());
        BOOST_TEST(!exists(box.ws("done")), what);
        continue;
      }
      BOOST_TEST(r.exit_code == 0, what << "\n" << r.describe());
      BOOST_TEST(read_file(box.ws("done")).value_or("") == "done\n", what);
      const std::string ign = read_file(box.ws("ign")).value_or("");
      const unsigned long long mask =
          std::stoull(ign.substr(ign.find_first_not_of("SigIgn:\t ")), nullptr, 16);
      BOOST_TEST((mask >> (sig - 1) & 1) == 1, what << ": the command's " << ign);
    }
  }
}

BOOST_DATA_TEST_CASE(a_timeout_after_the_command_ran_says_so, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.options = {"--timeout", "1"};
  spec.command = {"/bin/sh", "-c", "trap '' INT TERM; echo yes > ran; sleep 30"};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 124, r.describe());
  BOOST_TEST(!says_nothing_ran(r), r.describe());
  BOOST_TEST(exists(box.ws("ran")));
}

// Control for the status logic: a command that cannot start inside is still reported as
// not started (the status stream proves it).
BOOST_DATA_TEST_CASE(a_command_that_never_started_is_reported_as_such, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  // Executable on the host, but its interpreter does not exist: execvp fails inside.
  box.write_file(box.ws("broken"), "#!/nonexistent/interpreter\n", 0755);
  RunSpec spec;
  spec.command = {box.ws("broken")};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 126, r.describe());
  BOOST_TEST(says_nothing_ran(r), r.describe());
}

BOOST_DATA_TEST_CASE(the_terminal_settings_outlive_no_run, bdata::make(kCallers), caller) {
  // How each run ends: by itself, by its timeout, by SIGTERM to zpolicy, by two SIGINTs.
  enum class End { Exit, Timeout, Sigterm, TwoSigints };
  for (End end : {End::Exit, End::Timeout, End::Sigterm, End::TwoSigints}) {
    Sandbox box(caller);
    Pty pty;
    BOOST_TEST_REQUIRE(pty.echo_and_canonical());
    const std::string changed = box.ws("changed");
    RunSpec spec;
    spec.stdin_fd = pty.slave;
    spec.limit = std::chrono::seconds(20);
    spec.command = {"/bin/sh", "-c",
                    std::string(end == End::TwoSigints ? "trap '' INT; " : "") +
                        "stty -echo -icanon && touch changed" +
                        (end == End::Exit ? "" : " && sleep 30")};
    if (end == End::Timeout) spec.options = {"--timeout", "2"};
    Running running = box.start(spec);
    bool did_change = wait_until([&] { return exists(changed); }, std::chrono::seconds(10));
    // The test can fail: while the run lasts, the terminal is as the command left it.
    bool seen_changed = end == End::Exit || !pty.echo_and_canonical();
    if (end == End::Sigterm) kill(running.pid, SIGTERM);
    if (end == End::TwoSigints) {
      kill(running.pid, SIGINT);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      kill(running.pid, SIGINT);
    }
    RunResult r = box.finish(running);
    BOOST_TEST_REQUIRE(did_change, static_cast<int>(end) << "\n" << r.describe());
    BOOST_TEST(seen_changed, static_cast<int>(end) << ": the command did not change the terminal");
    BOOST_TEST(pty.echo_and_canonical(),
               static_cast<int>(end) << ": the sandbox's stty outlived the run\n" << r.describe());
    BOOST_TEST(!r.hit_limit, r.describe());
  }
}

// The exit code cannot tell a harness whether to retry: a command may exit with 125, 126
// or 127 itself. The status document's "nothing_ran" is true only when the command was
// never executed, as bwrap's status stream tells (owner question 15).
BOOST_DATA_TEST_CASE(the_status_says_nothing_ran_only_when_the_command_never_started,
                     bdata::make(kCallers), caller) {
  struct Case {
    std::vector<std::string> command;
    int exit_code;
    std::string nothing_ran;
  };
  const std::vector<Case> cases = {
      {{"/bin/sh", "-c", "echo yes > ran; exit 125"}, 125, "false"},
      {{"/bin/sh", "-c", "echo yes > ran; exit 126"}, 126, "false"},
      {{"/bin/sh", "-c", "echo yes > ran; exit 127"}, 127, "false"},
      {{"/bin/sh", "-c", "echo yes > ran"}, 0, "false"},
      {{"/no/such/command"}, 127, "true"},
      {{"./not-executable"}, 126, "true"},
  };
  for (const auto& c : cases) {
    Sandbox box(caller);
    box.write_file(box.ws("not-executable"), "echo yes > ran\n", 0644);
    const std::string status = box.home() + "/status.json";
    RunSpec spec;
    spec.options = {"--status-file", status};
    spec.command = c.command;
    const RunResult r = box.run(spec);
    BOOST_TEST(r.exit_code == c.exit_code, c.command.front() << "\n" << r.describe());
    BOOST_TEST(says_nothing_ran_in_status(status) == c.nothing_ran, c.command.front()
                                                                        << "\n"
                                                                        << r.describe());
    // What the document claims matches what happened in the workspace.
    BOOST_TEST(exists(box.ws("ran")) == (c.nothing_ran == "false"), c.command.front());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
