#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <regex>

#include "exec_gate.hpp"
#include "sandbox_fixture.hpp"

// E1d (docs/redteam-2026-12.md; docs/run.md "Checking the sandbox before the command
// starts"): bwrap resolves every mount destination by path while it sets up, in
// directories other runs' sandboxes can write. The race made deterministic: a fanotify
// permission gate on bwrap holds the runner's exec of bwrap, after the runner has opened
// and checked every bind source, while the test (playing a concurrent sandbox) swaps a
// destination for a symlink. bwrap then mounts elsewhere; the command must never start.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

void exchange(const std::string& a, const std::string& b) {
  BOOST_TEST_REQUIRE(syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(),
                             RENAME_EXCHANGE) == 0,
                     "exchange " << a << ": " << std::strerror(errno));
}

const char* kDenyPolicy = R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/"]
  write: ["${WORKSPACE}"]
  protect: [.git, .env, data/agent-sessions]
  deny: ["${WORKSPACE}/secrets", "${WORKSPACE}/private", "${WORKSPACE}/secret.txt"]
network: none
)";

// One member of the class: the destination swapped, relative to the workspace, and what
// the symlink points to (a sibling in the workspace the sandbox could write). bwrap
// 0.8.0 checks a bind by descriptor itself (lstat of the destination must be the
// descriptor's object), which a single swap fails ("Race condition binding dirfd") and a
// double swap passes (kernel_bind_race); nothing of bwrap's checks a --tmpfs, so there
// the runner's check is the only one.
struct Swap {
  const char* name;
  const char* decoy;
  bool bwrap_checks;
};
std::ostream& operator<<(std::ostream& os, const Swap& s) { return os << s.name; }

const Swap kSwaps[] = {
    {".git", "decoy-dir", true},                    // a protected directory (--ro-bind-fd)
    {".env", "decoy-file", true},                   // a protected file
    {"data", "decoy-data", true},                   // the pin above data/agent-sessions
    {"data/agent-sessions", "../decoy-dir", true},  // a protected directory below a pin
    {"secret.txt", "decoy-file", true},             // a denied file (/dev/null bound on it)
    {"secrets", "decoy-dir", false},                // a denied directory (--tmpfs)
    {"private", "decoy-dir", false},                // another one
};

const char* kClimbPolicy = R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/"]
  write: ["${WORKSPACE}"]
  protect: [.env]
  deny: ["${WORKSPACE}/secret.txt"]
network: none
)";

// A destination in the workspace swapped for a symlink that climbs out of bwrap's new
// root into its /oldroot: bwrap's ensure_file() creates the symlink's target before its
// own check of the bind fails. A protected file (its own descriptor) through the host's
// names in /oldroot, and a denied one (/dev/null's) through the copy of the host's root
// the guard's child attached at /sys/N for bwrap. (The directories above a destination
// are binds, the workspace and pins, which bwrap checks before it makes anything below
// them, and ensure_dir() makes nothing through a symlink at the destination itself: a
// swap before bwrap starts reaches no mkdir(); one between its steps does,
// kernel_bind_race.)
struct Climb {
  const char* name;
  bool through_root_copy;
};
std::ostream& operator<<(std::ostream& os, const Climb& c) {
  return os << c.name << (c.through_root_copy ? " (the root's copy)" : "");
}
const Climb kClimbs[] = {{".env", false}, {"secret.txt", true}};

// The descriptor `zpolicy plan` gives the bind of `path`, i.e. where the guard's child
// attaches its copy (runner/bind_stage.hpp: kBindStage/N).
std::string descriptor_of(const Sandbox& box, const std::string& policy,
                          const std::string& path) {
  const RunResult plan = box.host_command(
      {zpolicy_binary(), "plan", "--policy", policy, "--format", "json", "--", "/bin/true"});
  const std::regex bind(R"re("fd":\s*([0-9]+),\s*"path":\s*")re" + path + "\"");
  std::smatch m;
  BOOST_TEST_REQUIRE(std::regex_search(plan.out, m, bind), plan.describe());
  return m[1];
}

// The "../" that lead from the directory `dir` (absolute) in bwrap's new root out of it,
// to the root of bwrap's base tmpfs, where its /oldroot is.
std::string climb(const std::string& dir) {
  std::string up = "../";  // out of bwrap's /newroot too, into its base tmpfs
  for (char c : dir)
    if (c == '/') up += "../";
  return up;
}

