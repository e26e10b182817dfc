#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "deny_root_runs.hpp"
#include "sandbox_fixture.hpp"

// Red team round 9e (docs/redteam-2026-12.md): the watch of a missing deny root's way
// (HostLookups::entries_on_the_way) and the watch placed before the bind descriptors.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// How the host changes the way to the deny root `ro/way/aws` (way -> a, missing) before
// the watch is in place.
enum class Change { Repointed, MadeADirectory };

const char* shell_change(Change c) {
  return c == Change::Repointed ? "ln -sfn b way" : "rm way && mkdir way";
}

// A9E-1: the watch covers the way the run (or `zpolicy plan`) computed. Changed before the
// watch is in place (a link on it re-pointed, or replaced by a directory), the deny root
// lies on names nothing watches, and the check after the watch looked only at the old
// way's missing name and the deny root itself, both still missing: the host creating the
// new way's target during the run showed it to the sandbox. The executor's window is the
// whole time between the plan and the run; `zpolicy run`'s is held open by strace between
// missing_deny_names() and the first inotify_add_watch.
void way_changed_before_the_watch(Caller caller, bool executor, Change change) {
  using namespace std::chrono_literals;
  Sandbox box(caller);
  const std::string ro = box.base() + "/ro", deny = ro + "/way/aws";
  box.make_dir(ro);
  BOOST_REQUIRE(symlink("a", (ro + "/way").c_str()) == 0);
  RunSpec spec;
  const std::string command =
      "touch started; i=0; while [ ! -e " + box.base() + "/go ] && [ $i -lt 200 ]; do "
      "sleep 0.02; i=$((i+1)); done; sleep 0.5; cat " + deny + "/credentials; exit 0";
  run_through(box, executor, deny_policy(box, deny), {"/bin/sh", "-c", command}, spec);
  if (executor) {
    const std::string way = ro + "/way";
    BOOST_REQUIRE(unlink(way.c_str()) == 0);
    BOOST_REQUIRE((change == Change::Repointed ? symlink("b", way.c_str())
                                               : mkdir(way.c_str(), 0755)) == 0);
  } else {
    BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
    const std::string nr = std::to_string(SYS_inotify_add_watch);
    spec.root_prefix = {"/bin/sh", "-c",
                        std::string(kShellOwnProcesses) + "( cd " + ro + " && i=0; until held " +
                            nr +
                            " '' || "
                            "[ $i -ge 500 ]; do sleep 0.01; i=$((i+1)); done; " +
                            shell_change(change) + " ) >/dev/null 2>&1 & exec \"$@\"",
                        "sh"};
    const auto strace = strace_holding("inotify_add_watch", 300000);
    spec.root_prefix.insert(spec.root_prefix.end(), strace.begin(), strace.end());
  }
  Running running = box.start(spec);
  // Refused, zpolicy is gone (a zombie until finish()) and the command never starts.
  auto gone = [&] {
    std::ifstream stat("/proc/" + std::to_string(running.pid) + "/stat");
    const std::string line((std::istreambuf_iterator<char>(stat)), {});
    return line.find(") Z") != std::string::npos;
  };
  if (wait_until([&] { return exists(box.ws("started")) || gone(); }, 10s) &&
      exists(box.ws("started"))) {
    const std::string target = ro + (change == Change::Repointed ? "/b" : "/way");
    mkdir(target.c_str(), 0755);
    BOOST_REQUIRE(mkdir((target + "/aws").c_str(), 0755) == 0);
    std::ofstream(target + "/aws/credentials") << "AKIA-EXAMPLE\n";
    std::ofstream(box.base() + "/go").put('\n');
  }
  const RunResult r = box.finish(running);
  BOOST_TEST(r.out.find("AKIA") == std::string::npos, "the sandbox read it: " << r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(r.err.find("the way to deny root '" + deny + "' changed on the host") !=
                 std::string::npos,
             r.describe());
}

// dd52633 places the watch before the bind descriptors are opened. strace holds the first
// inotify_add_watch of the run for 0.3 s, while the host renames the workspace's .git away
// and makes a new one: the descriptor opened after the watch is then not the verified
// object, and the run must refuse before the command starts. In the order before dd52633
// the descriptor held the old .git, writable under its new name, and the watch placed
// after the rename saw nothing.
void protected_name_renamed_while_watched(Caller caller, bool executor) {
  Sandbox box(caller);
  box.make_dir(box.ws(".git"));
  const std::string ran = box.ws("ran");
  BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
  const std::string nr = std::to_string(SYS_inotify_add_watch);
  RunSpec spec;
  run_through(box, executor, deny_policy(box, box.base() + "/absent"),
              {"/bin/sh", "-c", "touch " + ran + "; echo owned > " + box.ws("moved/config")},
              spec);
  spec.root_prefix = {"/bin/sh", "-c",
                      std::string(kShellOwnProcesses) + "( cd " + box.workspace() +
                          " && i=0; until held " + nr +
                          " '' || [ $i -ge 500 ]; do sleep 0.01; i=$((i+1)); done; "
                          "mv .git moved && mkdir .git ) >/dev/null 2>&1 & exec \"$@\"",
                      "sh"};
  const auto strace = strace_holding("inotify_add_watch", 300000);
  spec.root_prefix.insert(spec.root_prefix.end(), strace.begin(), strace.end());
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(!exists(ran), "the command ran: " << r.describe());
  BOOST_TEST(!exists(box.ws("moved/config")), "wrote the protected .git: " << r.describe());
  BOOST_TEST_MESSAGE(r.describe());
}

// A9E-1 left the deny roots whose way holds nothing missing to watch for its creation:
// `ro/file/aws` lies below a regular file, so the plan watches `file` (and the names above
// it) for its replacement only, and no "created" watch names the deny root. The host
// makes `file` a directory holding `aws/credentials` between the plan and the run, before
// any watch: the executor looked again only at the deny roots of "created" watches and at
// those still missing, so it started the sandbox, which read the credentials.
void deny_root_below_a_file_made_real_since_the_plan(Caller caller) {
  Sandbox box(caller);
  const std::string ro = box.base() + "/ro", deny = ro + "/file/aws";
  box.make_dir(ro);
  std::ofstream(ro + "/file") << "a file, not a directory\n";
  RunSpec spec;
  run_through(box, true, deny_policy(box, deny), {"/bin/sh", "-c", "cat " + deny + "/credentials"},
              spec);
  BOOST_REQUIRE(unlink((ro + "/file").c_str()) == 0);
  BOOST_REQUIRE(mkdir((ro + "/file").c_str(), 0755) == 0);
  BOOST_REQUIRE(mkdir(deny.c_str(), 0755) == 0);
  std::ofstream(deny + "/credentials") << "AKIA-EXAMPLE\n";
  const RunResult r = box.run(spec);
  BOOST_TEST(r.out.find("AKIA") == std::string::npos, "the sandbox read it: " << r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(r.err.find("deny root '" + deny + "' was created on the host") != std::string::npos,
             r.describe());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack9e)

BOOST_DATA_TEST_CASE(a_link_on_the_way_repointed_before_the_watch_is_refused,
                     bdata::make(kCallers), caller) {
  way_changed_before_the_watch(caller, false, Change::Repointed);
}

BOOST_DATA_TEST_CASE(a_link_on_the_way_made_a_directory_before_the_watch_is_refused,
                     bdata::make(kCallers), caller) {
  way_changed_before_the_watch(caller, false, Change::MadeADirectory);
}

BOOST_DATA_TEST_CASE(an_executor_refuses_a_link_on_the_way_repointed_since_the_plan,
                     bdata::make(kCallers), caller) {
  way_changed_before_the_watch(caller, true, Change::Repointed);
}

BOOST_DATA_TEST_CASE(an_executor_refuses_a_link_on_the_way_made_a_directory_since_the_plan,
                     bdata::make(kCallers), caller) {
  way_changed_before_the_watch(caller, true, Change::MadeADirectory);
}

BOOST_DATA_TEST_CASE(a_protected_name_renamed_while_the_watch_is_placed_is_refused,
                     bdata::make(kCallers), caller) {
  protected_name_renamed_while_watched(caller, false);
}

BOOST_DATA_TEST_CASE(an_executor_refuses_a_protected_name_renamed_while_its_watch_is_placed,
                     bdata::make(kCallers), caller) {
  protected_name_renamed_while_watched(caller, true);
}

BOOST_DATA_TEST_CASE(an_executor_refuses_a_deny_root_below_a_file_made_real_since_the_plan,
                     bdata::make(kCallers), caller) {
  deny_root_below_a_file_made_real_since_the_plan(caller);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
