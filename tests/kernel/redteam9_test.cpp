#include <fstream>
#include <string>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Round 9 of the red-team pass (docs/redteam-2026-12.md "Round 9"): what one sandbox can
// take from its caller's other runs, kernel state under other names, and what bwrap is
// handed and says.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_redteam9)

// R8-L2: a command opens inotify instances until the kernel refuses one and holds them;
// the caller's instances (fs.inotify.max_user_instances, 128) were then all taken, and
// every other run of the same user refused ("cannot watch the protected names on the
// host: Too many open files", exit 125). The sandbox gets a share of the caller's limit;
// a concurrent run must start, and a command using a few instances still gets them.
BOOST_DATA_TEST_CASE(a_sandbox_that_takes_every_inotify_instance_stops_no_other_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  Sandbox other(caller);
  const std::string release = box.base() + "/release";
  RunSpec hog;
  hog.command = {"/usr/bin/python3", "-c",
                 "import ctypes, os, time\n"
                 "libc = ctypes.CDLL(None)\n"
                 "n = 0\n"
                 "while n < 100000 and libc.inotify_init1(0) >= 0: n += 1\n"
                 "open('held', 'w').write(str(n))\n"
                 "t = time.time()\n"
                 "while not os.path.exists('" + release + "') and time.time() - t < 20:\n"
                 "    time.sleep(0.01)\n"};
  Running held = box.start(hog);
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return exists(box.ws("held")); }, std::chrono::seconds(15)),
                        "the command never reported its instances");
  RunSpec quick;
  quick.command = {"/bin/true"};
  const RunResult concurrent = other.run(quick);
  std::ofstream(release).put('\n');
  const RunResult hogged = box.finish(held);
  BOOST_CHECK_MESSAGE(concurrent.exit_code == 0, concurrent.describe());
  BOOST_CHECK_MESSAGE(hogged.exit_code == 0, hogged.describe());
  // What the command got: at least the few instances an editor's or a test runner's
  // watchers use, and less than the caller's whole limit.
  const int got = std::stoi(read_file(box.ws("held")).value_or("0"));
  BOOST_CHECK_MESSAGE(got >= 8, "the sandbox got " << got << " inotify instances");
  const int limit = std::stoi(read_file("/proc/sys/fs/inotify/max_user_instances").value_or("0"));
  BOOST_CHECK_MESSAGE(got <= limit / 4, "the sandbox got " << got << " of " << limit);
}

// R9-K1: the verifier and the lints knew host kernel state by its names, /proc and /sys.
// The same files under another name (a bind of /sys/kernel/mm, a second procfs mount, as
// monitoring containers have at /host/sys and /host/proc) were a writable workspace, and a
// root-started sandbox opened `transparent_hugepage/enabled` and `vm/overcommit_ratio`
// for writing (and an mqueue mount is the host's message queues). The mounts are made in a
// mount namespace of the test's own; the command only opens, it never writes or creates.
BOOST_DATA_TEST_CASE(kernel_state_under_another_name_is_never_a_writable_root,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy(
      "p.yaml",
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n  write: "
      "[\"${WORKSPACE}\"]\n  protect: []\n");
  const std::string sys = box.base() + "/mm", proc = box.base() + "/p", mq = box.base() + "/mq";
  box.make_dir(sys);
  box.make_dir(proc);
  box.make_dir(mq);
  struct Case {
    std::string setup, cwd, file;
  };
  for (const Case& c : {Case{"mount --bind /sys/kernel/mm " + sys, sys, "transparent_hugepage/enabled"},
                        Case{"mount -t proc proc " + proc, proc + "/sys/vm", "overcommit_ratio"},
                        Case{"mount -t mqueue mqueue " + mq, mq, "none-such"}}) {
    RunSpec spec;
    spec.root_prefix = {"/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                        c.setup + " && cd " + c.cwd + " && exec \"$@\"", "sh"};
    spec.options = {"--policy", policy};
    spec.command = {"/usr/bin/python3", "-c",
                    "import os; os.open('" + c.file + "', os.O_WRONLY); print('OPENED')"};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 3 && r.err.find("[ZP017]") != std::string::npos,
                        c.cwd << ": " << r.describe());
    BOOST_CHECK_MESSAGE(r.out.find("OPENED") == std::string::npos, c.cwd << ": " << r.describe());
  }
}