// `original` (in the workspace) exchanged with `moved`, a symlink the caller made, when
// the run execs bwrap, and the run (whose command touches `ran` in the workspace) let
// finish. The runner is stopped from the swap until bwrap has given up (or set up), so
// that its watch of the renamed name cannot kill bwrap first: bwrap meets the symlink
// every time. `victim` is the directory below which bwrap would create the entry.
RunResult run_swapped_at_exec(Sandbox& box, const std::string& policy,
                              const std::string& original, const std::string& moved,
                              const std::string& victim, const std::string& ran) {
  const std::string before = snapshot(victim);
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c", "touch " + ran + "; echo " + kDoneMarker};
  std::atomic<pid_t> runner{0};
  std::atomic<bool> stopped{false};
  int bwrap = -1;
  ExecGate gate([&] {
    stopped = kill(runner, SIGSTOP) == 0;
    bwrap = static_cast<int>(syscall(SYS_pidfd_open, gate.bwrap(), 0));
    exchange(original, moved);
  });
  Running running = box.start(spec);
  runner = running.pid;
  gate.watch(running.pid);
  BOOST_TEST_REQUIRE(wait_until([&] { return gate.acted(); }, std::chrono::seconds(10)));
  BOOST_TEST_REQUIRE(stopped.load());
  BOOST_TEST_REQUIRE(bwrap >= 0);
  // bwrap gives up at the symlink (its own check of a bind, or a creation refused), or
  // sets up and waits for the runner's release: either way, once it has gone or made the
  // entry, it has done all it would do.
  pollfd gone{bwrap, POLLIN, 0};
  wait_until([&] { return poll(&gone, 1, 0) == 1 || snapshot(victim) != before; },
             std::chrono::seconds(10));
  close(bwrap);
  kill(runner, SIGCONT);
  return box.finish(running);
}

const char* kProtectedDirPolicy = R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/"]
  write: ["${WORKSPACE}"]
  protect: [.env, .git]
  deny: ["${WORKSPACE}/secrets"]
network: none
)";

// A destination in the workspace (.env, bound before .git) swapped for a symlink below a
// protected directory or a deny root of the same workspace, reached through the new
// root's name (bwrap has bound the workspace there, not yet .git's protection) or
// through the workspace's copy the guard's child attached at /sys/N (which bwrap never
// covers).
struct Below {
  const char* target;  // relative to the workspace
  bool through_copy;
};
std::ostream& operator<<(std::ostream& os, const Below& b) {
  return os << b.target << (b.through_copy ? " (the workspace's copy)" : "");
}
const Below kBelow[] = {
    {".git/index.lock", false}, {".git/hooks/evil", true}, {"secrets/planted", false}};

struct NamedPolicy {
  const char* name;
  const char* yaml;
};
std::ostream& operator<<(std::ostream& os, const NamedPolicy& p) { return os << p.name; }
const NamedPolicy kPolicies[] = {
    {"setup.yaml", kDenyPolicy}, {"climb.yaml", kClimbPolicy}, {"below.yaml", kProtectedDirPolicy}};

