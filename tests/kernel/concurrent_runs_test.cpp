#include <signal.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Invariant 11, concurrency: runs overlapping in one workspace share the placeholders
// that make missing protected paths uncreatable. A run that ends (or is killed) never
// removes one another live run relies on, and zpolicy's own state (the lock, the run
// records) is out of every sandbox's reach. Everything is observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// The missing protected paths of the default policy (`data` itself missing too).
const std::vector<std::string> kMissing = {".env", ".env.local", ".next", "data"};

// A long run: says it is up, waits for the host to release it, then tries to create or
// replace every protected path and writes a control file of its own.
std::string waiting_attack(const std::string& name) {
  return "touch up-" + name + "; while [ ! -e release-" + name +
         " ]; do sleep 0.05; done\n"
         "touch .env.local .env 2>/dev/null; mkdir -p data/agent-sessions/x .next/x 2>/dev/null\n"
         "echo SECRET=1 > .env.local 2>/dev/null; rm -rf .env .next 2>/dev/null\n"
         "mkdir .env.local/x 2>/dev/null; echo x > .git/config 2>/dev/null\n"
         "rm -rf .git 2>/dev/null; echo 'gitdir: /tmp' > .git 2>/dev/null\n"
         "ls -a data .env .env.local .next > seen-" +
         name + " 2>&1; echo control > control-" + name + "\necho '" + kDoneMarker + "'" +
         this_suites_mark() + "\n";
}

struct Workspace {
  explicit Workspace(Caller caller) : box(caller) {
    box.write_file(box.ws(".git/config"), "[core]\n");
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    git = snapshot(box.ws(".git"));
  }
  Running start(const std::string& name) const {
    RunSpec spec;
    spec.command = {"/bin/sh", "-c", waiting_attack(name)};
    return box.start(spec);
  }
  bool up(const std::string& name) const {
    return wait_until([&] { return exists(box.ws("up-" + name)); }, std::chrono::seconds(15));
  }
  void release(const std::string& name) const { box.write_file(box.ws("release-" + name), ""); }
  // Host side: nothing protected was created or changed.
  void check_protected(const std::string& when) const {
    BOOST_TEST(snapshot(box.ws(".git")) == git, when);
    for (const auto& m : kMissing)
      if (exists(box.ws(m)))
        BOOST_TEST(snapshot(box.ws(m)).find("agent-sessions/x") == std::string::npos, when);
    BOOST_TEST(!exists(box.ws("data/agent-sessions/x")), when);
    BOOST_TEST(!exists(box.ws(".env.local/x")), when);
    BOOST_TEST(!exists(box.ws(".next/x")), when);
  }
  void check_no_placeholder_left() const {
    for (const auto& m : kMissing) BOOST_TEST(!exists(box.ws(m)), m << " left behind");
  }
  Sandbox box;
  std::string git;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_concurrent_runs)

// The reproduction of issue 14 §4: the first run ends while the second still runs.
BOOST_DATA_TEST_CASE(a_run_ending_early_leaves_the_other_protected, bdata::make(kCallers), caller) {
  Workspace w(caller);
  Running a = w.start("a");
  BOOST_TEST_REQUIRE(w.up("a"));
  Running b = w.start("b");
  BOOST_TEST_REQUIRE(w.up("b"));
  w.release("a");
  RunResult ra = w.box.finish(a);
  BOOST_TEST(ra.completed(), ra.describe());
  w.check_protected("after the first run ended");
  w.release("b");
  RunResult rb = w.box.finish(b);
  BOOST_TEST(rb.completed(), rb.describe());
  w.check_protected("after both ended");
  // Positive control: both ran their commands and wrote their own files.
  BOOST_TEST(read_file(w.box.ws("control-a")).value_or("") == "control\n");
  BOOST_TEST(read_file(w.box.ws("control-b")).value_or("") == "control\n");
  w.check_no_placeholder_left();
}

