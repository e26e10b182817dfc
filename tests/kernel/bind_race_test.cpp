#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <random>
#include <sstream>
#include <thread>

#include "sandbox_fixture.hpp"

// Red-team E1 and its class (docs/redteam-2026-12.md, docs/run.md "Binding by
// descriptor"): a host path the verified argv binds (the workspace, a pin, a protected
// directory) is exchanged with a symlink to a victim directory while `zpolicy run`
// starts, again and again. Whatever the moment of the swap (before resolution, between
// verification and the placeholders, between the placeholders and bwrap's mount), the
// victim must stay unchanged: a start either binds the verified directory or refuses.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// How long each test keeps starting runs: enough for a hundred or so starts against the
// swapper, bounded so that the suite stays quick. Not an assertion on time.
constexpr auto kRaceFor = std::chrono::seconds(4);

// Exchanges `a` (a directory) with `b` (a symlink) for short, randomly placed moments,
// from a thread of the test (root): most starts see the directory throughout, and the
// moments the symlink stands in land anywhere in a start. Leaves the directory at `a`.
class Swapper {
 public:
  Swapper(std::string a, std::string b) : a_(std::move(a)), b_(std::move(b)) {
    thread_ = std::thread([this] {
      std::mt19937 rng(std::random_device{}());
      std::uniform_int_distribution<int> hold_dir(0, 8000), hold_link(0, 1000);  // µs
      while (!stop_) {
        std::this_thread::sleep_for(std::chrono::microseconds(hold_dir(rng)));
        exchange();
        std::this_thread::sleep_for(std::chrono::microseconds(hold_link(rng)));
        exchange();
      }
    });
  }
  ~Swapper() {
    stop_ = true;
    thread_.join();
    struct stat st;
    if (lstat(a_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) exchange();
  }
  int swaps() const { return swaps_; }

 private:
  void exchange() {
    if (syscall(SYS_renameat2, AT_FDCWD, a_.c_str(), AT_FDCWD, b_.c_str(), RENAME_EXCHANGE) == 0)
      ++swaps_;
  }
  std::string a_, b_;
  std::atomic<bool> stop_{false};
  std::atomic<int> swaps_{0};
  std::thread thread_;
};

struct Tally {
  int starts = 0, completed = 0;
};

// Starts `zpolicy run` in sub/ (by cwd and by --workspace, alternately) running `script`
// until kRaceFor has passed.
Tally start_repeatedly(Sandbox& box, const std::string& script) {
  Tally t;
  const auto end = std::chrono::steady_clock::now() + kRaceFor;
  while (std::chrono::steady_clock::now() < end) {
    RunSpec victim;
    victim.limit = std::chrono::seconds(10);
    if (t.starts % 2)
      victim.options = {"--workspace", box.ws("sub")};
    else
      victim.cwd = box.ws("sub");
    victim.command = {"/bin/sh", "-c", script + "; echo " + kDoneMarker};
    if (box.run(victim).completed()) ++t.completed;
    ++t.starts;
  }
  return t;
}

// The positive control: with the swapper gone, the same start completes (so the
// refusals above were the race, not a setup that never runs).
bool completes_unraced(Sandbox& box) {
  RunSpec control;
  control.cwd = box.ws("sub");
  control.command = {"/bin/sh", "-c", std::string("echo ") + kDoneMarker};
  return box.run(control).completed();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_bind_race)

// The workspace itself (E1 as found): swapped for a symlink to the caller's HOME, which
// ZP003 refuses as a workspace, so nothing may ever be created or written there: no
// placeholder (data/agent-sessions, node_modules), no file of the command.
BOOST_DATA_TEST_CASE(a_workspace_swapped_for_a_symlink_while_runs_start_binds_nothing_else,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("sub"));
  // Relative, as an attacker would write it: bwrap resolves a path source under
  // /oldroot, where an absolute target would name nothing.
  BOOST_TEST_REQUIRE(::symlink("../home", box.ws("subL").c_str()) == 0);
  const std::string before = snapshot(box.home());
  Tally t;
  int swaps = 0;
  {
    Swapper s(box.ws("sub"), box.ws("subL"));
    t = start_repeatedly(box, "touch pwn-$$");
    swaps = s.swaps();
  }
  BOOST_TEST_MESSAGE(caller << ": " << t.starts << " starts, " << t.completed << " completed, "
                            << swaps << " swaps");
  BOOST_TEST(snapshot(box.home()) == before, "HOME changed:\n" << snapshot(box.home()));
  BOOST_TEST(completes_unraced(box), "a run without the swapper does not complete");
}

