#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <thread>

#include "caller_pipe_flags.hpp"
#include "killed_launcher.hpp"
#include "notify_share_check.hpp"
#include "sandbox_fixture.hpp"
#include "stopped_run.hpp"

// `zpolicy plan --format json` holds everything a sandboxed run needs: an executor that
// knows nothing of zpolicy (examples/python/run_plan.py, written from docs/embedding.md)
// runs the plan, and the command is confined as `run` confines it: nothing outside the
// writable roots changes, the workspace is writable, the caller's secrets stay out, and
// the placeholders bwrap needs are made and removed again.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_plan_executor)

namespace {

// What an executor run needs: run_plan.py staged where the caller can read it, and the
// plan of `command` (after `options`) written beside it.
struct Executor {
  std::string script, plan;
};
Executor executor_for(const Sandbox& box, const std::vector<std::string>& options,
                      const std::vector<std::string>& command) {
  std::vector<std::string> argv = {zpolicy_binary(), "plan", "--format", "json"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  const RunResult planned = box.host_command(argv);
  BOOST_REQUIRE_MESSAGE(planned.exit_code == 0, planned.describe());
  return {box.write_policy("run_plan.py", source_file("examples/python/run_plan.py")),
          box.write_policy("plan.json", planned.out)};
}

}  // namespace

// Red team R7-C1 and R8-H1, for an executor of the plan: the host renames a protected name
// away (an editor's atomic save over .env), or creates a deny root nothing masks (`aws
// configure` in another terminal), while the sandbox runs. The plan's `watches` list the
// names `run` watches, and run_plan.py stops the sandbox as `run` does, before the command
// acts (it waits for the host's `go`, which comes 0.3 s after the change).
BOOST_DATA_TEST_CASE(an_executor_stops_the_sandbox_when_the_host_undoes_a_protection,
                     bdata::make(kCallers), caller) {
  using namespace std::chrono_literals;
  struct Case {
    std::string what, policy, change, act, written, message;
  };
  // "$AWS" is the caller's ~/.aws (each Sandbox has its own home).
  const Case cases[] = {
      {"an atomic save over .env", "", "echo A=2 > .env.new && mv .env.new .env",
       "echo pwn >> .env", ".env", "/.env was renamed or removed on the host"},
      {"a deny root created on the host", "deny-aws",
       "mkdir \"$AWS\" && echo pwn-secret > \"$AWS/credentials\"",
       "cat \"$AWS/credentials\" > seen", "seen", "/.aws, a deny root that did not exist"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      Sandbox box(caller);
      const std::string aws = "AWS='" + box.home() + "/.aws'; ";
      box.write_file(box.ws(".env"), "A=1\n");
      const std::string executor =
          box.write_policy("run_plan.py", source_file("examples/python/run_plan.py"));
      std::vector<std::string> plan_argv = {zpolicy_binary(), "plan", "--format", "json"};
      if (!c.policy.empty())
        plan_argv.insert(plan_argv.end(),
                         {"--policy", box.write_policy(c.policy + ".yaml",
                                                       "zpolicy: 1\nmode: workspace-write\n"
                                                       "filesystem:\n  read: [\"/\"]\n  write: "
                                                       "[\"${WORKSPACE}\"]\n  deny: [\"" +
                                                           box.home() + "/.aws\"]\n")});
      plan_argv.insert(plan_argv.end(),
                       {"--", "/bin/sh", "-c",
                        aws + "touch ready; while [ ! -e go ]; do sleep 0.02; done; " + c.act +
                            "; true"});
      auto planned = box.host_command(plan_argv);
      BOOST_REQUIRE_MESSAGE(planned.exit_code == 0, planned.describe());
      BOOST_TEST(planned.out.find("\"watches\": [{") != std::string::npos, planned.out);
      RunSpec spec;
      spec.launcher = {"/usr/bin/python3", executor, box.write_policy("plan.json", planned.out)};
      Running running = box.start(spec);
      BOOST_REQUIRE(wait_until([&] { return exists(box.ws("ready")); }, 10s));
      box.host_command({"/bin/sh", "-c", aws + "cd '" + box.workspace() + "' && " + c.change +
                                             " && sleep 0.3 && touch go"});
      const RunResult r = box.finish(running);
      BOOST_TEST(r.exit_code == 125, r.describe());
      BOOST_TEST(r.err.find(c.message) != std::string::npos, r.err);
      BOOST_TEST(r.err.find("the sandbox was stopped") != std::string::npos, r.err);
      BOOST_TEST(read_file(box.ws(c.written)).value_or("").find("pwn") == std::string::npos,
                 c.written << " was written by the sandbox");
    }
  }
}

BOOST_DATA_TEST_CASE(a_plan_run_by_an_independent_executor_is_confined_like_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string out = box.base() + "/outside";
  box.write_file(out + "/keep.txt", "original\n");
  const std::string before = snapshot(out);
  // Staged where the unprivileged caller can read it (the checkout may not be).
  const std::string executor =
      box.write_policy("run_plan.py", source_file("examples/python/run_plan.py"));

  const std::string script = "echo clobbered > " + out + "/keep.txt; touch " + out +
                             "/new.txt; rm -f " + out + "/keep.txt; echo inside > inside.txt; "
                             "echo git > .git/x; env; echo " + std::string(kDoneMarker);
  auto planned = box.host_command({zpolicy_binary(), "plan", "--format", "json", "--timeout",
                                   "60", "--", "/bin/sh", "-c", script});
  BOOST_TEST(planned.out.find("\"zpolicy_plan\": 7") != std::string::npos, planned.out);
  BOOST_TEST(planned.out.find(kSecretValue) == std::string::npos, "the plan carries the secret");
  const std::string plan = box.write_policy("plan.json", planned.out);

  auto ran = box.host_command({"/usr/bin/python3", executor, plan});
  BOOST_TEST(ran.out.find(kDoneMarker) != std::string::npos, ran.describe());
  // Nothing outside the workspace changed; the workspace itself was writable.
  BOOST_TEST(snapshot(out) == before);
  BOOST_TEST(read_file(box.ws("inside.txt")).value_or("") == "inside\n");
  // .git did not exist: the plan's placeholder made it, read-only inside, and removed it.
  BOOST_TEST(!exists(box.ws(".git")));
  BOOST_TEST(!exists(box.ws(".env")));
  BOOST_TEST(ran.err.find(".git/x") != std::string::npos, ran.err);
  BOOST_TEST(ran.out.find(kSecretName) == std::string::npos, ran.out);
  BOOST_TEST(ran.out.find("ZPOLICY_KT_") == std::string::npos, ran.out);
}

// Red team R5-K1, for an executor of the plan: bwrap takes end of file on the block
// descriptor as a release, so an executor killed while it checks the sandbox must leave
// bwrap nothing to run with. run_plan.py hands the seccomp program through a pipe it fills
// only at the release; killed before, bwrap reads an empty program and fails. (With the
// program in a memfd filled in advance, the command started unchecked.) The executor is
// stopped as soon as it has started bwrap, and killed once the init waits for the release.
BOOST_DATA_TEST_CASE(an_executor_killed_while_the_sandbox_is_checked_releases_nothing,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const Executor e = executor_for(box, {}, {"/bin/sh", "-c", "echo x > ran; sleep 2; echo y > late"});
  RunSpec spec;
  spec.launcher = {"/usr/bin/python3", e.script, e.plan};
  check_killed_launcher_releases_nothing(box, spec, box.ws("ran"), {box.ws("ran"), box.ws("late")},
                                         "the executor");
}

// run_plan.py looks at /proc/INIT/syscall until bwrap's init waits for the release; EACCES
// there comes and goes while bwrap changes credentials (R4-S1). When it stays (here: every
// read of it fails so, and each look is 5 s later on the clock), the executor ended with a
// traceback and left its placeholders. It must refuse cleanly: exit 125, a message, the
// placeholders removed, nothing run.
BOOST_DATA_TEST_CASE(an_executor_that_cannot_read_the_sandbox_state_refuses_cleanly,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string unreadable = box.write_policy(
      "unreadable.py",
      R"(import builtins, itertools, runpy, select, subprocess, sys, threading, time
real_open = builtins.open
def no_syscall(path, *args, **kwargs):
    if isinstance(path, str) and path.startswith("/proc/") and path.endswith("/syscall"):
        raise PermissionError(13, "Permission denied", path)
    return real_open(path, *args, **kwargs)
builtins.open = no_syscall
clock = itertools.count(0, 5.0)
time.monotonic = lambda: next(clock)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
)");
  const Executor e = executor_for(box, {}, {"/bin/sh", "-c", "echo x > ran"});
  RunSpec spec;
  spec.launcher = {"/usr/bin/python3", unreadable, e.script, e.plan};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(r.err.find("run_plan.py: the sandbox's state could not be read within 30 s "
                        "(Permission denied); nothing ran") != std::string::npos,
             r.err);
  BOOST_TEST(r.err.find("Traceback") == std::string::npos, r.err);
  BOOST_TEST(!exists(box.ws("ran")), "the command ran");
  for (const char* p : {".git", ".env", ".env.local", "node_modules"})
    BOOST_TEST(!exists(box.ws(p)), p << ": a placeholder was left");
}

// Red team R8-L2 and R9c-L3, for an executor of the plan: a command that opens inotify
// instances and fanotify groups until refused gets the plan's share (a quarter of its
// caller's), not every one its caller has, so the caller's other runs keep theirs.
BOOST_DATA_TEST_CASE(an_executor_gives_the_sandbox_only_its_share_of_inotify_and_fanotify,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const Executor e = executor_for(box, {}, {"/usr/bin/python3", "-c", kCountNotifyHandles});
  RunSpec spec;
  spec.launcher = {"/usr/bin/python3", e.script, e.plan};
  const RunResult ran = box.run(spec);
  BOOST_TEST(ran.exit_code == 0, ran.describe());
  check_notify_share(box);
}

// An executor that does not serve the network proxy refuses a plan that needs one, before
// anything starts, rather than run the command with no route out.
BOOST_DATA_TEST_CASE(an_executor_without_the_proxy_refuses_a_plan_that_needs_it,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string executor =
      box.write_policy("run_plan.py", source_file("examples/python/run_plan.py"));
  const std::string policy = box.write_policy(
      "allow.yaml", "zpolicy: 1\nmode: workspace-write\nnetwork:\n  allow: [pypi.org]\n");
  auto planned = box.host_command({zpolicy_binary(), "plan", "--policy", policy, "--format",
                                   "json", "--", "/bin/sh", "-c", "echo x > ran"});
  BOOST_REQUIRE_MESSAGE(planned.exit_code == 0, planned.describe());
  BOOST_TEST(planned.out.find("\"network_proxy\": {\"port\": 3128, \"allow\": [\"pypi.org:80\", "
                              "\"pypi.org:443\"], \"forwards\": []}") != std::string::npos,
             planned.out);
  RunSpec spec;
  spec.launcher = {"/usr/bin/python3", executor, box.write_policy("plan.json", planned.out)};
  const RunResult ran = box.run(spec);
  BOOST_TEST(ran.exit_code == 125, ran.describe());
  BOOST_TEST(ran.err.find("the plan needs the network proxy") != std::string::npos, ran.err);
  BOOST_TEST(!exists(box.ws("ran")));
  BOOST_TEST(!exists(box.ws(".git")));  // no placeholder was made either
}

BOOST_DATA_TEST_CASE(a_plan_refuses_what_run_refuses, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy(
      "home.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"~\"]\n");
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/true"};
  auto run = box.run(spec);
  BOOST_TEST(run.exit_code == 3, run.describe());
  // The same refusal, word for word, from plan, and no plan on stdout.
  auto planned = box.host_command({"/bin/sh", "-c",
                                   "\"$0\" plan --policy \"$1\" -- /bin/true 2>/dev/null; echo \"rc=$?\"; "
                                   "\"$0\" plan --policy \"$1\" -- /bin/true 2>&1 >/dev/null; exit 0",
                                   zpolicy_binary(), policy});
  BOOST_TEST(planned.out == "rc=3\n" + run.err);
}

// R18-5, for an executor of the plan: a pipe on stdout reaches the command as the caller's
// own open file, and the O_NONBLOCK (and O_APPEND) it sets there with F_SETFL stayed after
// the run, so the caller's next writer into the pipe got EAGAIN. run_plan.py puts the
// flags of 0-2 back as zpolicy does (the shell around it reads its stdout's flags, the same
// open file, before and after).
BOOST_DATA_TEST_CASE(an_executor_puts_back_the_flags_the_command_sets_on_the_callers_pipe,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const Executor e = executor_for(box, {}, kSetStdoutFlags);
  RunSpec spec;
  spec.root_prefix = kShowStdoutFlags;
  spec.launcher = {"/usr/bin/python3", e.script, e.plan};
  expect_stdout_flags_restored(box.run(spec));
}

// R18-3, for an executor of the plan: bwrap's --new-session keeps the command out of the
// terminal's process groups, so ^Z (SIGTSTP) stopped run_plan.py alone, and the command
// ran on unsupervised, past the plan's timeout. run_plan.py does not stop a pid namespace
// (zpolicy's runner does); ^Z ends the run: the sandbox is killed, exit 148, no tick after
// it, nothing late. The executor runs in a process group of its own whose parent is in the
// same session, as a shell's job (the kernel does not stop an orphaned group).
BOOST_DATA_TEST_CASE(an_executor_ends_the_run_at_ctrl_z_rather_than_leave_it_unsupervised,
                     bdata::make(kCallers), caller) {
  using namespace std::chrono_literals;
  Sandbox box(caller);
  const Executor e = executor_for(box, {"--timeout", "2s"}, {"/bin/sh", "-c", kTicks});
  RunSpec spec;
  spec.root_prefix = kInOwnProcessGroup;
  spec.launcher = {"/usr/bin/python3", e.script, e.plan};
  Running running = box.start(spec);
  BOOST_TEST_REQUIRE(wait_until([&] { return lines_in(box.ws("ticks")) >= 2; }, 15000ms));
  const auto executor = processes_with_argv({"/usr/bin/python3", e.script, e.plan, "--"});
  BOOST_TEST_REQUIRE(executor.size() == 1u);
  kill(executor[0], SIGTSTP);
  const RunResult r = box.finish(running);
  const size_t at_end = lines_in(box.ws("ticks"));
  std::this_thread::sleep_for(1000ms);
  BOOST_TEST(r.exit_code == 148, r.describe());
  BOOST_TEST(r.err.find("^Z (SIGTSTP)") != std::string::npos, r.describe());
  BOOST_TEST(lines_in(box.ws("ticks")) == at_end, "the command ran on after the run ended");
  BOOST_TEST(!exists(box.ws("late")), r.describe());
}

// R18-4, for an executor of the plan: started in the background (`&`) with the terminal on
// stdin, the sandbox, outside the terminal's session, would read what is typed to the
// shell. run_plan.py refuses such a run (125) before anything is made; nothing is read.
// The harness is a session leader with a pseudo-terminal for its controlling terminal,
// the executor a job of its own in the background of it.
BOOST_DATA_TEST_CASE(an_executor_started_in_the_background_of_its_terminal_refuses,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const Executor e = executor_for(box, {}, {"/bin/sh", "-c", "read -r l; echo \"$l\" > stolen"});
  const std::string driver = box.write_policy("background.py", R"PY(
import fcntl, os, signal, sys, termios
if os.fork():
    sys.exit(os.waitstatus_to_exitcode(os.wait()[1]))
signal.alarm(40)
os.setsid()
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os.dup2(slave, 0)
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv[1:])
os.write(master, b"typed-to-the-shell\n")
print("rc=%d" % os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
)PY");
  const RunResult r = box.host_command({"/usr/bin/python3", driver, e.script, e.plan});
  BOOST_TEST(r.out.find("rc=125") != std::string::npos, r.describe());
  BOOST_TEST(r.err.find("descriptor 0 is the terminal this process runs in the background of") !=
                 std::string::npos,
             r.describe());
  BOOST_TEST(!exists(box.ws("stolen")), r.describe());
  BOOST_TEST(!exists(box.ws(".git")));  // refused before any placeholder was made
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace kernel