// Three runs, ending in the order first, third, second; the later ones attack only after
// the earlier ones are gone.
BOOST_DATA_TEST_CASE(three_runs_ending_in_any_order_stay_protected, bdata::make(kCallers), caller) {
  Workspace w(caller);
  Running a = w.start("a");
  BOOST_TEST_REQUIRE(w.up("a"));
  Running b = w.start("b");
  Running c = w.start("c");
  BOOST_TEST_REQUIRE(w.up("b"));
  BOOST_TEST_REQUIRE(w.up("c"));
  w.release("a");
  RunResult ra = w.box.finish(a);
  BOOST_TEST(ra.completed(), ra.describe());
  w.release("c");
  RunResult rc = w.box.finish(c);
  BOOST_TEST(rc.completed(), rc.describe());
  w.check_protected("after two of three ended");
  w.release("b");
  RunResult rb = w.box.finish(b);
  BOOST_TEST(rb.completed(), rb.describe());
  w.check_protected("after all ended");
  for (const char* name : {"control-a", "control-b", "control-c"})
    BOOST_TEST(read_file(w.box.ws(name)).value_or("") == "control\n", name);
  w.check_no_placeholder_left();
}

// A run killed with SIGKILL leaves its record and placeholders behind. A later run
// reconciles them without removing what a still-live run relies on; once every run is
// gone, nothing is left behind.
BOOST_DATA_TEST_CASE(a_killed_run_is_reconciled_without_hurting_a_live_one, bdata::make(kCallers),
                     caller) {
  Workspace w(caller);
  Running a = w.start("a");
  BOOST_TEST_REQUIRE(w.up("a"));
  Running b = w.start("b");
  BOOST_TEST_REQUIRE(w.up("b"));
  kill(a.pid, SIGKILL);
  RunResult ra = w.box.finish(a);
  BOOST_TEST(ra.exit_code == 128 + SIGKILL, ra.describe());
  BOOST_TEST(wait_until(
      [&] {
        return processes_with_argv({"/bin/sh", "-c", waiting_attack("a")}).empty();
      },
      std::chrono::seconds(5)));
  auto c = w.box.sh("echo c > control-c");  // reconciles a's record
  BOOST_TEST_REQUIRE(c.completed(), c.describe());
  w.check_protected("after a killed run was reconciled");
  w.release("b");
  RunResult rb = w.box.finish(b);
  BOOST_TEST(rb.completed(), rb.describe());
  w.check_protected("after all ended");
  w.check_no_placeholder_left();
  // A fresh run after all that works and leaves nothing either.
  auto d = w.box.sh("test -d .env && echo placeholder-present");
  BOOST_TEST_REQUIRE(d.completed(), d.describe());
  BOOST_TEST(d.out.find("placeholder-present") != std::string::npos);
  w.check_no_placeholder_left();
}

// A git config that includes a file not there yet: each run protects the include with a
// placeholder, a directory, which git reads nothing from (it dies on a config file that is
// one). A second run beside the first, and one after a run that left it, took the
// placeholder for an odd config file and refused (red team attack 24b). Now both run, and
// neither can write the include.
BOOST_DATA_TEST_CASE(a_placeholder_for_a_missing_config_include_lets_the_next_run_go_on,
                     bdata::make(kCallers) * bdata::make({"include", "includeIf \"gitdir:/\""}),
                     caller, section) {
  Sandbox box(caller);
  box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
  box.write_file(box.ws(".git/config"),
                 "[core]\n[" + std::string(section) + "]\n\tpath = ../inc.cfg\n");
  const std::string attack =
      "echo '[core]' > inc.cfg; echo 'hooksPath = /tmp' >> inc.cfg; test -d inc.cfg && "
      "echo placeholder-seen; echo control > control-";
  RunSpec first;
  first.command = {"/bin/sh", "-c",
                   "touch up; while [ ! -e release ]; do sleep 0.05; done; " + attack +
                       "a; echo '" + std::string(kDoneMarker) + "'"};
  Running a = box.start(first);
  BOOST_TEST_REQUIRE(wait_until([&] { return exists(box.ws("up")); }, std::chrono::seconds(15)));
  const RunResult b = box.sh(attack + "b");
  BOOST_TEST(b.completed(), b.describe());
  BOOST_TEST(b.out.find("placeholder-seen") != std::string::npos, b.describe());
  box.write_file(box.ws("release"), "");
  const RunResult ra = box.finish(a);
  BOOST_TEST(ra.completed(), ra.describe());
  BOOST_TEST(read_file(box.ws("control-a")).value_or("") == "control\n");
  BOOST_TEST(read_file(box.ws("control-b")).value_or("") == "control\n");
  BOOST_TEST(!exists(box.ws("inc.cfg")), "the include or its placeholder left behind");
}

