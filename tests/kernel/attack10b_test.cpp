#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "deny_root_runs.hpp"
#include "sandbox_fixture.hpp"

// Red team round 10b (docs/redteam-2026-12.md): placeholders shared between `zpolicy run`
// and an executor of a plan (examples/python/run_plan.py, docs/embedding.md).
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// Says it is up, then waits for the host to release it.
std::vector<std::string> waiting(const std::string& name) {
  return {"/bin/sh", "-c",
          "touch up-" + name + "; while [ ! -e release-" + name +
              " ]; do sleep 0.05; done; echo '" + kDoneMarker + "'"};
}

Running start_and_wait(const Sandbox& box, const RunSpec& spec, const std::string& name) {
  Running r = box.start(spec);
  BOOST_TEST_REQUIRE(
      wait_until([&] { return exists(box.ws("up-" + name)); }, std::chrono::seconds(15)));
  return r;
}

// `zpolicy cleanup DIR` as the box's caller, on the host; its exit status.
int cleanup(const Sandbox& box) {
  const auto r = box.host_command({"/bin/sh", "-c", "\"$0\" cleanup \"$1\"; echo \"exit=$?\"",
                                   zpolicy_binary(), box.workspace()});
  const auto at = r.out.rfind("exit=");
  return at == std::string::npos ? -1 : std::stoi(r.out.substr(at + 5));
}

// A10B-1: an executor of a plan takes no part in the host run lock, so `zpolicy cleanup`
// (and a `zpolicy run` reconciling dead records, or ending alone) takes the host for quiet
// while it runs. A killed `zpolicy run` left `.env`, an empty placeholder; run_plan.py's
// plan binds that directory read-only over `.env`; cleanup removed it, which detached the
// mount: the sandbox could create `.env` until the executor's watch stopped it (and the
// executor's run was stopped either way).
void executor_beside_a_killed_run(Caller caller) {
  using namespace std::chrono_literals;
  Sandbox box(caller);
  RunSpec a;
  a.command = waiting("a");
  Running ra = start_and_wait(box, a, "a");
  kill(ra.pid, SIGKILL);
  box.finish(ra);
  BOOST_TEST_REQUIRE(wait_until([&] { return processes_with_argv(waiting("a")).empty(); }, 5s));
  BOOST_TEST_REQUIRE(exists(box.ws(".env")), ".env: the killed run made no placeholder");

  const std::string policy =
      box.write_policy("env.yaml",
                       "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n  write: "
                       "[\"${WORKSPACE}\"]\n  protect: [.env]\n");
  RunSpec b;
  run_through(box, true, policy, waiting("b"), b);
  Running rb = start_and_wait(box, b, "b");
  // Other tests' runs keep cleanup from acting (exit 1): try for a while.
  wait_until(
      [&] {
        cleanup(box);
        return !exists(box.ws(".env"));
      },
      2s);
  BOOST_TEST(exists(box.ws(".env")), ".env removed under run_plan.py's live run");
  box.write_file(box.ws("release-b"), "");
  const RunResult res = box.finish(rb);
  BOOST_TEST(res.completed(), res.describe());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack10b)

BOOST_DATA_TEST_CASE(cleanup_leaves_what_an_executors_live_run_relies_on, bdata::make(kCallers),
                     caller) {
  executor_beside_a_killed_run(caller);
}

// A10B-2 (open): zpolicy's state directory is denied to the sandbox, but only the one this
// run uses. A caller's runs may use two (`$XDG_RUNTIME_DIR/zpolicy` under a session,
// `/tmp/zpolicy-UID` from cron or ssh without one); a sandbox that may write /tmp (ZP013
// accepted) wrote a record into the other, and `zpolicy cleanup` (or a run) without
// XDG_RUNTIME_DIR gave the caller's read-only directory the owner's rwx, and removed it
// when empty. Root's state is always /run/zpolicy: nobody only.
BOOST_AUTO_TEST_CASE(a_sandbox_cannot_write_the_callers_other_state_directory,
                     *boost::unit_test::expected_failures(1)) {
  using namespace std::chrono_literals;
  Sandbox box(Caller::Nobody);
  const std::string target = box.home() + "/keep", xdg = box.base() + "/xdg";
  box.make_dir(target);
  box.make_dir(xdg);
  box.host_command({"/bin/chmod", "0500", target});
  box.host_command({"/bin/chmod", "0700", xdg});
  const std::string other = "/tmp/zpolicy-65534", forged = other + "/run-attack10b-forged";
  RunSpec spec;
  spec.options = {"--accept", "ZP013", "--policy",
                  box.write_policy("tmp.yaml",
                                   "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: "
                                   "[\"/\"]\n  write: [\"${WORKSPACE}\", \"/tmp\"]\n")};
  spec.extra_env = {"XDG_RUNTIME_DIR=" + xdg};
  spec.command = {
      "/bin/sh",
      "-c",
      "mkdir -p -m 0700 \"$0\" && echo \"v2 $(stat -c '%d %i %.9W' \"$1\") $1\" > \"$2\"",
      other,
      target,
      forged};
  const RunResult r = box.run(spec);
  BOOST_TEST_MESSAGE(r.describe());
  // Other tests' runs keep cleanup from acting (exit 1): try for a while.
  wait_until(
      [&] {
        const auto c = box.host_command({"/bin/sh", "-c", "\"$0\" cleanup \"$1\"; echo \"exit=$?\"",
                                         zpolicy_binary(), box.home()});
        return c.out.find("exit=1") == std::string::npos;
      },
      5s);
  unlink(forged.c_str());
  struct stat st {};
  // One failure either way while open: removed, or (its parent not the caller's) chmod'ed.
  if (lstat(target.c_str(), &st) != 0)
    BOOST_TEST(false, "the caller's own directory was removed");
  else
    BOOST_TEST((st.st_mode & 07777) == 0500u,
               "its mode was changed to " << std::oct << (st.st_mode & 07777));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