// A pin (`data`, bound writable as the parent of the protected data/agent-sessions) and
// a protected directory (`.git`, bound read-only), each swapped for a symlink to a victim
// directory: the source side (bwrap would bind the victim) and the destination side (the
// mount lands on the symlink instead of the verified directory).
// E1d (docs/redteam-2026-12.md): a symlink in place of the destination when bwrap
// mounts, swapped back before bwrap's own identity check (lstat of the destination),
// passes that check; the runner's check of the finished setup (docs/run.md "Checking
// the sandbox before the command starts") refuses to release the command.
BOOST_DATA_TEST_CASE(a_pin_or_protected_dir_swapped_for_a_symlink_binds_nothing_else,
                     bdata::make(kCallers) * bdata::make({"data", ".git"}), caller, swapped) {
  Sandbox box(caller);
  const std::string victim = box.base() + "/victim";
  box.write_file(victim + "/kept", "victim\n");
  box.write_file(box.ws("sub/.git/HEAD"), "ref: refs/heads/main\n");
  box.make_dir(box.ws("sub/data/agent-sessions"));
  const std::string name = std::string("sub/") + swapped;
  BOOST_TEST_REQUIRE(::symlink("../../victim", box.ws(name + "L").c_str()) == 0);
  const std::string victim_before = snapshot(victim);
  const std::string git_before = snapshot(box.ws("sub/.git"));
  const std::string sessions_before = snapshot(box.ws("sub/data/agent-sessions"));
  Tally t;
  int swaps = 0;
  {
    Swapper s(box.ws(name), box.ws(name + "L"));
    // Whichever name the verified directory has while the command runs (the swapper
    // keeps exchanging), and the victim's file through either name.
    t = start_repeatedly(box, "for f in data/kept data/pwn-$$ .git/kept .git/pwn-$$ "
                              "data/agent-sessions/pwn-$$ dataL/agent-sessions/pwn-$$ "
                              "dataL/kept .gitL/kept .gitL/pwn-$$; do touch $f; done 2>/dev/null");
    swaps = s.swaps();
  }
  BOOST_TEST_MESSAGE(caller << " " << swapped << ": " << t.starts << " starts, " << t.completed
                            << " completed, " << swaps << " swaps");
  BOOST_TEST(snapshot(victim) == victim_before,
             "the victim changed:\n" << snapshot(victim) << "before:\n" << victim_before);
  BOOST_TEST(snapshot(box.ws("sub/.git")) == git_before, "the protected .git changed");
  BOOST_TEST(snapshot(box.ws("sub/data/agent-sessions")) == sessions_before,
             "the protected data/agent-sessions changed");
  BOOST_TEST(completes_unraced(box), "a run without the swapper does not complete");
}

// The fix of A14-L1 (runner/bind_stage.hpp): the guard's child pins every bind source on a
// tmpfs it mounts on /sys in a namespace of its own, and bwrap mounts from there. The
// sandbox must see none of it, covered or not: not the stage's tmpfs, not an entry of it,
// and its /sys is the host's sysfs, whose entries it reads.
BOOST_DATA_TEST_CASE(the_sandbox_sees_nothing_of_where_its_bind_sources_were_pinned,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("sub/.git"));
  RunSpec spec;
  spec.cwd = box.ws("sub");
  spec.command = {"/bin/sh", "-c",
                  "cat /proc/self/mountinfo; echo sys-type $(stat -f -c %T /sys); "
                  "test -d /sys/kernel && echo sys-kernel; echo " +
                      std::string(kDoneMarker)};
  const RunResult r = box.run(spec);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("zpolicy-stage") == std::string::npos, r.out);
  BOOST_TEST(r.out.find("sys-type sysfs") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("sys-kernel") != std::string::npos, r.out);
  // mountinfo: "ID PARENT MAJ:MIN ROOT POINT ...": no mount point is a stage entry
  // (/sys/N, N a descriptor number).
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    if (!(fields >> id >> parent >> dev >> root >> point) || point.rfind("/sys/", 0) != 0) continue;
    BOOST_TEST(point.find_first_not_of("0123456789", 5) != std::string::npos,
               "a stage entry is mounted in the sandbox: " << line);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
