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
              " ]; do sleep 0.05; done; echo '" + kDoneMarker + "'" + this_suites_mark()};
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

// A10B-2: zpolicy's state directory is hidden from the sandbox, but a caller's runs could
// use more than one: `$XDG_RUNTIME_DIR/zpolicy` under a session, `/tmp/zpolicy-UID` from
// cron or ssh without one, and the first `/tmp/zpolicy-UID-XXXXXX` of the caller's when
// another user had taken that name. A sandbox that could write where another of them lies
// (/tmp with ZP013 accepted, or the runtime directory) made it, with a run record naming
// any directory of the caller's, and `zpolicy cleanup` (or a run) that chose that
// directory gave the caller's read-only directory the owner's rwx, and removed it when
// empty. Each member: a run whose sandbox forges such a record, then `zpolicy cleanup` as
// the same caller; the record names `keep`, a 0500 directory in HOME, which must stay as
// it is. The record is made as a run makes one (mode 0600, one link). Everything happens in a fresh
// /tmp of a mount namespace of its own, so that no other test's state directory is touched. Root's
// state is always /run/zpolicy: root is a control in each member.
struct Forgery {
  std::vector<std::string> run_env;      // the forging run's environment additions
  std::vector<std::string> write;        // writable roots besides the workspace
  std::string setup;                     // run as root in the fresh /tmp first
  std::string state;                     // the directory the sandbox makes a record in
  std::vector<std::string> cleanup_env;  // `env` arguments of the cleanup
};

void forged_record_is_not_acted_on(const Sandbox& box, const Forgery& f) {
  const Caller caller = box.caller();
  const std::string target = box.home() + "/keep";
  box.make_dir(target);
  box.host_command({"/bin/chmod", "0500", target});
  std::string write = "\"${WORKSPACE}\"";
  for (const auto& w : f.write) write += ", \"" + w + "\"";
  const std::string as_caller =
      caller == Caller::Root ? std::string()
                             : "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ";
  std::string cleanup_env;
  for (const auto& e : f.cleanup_env) cleanup_env += " '" + e + "'";
  // Other tests' runs keep cleanup from acting (exit 1): try for a while.
  const std::string cleanup = "for i in $(seq 50); do " + as_caller + "/usr/bin/env" + cleanup_env +
                              " " + zpolicy_binary() + " cleanup " + box.home() +
                              " >/dev/null 2>&1; c=$?; [ $c != 1 ] && break; sleep 0.1; done; "
                              "echo cleanup-exit=$c";
  RunSpec spec;
  spec.root_prefix = in_private_mount_namespace("mount -t tmpfs -o mode=1777 tmpfs /tmp && " +
                                                f.setup + "\"$@\"; " + cleanup);
  spec.options = {"--accept", "ZP013", "--policy",
                  box.write_policy("forge.yaml",
                                   "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: "
                                   "[\"/\"]\n  write: [" +
                                       write + "]\n")};
  spec.extra_env = f.run_env;
  spec.command = {"/bin/sh", "-c",
                  "umask 077 && mkdir -p \"$0\" && echo \"v2 $(stat -c '%d %i %.9W' \"$1\") $1\" > "
                  "\"$0/run-1-1\" "
                  "&& echo forged",
                  f.state, target};
  const RunResult r = box.run(spec);
  BOOST_TEST_MESSAGE(r.describe());
  BOOST_WARN_MESSAGE(r.out.find("cleanup-exit=0") != std::string::npos,
                     "cleanup never found the host quiet: " << r.describe());
  struct stat st {};
  if (lstat(target.c_str(), &st) != 0)
    BOOST_TEST(false, "the caller's own directory was removed\n" << r.describe());
  else
    BOOST_TEST((st.st_mode & 07777) == 0500u, "its mode was changed to "
                                                  << std::oct << (st.st_mode & 07777) << "\n"
                                                  << r.describe());
}

std::string fixed_state_name(Caller caller) {
  return "/tmp/zpolicy-" + std::to_string(uid_of(caller));
}

// A directory of the caller's that could be its XDG_RUNTIME_DIR.
std::string runtime_dir(const Sandbox& box) {
  const std::string xdg = box.base() + "/xdg";
  box.make_dir(xdg);
  box.host_command({"/bin/chmod", "0700", xdg});
  return xdg;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack10b)

BOOST_DATA_TEST_CASE(cleanup_leaves_what_an_executors_live_run_relies_on, bdata::make(kCallers),
                     caller) {
  executor_beside_a_killed_run(caller);
}

// The run has XDG_RUNTIME_DIR, the cleanup has none (a cron job): the record is made in
// /tmp/zpolicy-UID.
BOOST_DATA_TEST_CASE(a_sandbox_cannot_write_the_callers_other_state_directory,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string xdg = runtime_dir(box);
  forged_record_is_not_acted_on(box, {{"XDG_RUNTIME_DIR=" + xdg},
                                      {"/tmp"},
                                      "",
                                      fixed_state_name(caller),
                                      {"-u", "XDG_RUNTIME_DIR"}});
}

// The other way round: the run has none, the cleanup has one, which the sandbox could
// write (a writable root).
BOOST_DATA_TEST_CASE(a_sandbox_cannot_make_the_state_directory_of_a_later_runtime_dir,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string xdg = runtime_dir(box);
  forged_record_is_not_acted_on(box, {{}, {xdg}, "", xdg + "/zpolicy", {"XDG_RUNTIME_DIR=" + xdg}});
}

// Another user took /tmp/zpolicy-UID first, mode 0777, with a record of its own in it; the
// sandbox makes a directory of the caller's that sorts before the one its run uses.
BOOST_DATA_TEST_CASE(a_sandbox_cannot_make_the_state_directory_a_taken_name_falls_back_to,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string fixed = fixed_state_name(caller);
  const std::string keep = box.home() + "/keep", record = fixed + "/run-2-2";
  const std::string other_users = "install -d -o 4242 -g 4242 -m 0777 " + fixed +
                                  " && echo \"v2 $(stat -c '%d %i %.9W' " + keep + ") " + keep +
                                  "\" > " + record + " && chown 4242:4242 " + record +
                                  " && chmod 0666 " + record + " && ";
  forged_record_is_not_acted_on(box, {{}, {"/tmp"}, other_users, fixed + "-000000", {}});
}

// The state directory's filesystem bind-mounted on the host into a writable root: the same
// directory under another name, which the mask at its own path does not cover (for root a
// fresh /run/zpolicy, so that the host's is not touched).
BOOST_DATA_TEST_CASE(a_sandbox_cannot_reach_the_state_directory_through_a_host_bind_mount,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string alias = box.base() + "/alias";
  const bool root = caller == Caller::Root;
  const std::string setup =
      "mkdir " + alias + " && " +
      (root ? "mkdir -p /run/zpolicy && mount -t tmpfs -o mode=0700 tmpfs /run/zpolicy && "
              "mount --rbind /run "
            : "mount --bind /tmp ") +
      alias + " && ";
  forged_record_is_not_acted_on(
      box, {{}, {alias}, setup, alias + (root ? "/zpolicy" : "/zpolicy-65534"), {}});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