// The workspace every case here starts from, under the policy it runs with: the entries
// the policies above protect or deny (in any of them: each is a plain file or directory
// under the others), and the decoys a swap puts in their place.
struct SwapWorkspace {
  Sandbox box;
  std::string policy;
  SwapWorkspace(Caller caller, const char* name, const char* yaml)
      : box(caller), policy(box.write_policy(name, yaml)) {
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws(".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
    box.write_file(box.ws(".env"), "TOKEN=1\n");
    box.write_file(box.ws("data/agent-sessions/log"), "session\n");
    box.write_file(box.ws("secrets/key"), "SECRET-4721\n");
    box.write_file(box.ws("private/key"), "SECRET-4722\n");
    box.write_file(box.ws("secret.txt"), "SECRET-4723\n");
    box.write_file(box.ws("decoy-dir/x"), "decoy\n");
    box.write_file(box.ws("decoy-file"), "decoy\n");
    box.write_file(box.ws("decoy-data/agent-sessions/x"), "decoy\n");
  }

  // `original` exchanged with a symlink to `link` when the run execs bwrap
  // (run_swapped_at_exec): bwrap must create nothing below `victim`, and the command
  // must not start.
  void expect_nothing_created(const std::string& original, const std::string& link,
                              const std::string& victim, const std::string& what) {
    const std::string moved = original + "-moved";
    BOOST_TEST_REQUIRE(::symlink(link.c_str(), moved.c_str()) == 0);
    const std::string before = snapshot(victim);
    const std::string ran = "ran-" + unique_token();
    const RunResult r = run_swapped_at_exec(box, policy, original, moved, victim, ran);

    BOOST_TEST(snapshot(victim) == before,
               "bwrap created an entry " << what << ": " << snapshot(victim) << r.describe());
    BOOST_TEST(r.err.find("nothing ran") != std::string::npos, r.describe());
    BOOST_TEST(!exists(box.ws(ran)), "the command ran");
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_setup_check)

// E1d's host side (docs/run.md "Binding by descriptor"): whatever bwrap follows into its
// /oldroot while it sets up is read-only (runner/bind_stage.hpp), so it creates nothing on
// the host.
BOOST_DATA_TEST_CASE(a_destination_swapped_for_a_symlink_into_oldroot_creates_nothing_on_the_host,
                     bdata::make(kCallers) * bdata::make(kClimbs), caller, climb_in) {
  SwapWorkspace w(caller, "climb.yaml", kClimbPolicy);
  const std::string victim = w.box.home() + "/victim";
  w.box.make_dir(victim);
  const std::string link =
      climb(w.box.workspace()) + "oldroot" +
      (climb_in.through_root_copy ? "/sys/" + descriptor_of(w.box, w.policy, "/") : std::string()) +
      victim + "/created";
  w.expect_nothing_created(w.box.ws(climb_in.name), link, victim, "on the host");
}

// E1d's last member: the same swap, the symlink landing below a protected directory or a
// deny root of the run's own writable root, which bwrap wrote through until it had
// mounted that path's protection in the new root (and never through the copy at /sys/N).
// The stage mounts each protection in the writable root's copy before bwrap runs, which
// bwrap's bind of the workspace takes along: the host's directory gets no entry.
BOOST_DATA_TEST_CASE(a_destination_swapped_for_a_symlink_below_a_protected_path_creates_nothing,
                     bdata::make(kCallers) * bdata::make(kBelow), caller, below) {
  SwapWorkspace w(caller, "below.yaml", kProtectedDirPolicy);
  const std::string target = below.target;
  const std::string link =
      below.through_copy ? climb(w.box.workspace()) + "oldroot/sys/" +
                               descriptor_of(w.box, w.policy, w.box.workspace()) + "/" + target
                         : target;
  w.expect_nothing_created(w.box.ws(".env"), link, w.box.ws(target.substr(0, target.find('/'))),
                           "below a protected path");
}

BOOST_DATA_TEST_CASE(a_destination_swapped_for_a_symlink_after_the_runner_checked_never_runs,
                     bdata::make(kCallers) * bdata::make(kSwaps), caller, swap) {
  SwapWorkspace w(caller, "setup.yaml", kDenyPolicy);
  Sandbox& box = w.box;
  const std::string& policy = w.policy;
  const std::string original = box.ws(swap.name);
  const std::string moved = original + "-moved";
  BOOST_TEST_REQUIRE(::symlink(swap.decoy, moved.c_str()) == 0);
  const std::string before = snapshot(original);

  const std::string ran = "ran-" + unique_token();
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c",
                  "touch " + ran + "; cat secret* private*/key 2>/dev/null; echo " +
                      kDoneMarker};
  ExecGate gate([&] { exchange(original, moved); });
  Running running = box.start(spec);
  gate.watch(running.pid);
  RunResult r = box.finish(running);
  BOOST_TEST_REQUIRE(gate.acted(), "the gate never saw the run exec bwrap: " << r.describe());

  // The runner refuses what it finds at the destination, or, first, the rename itself
  // (runner/host_name_watch.hpp: the swap renames a protected name on the host).
  const bool ours = r.exit_code == 125 && (r.err.find("not what was verified") != std::string::npos ||
                                           r.err.find("was renamed or removed on the host") !=
                                               std::string::npos);
  const bool bwraps = r.exit_code == 126 && r.err.find("Race condition") != std::string::npos;
  BOOST_TEST((ours || (swap.bwrap_checks && bwraps)), r.describe());
  BOOST_TEST(r.err.find("nothing ran") != std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws(ran)), "the command ran");
  BOOST_TEST(r.out.find("SECRET-47") == std::string::npos, r.describe());
  // The verified object, now under the other name, is unchanged.
  BOOST_TEST(snapshot(moved) == before, "the swapped-away object changed");
}

// The positive control: the same gate, acting on nothing, lets the run complete in the
// same workspace under each policy, so the refusals above are the swap's, not the gate's
// or the workspace's.
BOOST_DATA_TEST_CASE(an_unswapped_destination_runs_through_the_same_gate,
                     bdata::make(kCallers) * bdata::make(kPolicies), caller, policy) {
  SwapWorkspace w(caller, policy.name, policy.yaml);
  RunSpec spec;
  spec.options = {"--policy", w.policy};
  spec.command = {"/bin/sh", "-c", std::string("echo ") + kDoneMarker};
  ExecGate gate([] {});
  Running running = w.box.start(spec);
  gate.watch(running.pid);
  RunResult r = w.box.finish(running);
  BOOST_TEST(gate.acted());
  BOOST_TEST(r.completed(), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