// No file of zpolicy's own state can be opened (so not flocked or edited) from inside:
// root's /run/zpolicy; for an unprivileged caller, /tmp/zpolicy-UID under a writable /tmp,
// also when the caller has an XDG_RUNTIME_DIR the sandbox sees (it is not read: red team
// A10B-2).
BOOST_DATA_TEST_CASE(zpolicy_state_is_unreachable_from_inside, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  struct Member {
    std::string state;
    std::vector<std::string> env, options;
  };
  std::vector<Member> members;
  const std::string tmp_policy = box.write_policy("tmp.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/"]
  write: ["${WORKSPACE}", "/tmp"]
)");
  const std::string xdg = box.base() + "/xdg";
  if (caller == Caller::Root) {
    members.push_back({"/run/zpolicy", {}, {}});
  } else {
    box.make_dir(xdg);
    members.push_back({"/tmp/zpolicy-65534",
                       {"XDG_RUNTIME_DIR=" + xdg},
                       {"--policy", tmp_policy, "--accept", "ZP013"}});
  }
  for (const auto& m : members) {
    // A first run makes sure the state exists.
    RunSpec plain;
    plain.options = m.options;
    plain.command = {"/bin/true"};
    plain.extra_env = m.env;
    auto first = box.run(plain);
    BOOST_TEST_REQUIRE(first.exit_code == 0, first.describe());
    BOOST_TEST_REQUIRE(exists(m.state + "/lock"), m.state);
    RunSpec spec;
    spec.options = m.options;
    spec.extra_env = m.env;
    spec.command = {"/usr/bin/python3", "-c",
                    "import fcntl, os, sys\n"
                    "d = sys.argv[1]\n"
                    "names = ['lock', 'run-x']\n"
                    "try: names += os.listdir(d); print('listed', d)\n"
                    "except OSError as e: print('list', e.strerror)\n"
                    "for n in names:\n"
                    "  p = os.path.join(d, n)\n"
                    "  try:\n"
                    "    f = os.open(p, os.O_RDONLY | os.O_CREAT); fcntl.flock(f, fcntl.LOCK_EX)\n"
                    "    print('locked', p)\n"
                    "  except OSError as e: print('open', p, e.strerror)\n"
                    "open('attempted', 'w').close()\n"
                    "import time; time.sleep(3)\n"
                    "print('" +
                        std::string(kDoneMarker) + "')\n",
                    m.state};
    // The sandbox holds whatever it managed to lock while another run starts.
    Running holder = box.start(spec);
    BOOST_TEST(wait_until([&] { return exists(box.ws("attempted")); }, std::chrono::seconds(15)));
    plain.limit = std::chrono::seconds(20);
    auto other = box.run(plain);
    RunResult r = box.finish(holder);
    BOOST_TEST(r.completed(), r.describe());
    BOOST_TEST(r.out.find("locked") == std::string::npos, m.state << "\n" << r.describe());
    BOOST_TEST(r.out.find("listed") == std::string::npos, m.state << "\n" << r.describe());
    BOOST_TEST(other.exit_code == 0, other.describe());
    BOOST_TEST(!other.hit_limit, other.describe());
    BOOST_TEST(!exists(m.state + "/run-x"), "the sandbox created a file in the state directory");
    BOOST_TEST(!exists(xdg + "/zpolicy"), "XDG_RUNTIME_DIR was read");
    unlink(box.ws("attempted").c_str());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
