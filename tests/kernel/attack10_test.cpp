#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "deny_root_runs.hpp"
#include "notify_share_check.hpp"
#include "sandbox_fixture.hpp"
#include "zpolicy/zpolicy.hpp"

// Red team round 10 (docs/redteam-2026-12.md): the notify share set while bwrap sets up
// (e544dd6), the guard's private mount namespace, and the watch of a missing deny root's way.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// `command` under `policy`, through `zpolicy run` or (executor) run_plan.py.
RunSpec through(const Sandbox& box, bool executor, const std::string& policy,
                const std::string& command) {
  RunSpec spec;
  run_through(box, executor, policy, {"/bin/sh", "-c", command}, spec);
  return spec;
}

// A10-1: the notify share was set in the user namespace that owns the sandbox init's
// network namespace. Under `network: full` that is the host's, owned by the caller's own
// user namespace, so every such run refused ("the sandbox has no user namespace of its own
// to bound its inotify and fanotify use in", exit 125): the share must be set in the
// sandbox's own namespace whatever the network.
void network_full_runs_with_its_share(Caller caller, bool executor) {
  Sandbox box(caller);
  const std::string policy = box.write_policy("full.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  write: ["${WORKSPACE}"]
network: full
)");
  const std::string script = box.write_policy("count.py", kCountNotifyHandles);
  const RunResult r = box.run(through(box, executor, policy, "/usr/bin/python3 " + script));
  BOOST_TEST(r.exit_code == 0, r.describe());
  if (r.exit_code == 0) check_notify_share(box);
}

