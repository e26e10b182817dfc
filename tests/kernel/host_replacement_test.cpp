#include <unistd.h>

#include <chrono>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Red team R7-C1 (docs/redteam-2026-12.md): a host tool that renames or removes a name
// the sandbox's protection is mounted on, while the run is live, would leave the name to
// whatever the host puts there next, with the access of the mount around it. The run
// watches those names and stops the sandbox (runner/host_name_watch.hpp). Each case lets
// the command act only some time after the host's change (the documented window between
// the host's rename and the kill is not what is tested here).
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

using namespace std::chrono_literals;

// A command that says it is running, waits for the host's `go`, then runs `act`.
RunSpec after_go(const std::string& act) {
  RunSpec spec;
  spec.command = {"/bin/sh", "-c",
                  "touch ready; while [ ! -e go ]; do sleep 0.02; done; " + act + "; true"};
  return spec;
}

// Starts `spec`, makes the host's change once the command runs, then lets it act.
RunResult run_with_host_change(const Sandbox& box, const RunSpec& spec, const std::string& change) {
  Running running = box.start(spec);
  BOOST_REQUIRE(wait_until([&] { return exists(box.ws("ready")); }, 10s));
  box.host_command({"/bin/sh", "-c", "cd '" + box.workspace() + "' && " + change +
                                         " && sleep 0.3 && touch go"});
  return box.finish(running);
}

void check_stopped(const RunResult& r, const std::string& name) {
  BOOST_CHECK_MESSAGE(r.exit_code == 125, r.describe());
  BOOST_CHECK_MESSAGE(r.err.find(name) != std::string::npos &&
                          r.err.find("was renamed or removed on the host") != std::string::npos &&
                          r.err.find("the sandbox was stopped") != std::string::npos,
                      r.describe());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_host_replacement)

BOOST_DATA_TEST_CASE(a_protected_path_replaced_on_the_host_stops_the_sandbox,
                     bdata::make(kCallers), caller) {
  struct Case {
    std::string what, change, protected_name, act, written;
  };
  // What `npm ci`, an editor's atomic save and `mv .git` do, and the parent of a nested
  // protection renamed away.
  const Case cases[] = {
      {"an atomic save over .env", "echo A=2 > .env.new && mv .env.new .env", ".env",
       "echo pwn >> .env", ".env"},
      {"node_modules removed and made again", "rm -rf node_modules && mkdir -p node_modules/pad",
       "node_modules", "echo pwn > node_modules/pad/index.js", "node_modules/pad/index.js"},
      {".git renamed away and made again", "mv .git .git.old && mkdir -p .git/hooks", ".git",
       "echo pwn > .git/hooks/pre-commit", ".git/hooks/pre-commit"},
      {"the parent of a nested repository renamed away",
       "mv packages packages.old && mkdir -p packages/a/.git/hooks", "packages",
       "echo pwn > packages/a/.git/hooks/pre-commit", "packages/a/.git/hooks/pre-commit"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      Sandbox box(caller);
      box.make_dir(box.ws(".git/hooks"));
      box.make_dir(box.ws("node_modules/pad"));
      box.make_dir(box.ws("packages/a/.git/hooks"));
      box.write_file(box.ws(".env"), "A=1\n");
      const RunResult r = run_with_host_change(box, after_go(c.act), c.change);
      check_stopped(r, box.ws(c.protected_name));
      BOOST_CHECK_MESSAGE(read_file(box.ws(c.written)).value_or("").find("pwn") == std::string::npos,
                          c.written << " was written by the sandbox");
    }
  }
}

// The same for a deny root under a read-only root: the host's new object at the name
// would be readable through the read-only bind of /.
BOOST_DATA_TEST_CASE(a_denied_path_replaced_on_the_host_stops_the_sandbox, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.make_dir(box.home() + "/.ssh");
  box.write_file(box.home() + "/.ssh/id", "old-secret\n");
  const std::string policy = box.write_policy(
      "deny.yaml",
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n  write: "
      "[\"${WORKSPACE}\"]\n  deny: [\"" + box.home() + "/.ssh\"]\n");
  RunSpec spec = after_go("cat '" + box.home() + "/.ssh/id' > seen");
  spec.options = {"--policy", policy};
  const RunResult r = run_with_host_change(
      box, spec,
      "mv '" + box.home() + "/.ssh' '" + box.home() + "/.ssh.old' && mkdir '" + box.home() +
          "/.ssh' && echo new-secret > '" + box.home() + "/.ssh/id'");
  check_stopped(r, box.home() + "/.ssh");
  BOOST_CHECK_MESSAGE(read_file(box.ws("seen")).value_or("").find("secret") == std::string::npos,
                      "the sandbox read the host's new ~/.ssh");
}

// What the host does beside a run every day, without touching a protected name, must
// not stop it: other names renamed in the workspace, git's own renames inside .git.
BOOST_DATA_TEST_CASE(host_changes_beside_the_protected_names_leave_the_run_alone,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws(".git/refs"));
  box.make_dir(box.ws("src"));
  box.write_file(box.ws(".git/index"), "i\n");
  box.write_file(box.ws("src/a.c"), "a\n");
  box.write_file(box.ws(".envrc"), "x\n");
  const RunResult r = run_with_host_change(
      box, after_go("echo done > finished"),
      "echo j > .git/index.lock && mv .git/index.lock .git/index && mv src src2 && "
      "echo y > .envrc.new && mv .envrc.new .envrc && rm -rf src2");
  BOOST_CHECK_MESSAGE(r.exit_code == 0, r.describe());
  BOOST_CHECK_EQUAL(read_file(box.ws("finished")).value_or(""), "done\n");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
