#include <fcntl.h>
#include <poll.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <functional>
#include <thread>

#include "compiler/backend_paths.hpp"
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

pid_t parent_of(pid_t pid) {
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return -1;
  const size_t paren = stat->rfind(')');
  if (paren == std::string::npos) return -1;
  char state;
  int ppid = -1;
  return std::sscanf(stat->c_str() + paren + 1, " %c %d", &state, &ppid) == 2 ? ppid : -1;
}

// Holds every exec of bwrap until it is judged; at the first exec by a child of
// `zpolicy()` (the run under test), runs `act` before allowing it. Any other exec (none
// is expected while a test runs) is allowed at once.
class ExecGate {
 public:
  explicit ExecGate(std::function<void()> act) : act_(std::move(act)) {
    fan_ = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_CLOEXEC);
    BOOST_TEST_REQUIRE(fan_ >= 0, "fanotify_init: " << std::strerror(errno));
    BOOST_TEST_REQUIRE(fanotify_mark(fan_, FAN_MARK_ADD, FAN_OPEN_EXEC_PERM, AT_FDCWD,
                                     compiler::kBwrapPath) == 0,
                       "fanotify_mark: " << std::strerror(errno));
    thread_ = std::thread([this] { serve(); });
  }
  ~ExecGate() {
    stop_ = true;
    thread_.join();
    close(fan_);
  }
  void watch(pid_t zpolicy) { zpolicy_ = zpolicy; }
  bool acted() const { return acted_; }

 private:
  void serve() {
    alignas(fanotify_event_metadata) char buf[4096];
    while (!stop_) {
      pollfd p{fan_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = read(fan_, buf, sizeof buf);
      auto* ev = reinterpret_cast<fanotify_event_metadata*>(buf);
      for (ssize_t left = n; FAN_EVENT_OK(ev, left); ev = FAN_EVENT_NEXT(ev, left)) {
        if (!acted_) {
          // The run may exec bwrap before the test learns zpolicy's pid: wait for it.
          while (zpolicy_ == 0 && !stop_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          if (parent_of(ev->pid) == zpolicy_) {
            act_();
            acted_ = true;
          }
        }
        fanotify_response r{ev->fd, FAN_ALLOW};
        (void)!write(fan_, &r, sizeof r);
        close(ev->fd);
      }
    }
  }
  std::function<void()> act_;
  int fan_ = -1;
  std::atomic<pid_t> zpolicy_{0};
  std::atomic<bool> acted_{false}, stop_{false};
  std::thread thread_;
};

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
  BOOST_TEST_REQUIRE(gate.acted(), "the gate never saw the run exec bwrap");

  const bool ours = r.exit_code == 125 && r.err.find("not what was verified") != std::string::npos;
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