// A10-2: a missing deny root is watched only where the sandbox sees the host. That was
// judged on its name alone: `/srv/keys/aws` with `/srv/keys -> /etc/keys` dangling and only
// /etc readable lay outside every read root, so nothing was watched, and the host creating
// /etc/keys/aws/credentials during the run showed it to the sandbox under its target's
// name (an existing target is masked; A17B-1 with restricted read roots).
// The same with the link leading nowhere the sandbox sees (`/srv/keys -> /nowhere/keys`)
// when the run starts, and re-pointed at /etc/keys by the host during the run (`repoint`):
// nothing was watched, not even the link's name.
void deny_root_leading_into_a_read_root(Caller caller, bool executor, bool repoint = false) {
  using namespace std::chrono_literals;
  Sandbox box(caller);
  const std::string rd = box.base() + "/rd", other = box.base() + "/other";
  box.make_dir(rd);
  box.make_dir(other);
  BOOST_REQUIRE(symlink((repoint ? box.base() + "/nowhere/keys" : rd + "/keys").c_str(),
                        (other + "/keys").c_str()) == 0);
  const std::string policy =
      box.write_policy("deny.yaml",
                       "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/usr\", "
                       "\"/lib\", \"/lib64\", \"/bin\", \"" +
                           rd +
                           "\", \"${WORKSPACE}\"]\n"
                           "  write: [\"${WORKSPACE}\"]\n  deny: [\"" +
                           other + "/keys/aws\"]\n");
  const std::string command =
      "touch started; i=0; while [ ! -e go ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i+1)); "
      "done; sleep 0.5; cat " +
      rd + "/keys/aws/credentials; exit 0";
  Running running = box.start(through(box, executor, policy, command));
  auto gone = [&] {
    std::ifstream stat("/proc/" + std::to_string(running.pid) + "/stat");
    const std::string line((std::istreambuf_iterator<char>(stat)), {});
    return line.find(") Z") != std::string::npos;
  };
  if (wait_until([&] { return exists(box.ws("started")) || gone(); }, 10s) &&
      exists(box.ws("started"))) {
    if (repoint) {
      const std::string fresh = other + "/fresh";
      BOOST_REQUIRE(symlink((rd + "/keys").c_str(), fresh.c_str()) == 0);
      BOOST_REQUIRE(rename(fresh.c_str(), (other + "/keys").c_str()) == 0);
    }
    BOOST_REQUIRE(mkdir((rd + "/keys").c_str(), 0755) == 0);
    BOOST_REQUIRE(mkdir((rd + "/keys/aws").c_str(), 0755) == 0);
    std::ofstream(rd + "/keys/aws/credentials") << "AKIA-EXAMPLE\n";
    box.write_file(box.ws("go"), "");
  }
  const RunResult r = box.finish(running);
  BOOST_TEST(r.out.find("AKIA") == std::string::npos, "the sandbox read it: " << r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(
      r.err.find(repoint ? "was renamed or removed on the host"
                         : "was created on the host while the sandbox ran") != std::string::npos,
      r.describe());
}

// A10-3: A9D-1's fix looks for the deny root in the sandbox before the release; a
// filesystem the host mounts *empty* over the watched directory between the watch and the
// guard's unshare passes that look, hides the directory from the watch (inotify watches
// the covered inode), and is in the sandbox: what the host creates in it during the run
// (`aws configure` on a volume mounted just then) is read. strace holds the first
// unshare(CLONE_NEWNS[|CLONE_NEWUSER]) 0.3 s while root, in a shared mount namespace
// standing for the host's, mounts an empty tmpfs there, and creates the deny root in it
// once the command has started.
void mounted_empty_before_the_namespace(Caller caller, bool executor) {
  Sandbox box(caller);
  const std::string mnt = box.base() + "/ro/mnt";
  BOOST_REQUIRE(mkdir((box.base() + "/ro").c_str(), 0755) == 0 && mkdir(mnt.c_str(), 0755) == 0);
  BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
  const std::string nr = std::to_string(SYS_unshare);
  const std::string mounter =
      std::string(kShellOwnProcesses) + "( i=0; until held " + nr +
      " '0x\\(100\\)\\?20000 ' || "
      "[ $i -ge 500 ]; do sleep 0.01; i=$((i+1)); done; mount -t tmpfs -o mode=0755 zp " +
      mnt + "; i=0; until [ -e " + box.ws("started") +
      " ] || [ $i -ge 300 ]; do sleep 0.01; "
      "i=$((i+1)); done; mkdir " +
      mnt + "/aws && echo AKIA-EXAMPLE > " + mnt +
      "/aws/credentials ) >/dev/null 2>&1 & exec \"$@\"";
  RunSpec spec = through(box, executor, deny_policy(box, mnt + "/aws"),
                         "touch started; sleep 1; cat " + mnt + "/aws/credentials");
  spec.root_prefix = {"/usr/bin/unshare", "-m", "--propagation", "shared",
                      "/bin/sh",          "-c", mounter,         "sh"};
  const auto strace = strace_holding("unshare", 300000);
  spec.root_prefix.insert(spec.root_prefix.end(), strace.begin(), strace.end());
  const RunResult r = box.run(spec);
  BOOST_TEST(r.out.find("AKIA") == std::string::npos, "read the deny root: " << r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
  BOOST_TEST(r.err.find("mounted or unmounted on the host") != std::string::npos, r.describe());
}

// A run opens the host's mount table once (runner/host_mount_table): resolution, the
// lints, the state directory's checks, A10-3's look for a run that watches a missing deny
// root's way and A11-4's for every run read that one descriptor (each read of a fresh one
// cost a run time for nothing). How many zpolicy holds while the command runs, under
// `policy`.
int mount_tables_held(const Sandbox& box, const std::string& policy) {
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c", "touch up; while [ ! -e go ]; do sleep 0.02; done"};
  Running running = box.start(spec);
  BOOST_REQUIRE(wait_until([&] { return exists(box.ws("up")); }, std::chrono::seconds(15)));
  int held = 0;
  const std::string fds = "/proc/" + std::to_string(running.pid) + "/fd";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(fds, ec))
    held += std::filesystem::read_symlink(e.path(), ec).string().ends_with("/mountinfo");
  box.write_file(box.ws("go"), "");
  const RunResult r = box.finish(running);
  BOOST_TEST(r.exit_code == 0, r.describe());
  unlink(box.ws("up").c_str());
  unlink(box.ws("go").c_str());
  return held;
}

// A10-4: an embedder that drops root in process is not dumpable, and its guard made itself
// dumpable while it wrote its user namespace's maps: for that moment any process of the new
// uid could read the guard's copy of the embedder's memory (what it read as root). The
// guard never raises dumpable now: such a caller is refused (exit 125) before anything
// runs, and one that made itself dumpable runs. The embedder is a child of this (root)
// test that drops to nobody with setresuid, without an exec.
int embedder_dropping_root(const Sandbox& box, bool make_dumpable, const std::string& err_path) {
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const uid_t id = uid_of(Caller::Nobody);
    if (err < 0 || dup2(err, STDERR_FILENO) < 0 || setgroups(0, nullptr) != 0 ||
        setresgid(id, id, id) != 0 || setresuid(id, id, id) != 0 ||
        chdir(box.workspace().c_str()) != 0)
      _exit(100);
    if (prctl(PR_GET_DUMPABLE) != 0 || (make_dumpable && prctl(PR_SET_DUMPABLE, 1) != 0))
      _exit(101);
    setenv("HOME", box.home().c_str(), 1);
    RunRequest request;
    request.command = {"/usr/bin/touch", "ran"};
    std::ostringstream messages;
    const int code = run_with_status(request, messages).exit_code;
    std::cerr << messages.str();
    std::cerr.flush();
    _exit(code);
  }
  int status = 0;
  BOOST_REQUIRE(waitpid(child, &status, 0) == child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack10)

BOOST_DATA_TEST_CASE(an_empty_filesystem_mounted_before_the_private_namespace_is_refused,
                     bdata::make(kCallers), caller) {
  mounted_empty_before_the_namespace(caller, false);
}

BOOST_DATA_TEST_CASE(an_executor_refuses_an_empty_filesystem_mounted_before_its_namespace,
                     bdata::make(kCallers), caller) {
  mounted_empty_before_the_namespace(caller, true);
}

BOOST_DATA_TEST_CASE(a_network_full_policy_runs_with_only_its_notify_share, bdata::make(kCallers),
                     caller) {
  network_full_runs_with_its_share(caller, false);
}

BOOST_DATA_TEST_CASE(an_executor_runs_a_network_full_plan_with_only_its_notify_share,
                     bdata::make(kCallers), caller) {
  network_full_runs_with_its_share(caller, true);
}

BOOST_DATA_TEST_CASE(a_deny_root_whose_dangling_link_leads_into_a_read_root_is_watched,
                     bdata::make(kCallers), caller) {
  deny_root_leading_into_a_read_root(caller, false);
}

BOOST_DATA_TEST_CASE(an_executor_watches_a_deny_root_whose_link_leads_into_a_read_root,
                     bdata::make(kCallers), caller) {
  deny_root_leading_into_a_read_root(caller, true);
}

BOOST_DATA_TEST_CASE(a_deny_roots_link_repointed_into_a_read_root_during_the_run_is_seen,
                     bdata::make(kCallers), caller) {
  deny_root_leading_into_a_read_root(caller, false, true);
}

BOOST_DATA_TEST_CASE(an_executor_sees_a_deny_roots_link_repointed_into_a_read_root,
                     bdata::make(kCallers), caller) {
  deny_root_leading_into_a_read_root(caller, true, true);
}

BOOST_DATA_TEST_CASE(a_run_opens_the_mount_table_once, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  BOOST_TEST(mount_tables_held(
                 box, box.write_policy("plain.yaml",
                                       "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  "
                                       "read: [\"/\"]\n  write: [\"${WORKSPACE}\"]\n")) == 1);
  BOOST_TEST(mount_tables_held(box, deny_policy(box, box.home() + "/.aws")) == 1);
}

BOOST_AUTO_TEST_CASE(an_embedder_that_dropped_root_in_process_is_refused_unless_dumpable) {
  Sandbox box(Caller::Nobody);
  const std::string err = box.base() + "/embedder.err";
  BOOST_TEST(embedder_dropping_root(box, false, err) == 125);
  BOOST_TEST(!exists(box.ws("ran")), "the command ran");
  BOOST_TEST(read_file(err).value_or("").find("this process is not dumpable") != std::string::npos,
             read_file(err).value_or(""));
  BOOST_TEST(embedder_dropping_root(box, true, err) == 0, read_file(err).value_or(""));
  BOOST_TEST(exists(box.ws("ran")), read_file(err).value_or(""));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
