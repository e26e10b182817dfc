#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <atomic>
#include <thread>

#include "exec_gate.hpp"
#include "sandbox_fixture.hpp"

// Round 4 of the red-team pass (docs/redteam-2026-12.md "Round 4"): the host-side setup
// check (E1d), the run lock and the `--workspace` spelling rule (R3-L1, R3-E1s), attacked
// as a concurrent sandbox with write access to the same workspace would.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// Plays a concurrent sandbox that can write the workspace: exchanges two names in it
// (RENAME_EXCHANGE, as renameat2 in any sandbox allows) until stopped.
class Exchanger {
 public:
  Exchanger(std::string a, std::string b) : a_(std::move(a)), b_(std::move(b)) {
    thread_ = std::thread([this] {
      while (!stop_)
        syscall(SYS_renameat2, AT_FDCWD, a_.c_str(), AT_FDCWD, b_.c_str(), RENAME_EXCHANGE);
    });
  }
  ~Exchanger() { stop(); }
  // Stops with `a` back under its own name (an even number of exchanges).
  void stop() {
    if (stop_.exchange(true)) return;
    thread_.join();
    struct stat st {};
    if (lstat(a_.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      syscall(SYS_renameat2, AT_FDCWD, a_.c_str(), AT_FDCWD, b_.c_str(), RENAME_EXCHANGE);
  }

 private:
  std::string a_, b_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The run of the held attack below, and of R4-S1.
struct AncestorSwap {
  RunResult r;
  bool ran, leaked;
};

AncestorSwap run_with_an_ancestor_of_a_deny_root_swapped(Caller caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy("deny.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/"]
  write: ["${WORKSPACE}"]
  deny: ["${WORKSPACE}/a/b/secrets"]
network: none
)");
  box.write_file(box.ws("a/b/secrets/key"), "SECRET-4731\n");
  box.write_file(box.ws("decoy/b/secrets/x"), "decoy\n");
  BOOST_TEST_REQUIRE(::symlink("decoy", box.ws("a-moved").c_str()) == 0);
  const std::string ran = "ran-" + unique_token();
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c", "touch " + ran + "; cat a*/b/secrets/key; echo " + kDoneMarker};
  ExecGate gate([&] {
    BOOST_TEST_REQUIRE(syscall(SYS_renameat2, AT_FDCWD, box.ws("a").c_str(), AT_FDCWD,
                               box.ws("a-moved").c_str(), RENAME_EXCHANGE) == 0);
  });
  Running running = box.start(spec);
  gate.watch(running.pid);
  RunResult r = box.finish(running);
  BOOST_TEST_REQUIRE(gate.acted(), "the gate never saw the run exec bwrap");
  return {r, exists(box.ws(ran)), r.out.find("SECRET-4731") != std::string::npos};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam4)

// Held: the directory above a deny root swapped for a symlink to a decoy while bwrap
// starts, so that the tmpfs would land on the decoy's `secrets` and leave the real one,
// now under the other name, bare. The ancestors of a deny root are pinned by descriptor
// (--bind-fd), so bwrap's own check of the pin refuses ("Race condition binding dirfd");
// a double swap that passed it would leave the pin off its path, which the runner's walk
// refuses (kernel_bind_race, kernel_setup_check).
BOOST_DATA_TEST_CASE(an_ancestor_of_a_deny_root_swapped_while_bwrap_starts_never_runs,
                     bdata::make(kCallers), caller) {
  auto [r, ran, leaked] = run_with_an_ancestor_of_a_deny_root_swapped(caller);
  BOOST_TEST((r.exit_code == 125 || r.exit_code == 126), r.describe());
  BOOST_TEST(r.err.find("nothing ran") != std::string::npos, r.describe());
  BOOST_TEST(!ran, "the command ran");
  BOOST_TEST(!leaked, r.describe());
}

// R4-S1 (status truthfulness, low): when bwrap itself fails during setup in a run started
// by an unprivileged user, the runner's watch of the init often finds /proc/PID/syscall
// unreadable (EACCES) before the init is gone and reports "the sandbox is not what was
// verified: cannot watch the sandbox's setup", exit 125, in place of bwrap's own failure
// (126, "could not start"). Fail closed, but the cause and the exit code were wrong (4 runs
// in 5). Fixed: EACCES there is transient (bwrap is undumpable while it changes
// credentials), so the watch goes on until the init blocks or is gone.
// Since R7-C1 the swap, a rename on the host, may be seen first as what it is: then
// exit 125 with that cause, still never "cannot watch".
BOOST_AUTO_TEST_CASE(bwraps_own_setup_failure_is_reported_as_such) {
  auto [r, ran, leaked] = run_with_an_ancestor_of_a_deny_root_swapped(Caller::Nobody);
  BOOST_TEST((r.exit_code == 126 ||
              (r.exit_code == 125 &&
               r.err.find("was renamed or removed on the host") != std::string::npos)),
             r.describe());
  BOOST_TEST(r.err.find("nothing ran") != std::string::npos, r.describe());
  BOOST_TEST(r.err.find("cannot watch") == std::string::npos, r.describe());
  BOOST_TEST(!ran);
  BOOST_TEST(!leaked);
}

// R4-W2 (E3 class, root): `/run` is accepted as a root workspace. It holds what root's
// services read back: systemd's runtime units (/run/systemd/system, loaded at the next
// daemon-reload), sudo's timestamps (/run/sudo/ts), PID files root's scripts kill by.
// The run below wrote a root-owned file into the host's /run. Fixed: ZP013 covers /run.
BOOST_AUTO_TEST_CASE(run_as_a_root_workspace_is_refused) {
  Sandbox box(Caller::Root);
  const std::string canary = "/run/zpolicy-rt4-" + unique_token();
  box.remove_later(canary);
  RunSpec spec;
  spec.cwd = "/run";
  spec.command = {"/bin/sh", "-c", "echo x > " + canary};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 3, r.describe());
  BOOST_TEST(r.err.find("ZP013") != std::string::npos, r.describe());
  BOOST_TEST(!exists(canary), "the sandbox wrote into the host's /run");
}

// R4-W1: `--workspace WS/sub` is canonicalized (realpath) before the spelling is walked
// for symlinks (compiler/resolve/resolve.cpp host_facts). A sandbox that exchanges `sub`
// with a symlink to a directory outside the workspace in a loop wins when realpath meets
// the symlink and the walk, an instant later, the directory: the run binds the symlink's
// target as its workspace, writable, with no refusal (R3-E1s reopened by a race).
// The target was written within 5 to 30 runs as nobody, and about one plan in ten as
// root. Fixed: the walk returns the canonical path it reached, and a workspace whose walk
// and canonicalization disagree is refused ("changed while it was resolved").
BOOST_DATA_TEST_CASE(
    a_workspace_spelling_swapped_between_canonicalization_and_the_walk_binds_nothing_else,
    bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string victim = box.home() + "/project";
  box.make_dir(victim);
  box.make_dir(box.ws("sub"));
  BOOST_TEST_REQUIRE(::symlink(victim.c_str(), box.ws("sub-link").c_str()) == 0);
  const std::string before = snapshot(victim);
  RunSpec spec;
  spec.options = {"--workspace", box.ws("sub")};
  spec.command = {"/bin/sh", "-c", "echo pwn > pwned"};
  int refused = 0, ran_in_sub = 0;
  {
    Exchanger swapper(box.ws("sub"), box.ws("sub-link"));
    for (int i = 0; i < 60 && snapshot(victim) == before; ++i) {
      auto r = box.run(spec);
      (r.exit_code == 0 ? ran_in_sub : refused)++;
    }
  }
  BOOST_TEST_MESSAGE("refused " << refused << ", ran " << ran_in_sub);
  BOOST_TEST(snapshot(victim) == before, "a run bound the symlink's target as its workspace");
}

// Held: the lexical spellings of one workspace (trailing slash, `.`, `..` back in,
// doubled slashes, relative) give the plan its canonical spelling gives, byte for byte,
// so what `plan` shows is what `run` of any spelling executes.
BOOST_DATA_TEST_CASE(every_plain_spelling_of_the_workspace_plans_the_same_sandbox,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("a"));
  auto plan = [&](const std::string& spelled) {
    return box
        .host_command({"/bin/sh", "-c",
                       "cd \"$0\" && \"$1\" plan --workspace \"$2\" -- true 2>&1; echo \"exit=$?\"",
                       box.workspace(), zpolicy_binary(), spelled})
        .out;
  };
  const std::string canonical = plan(box.workspace());
  BOOST_TEST_REQUIRE(canonical.ends_with("exit=0\n"), canonical);
  for (const std::string& spelled :
       std::vector<std::string>{box.workspace() + "/", box.workspace() + "/a/..",
                                box.workspace() + "//.", ".", "./", "a/..", "a/../"})
    BOOST_TEST(plan(spelled) == canonical, "--workspace " << spelled);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
