#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cstring>

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

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_setup_check)

BOOST_DATA_TEST_CASE(a_destination_swapped_for_a_symlink_after_the_runner_checked_never_runs,
                     bdata::make(kCallers) * bdata::make(kSwaps), caller, swap) {
  Sandbox box(caller);
  const std::string policy = box.write_policy("setup.yaml", kDenyPolicy);
  box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
  box.write_file(box.ws(".env"), "TOKEN=1\n");
  box.write_file(box.ws("data/agent-sessions/log"), "session\n");
  box.write_file(box.ws("secrets/key"), "SECRET-4721\n");
  box.write_file(box.ws("private/key"), "SECRET-4722\n");
  box.write_file(box.ws("secret.txt"), "SECRET-4723\n");
  box.write_file(box.ws("decoy-dir/x"), "decoy\n");
  box.write_file(box.ws("decoy-file"), "decoy\n");
  box.write_file(box.ws("decoy-data/agent-sessions/x"), "decoy\n");
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

// The positive control: the same gate, acting on nothing, lets the run complete, so the
// refusals above are the swap's, not the gate's.
BOOST_DATA_TEST_CASE(an_unswapped_destination_runs_through_the_same_gate, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy("setup.yaml", kDenyPolicy);
  box.write_file(box.ws("secrets/key"), "SECRET-4721\n");
  box.write_file(box.ws("secret.txt"), "SECRET-4723\n");
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c", std::string("echo ") + kDoneMarker};
  ExecGate gate([] {});
  Running running = box.start(spec);
  gate.watch(running.pid);
  RunResult r = box.finish(running);
  BOOST_TEST(gate.acted());
  BOOST_TEST(r.completed(), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