// R9-A1: bwrap takes at most 9000 arguments, its command line's and --args' together, and
// dies past them once started: an environment of 3 000 variables (three arguments each)
// ended in "the sandbox could not start '/bin/sh'; nothing ran", exit 126, followed by "the
// command exited with status 126". It is refused while planned, saying why; 2 000 run.
BOOST_DATA_TEST_CASE(an_environment_bwrap_cannot_take_is_refused_before_it_starts,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  auto with_variables = [&](int n) {
    RunSpec spec;
    for (int i = 0; i < n; ++i) {
      spec.options.push_back("--env");
      spec.options.push_back("V" + std::to_string(i) + "=x");
    }
    spec.command = {"/bin/sh", "-c", "env | grep -c '^V[0-9]*=x$'"};
    return box.run(spec);
  };
  const RunResult over = with_variables(3000);
  BOOST_CHECK_MESSAGE(over.exit_code == 2, over.describe());
  BOOST_CHECK_MESSAGE(over.err.find("bwrap takes at most 9000") != std::string::npos, over.describe());
  BOOST_CHECK_MESSAGE(over.err.find("exited with status") == std::string::npos, over.describe());
  const RunResult under = with_variables(2000);
  BOOST_CHECK_MESSAGE(under.exit_code == 0 && under.out == "2000\n", under.describe());
}

// R9-H1: a command the sandbox cannot start (here: it lies in a deny root, so the host
// finds it and the sandbox does not) ended in "the sandbox could not start ...; nothing
// ran" and then "the command exited with status 126 ...", which a harness reading the
// last line takes for the command's own failure. The line now says it did not start.
BOOST_DATA_TEST_CASE(a_command_that_never_started_is_not_said_to_have_exited,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string tools = box.base() + "/tools";
  box.make_dir(tools);
  box.write_file(tools + "/hello", "#!/bin/sh\necho hello\n", 0755);
  const std::string policy = box.write_policy(
      "p.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  deny: [\"" + tools + "\"]\n");
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {tools + "/hello"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 126 || r.exit_code == 127, r.describe());
  BOOST_CHECK_MESSAGE(r.out.find("hello") == std::string::npos, r.describe());
  BOOST_CHECK_MESSAGE(r.err.find("nothing ran") != std::string::npos, r.describe());
  BOOST_CHECK_MESSAGE(r.err.find("exited with status") == std::string::npos, r.describe());
  BOOST_CHECK_MESSAGE(r.err.find("did not start") != std::string::npos, r.describe());
}

// R9-G1: a bare repository in the workspace (a test fixture, a `git clone --mirror`, a
// local remote) has no `.git`, so `**/.git` did not protect it: the sandbox wrote its
// config (`core.pager`, run by host git on the next `git log` there) and its hooks
// (`pre-receive`, run on a push into it). It is protected whole now; the rest of the
// workspace stays writable.
BOOST_DATA_TEST_CASE(a_bare_repository_in_the_workspace_stays_read_only, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("fixtures"));
  box.host_command({"/usr/bin/git", "init", "-q", "--bare", box.ws("fixtures/t.git")});
  const std::string before = snapshot(box.ws("fixtures/t.git"));
  const RunResult r = box.sh(
      "echo '[core] pager = touch PWNED' >> fixtures/t.git/config; "
      "echo 'touch PWNED' > fixtures/t.git/hooks/pre-receive; "
      "mv fixtures/t.git fixtures/moved; mkdir fixtures/t.git2 && echo ok > fixtures/t.git2/x");
  BOOST_CHECK_MESSAGE(r.completed(), r.describe());
  BOOST_CHECK_EQUAL(snapshot(box.ws("fixtures/t.git")), before);
  BOOST_CHECK(!exists(box.ws("fixtures/moved")));
  BOOST_CHECK_EQUAL(read_file(box.ws("fixtures/t.git2/x")).value_or(""), "ok\n");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
