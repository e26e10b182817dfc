#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <fstream>
#include <string>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Round 8 of the red-team pass (docs/redteam-2026-12.md "Round 8"): names other users
// take first, system directories as workspaces, concurrent runs' placeholders, and the
// caller's standard streams.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// A RunSpec::root_prefix: a private mount namespace with a fresh /tmp, in which `setup`
// runs as root before zpolicy starts as the caller; zpolicy's status is kept, and
// `after` runs once it has exited (its output is the harness's stdout).
std::vector<std::string> in_fresh_tmp(const std::string& setup, const std::string& after) {
  return {"/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
          "mount -t tmpfs -o mode=1777 tmpfs /tmp && " + setup + " && \"$@\"; rc=$?; " + after +
              "; exit $rc",
          "sh"};
}

std::string as_uid_4242(const std::string& cmd) {
  return "/usr/bin/setpriv --reuid=4242 --regid=4242 --clear-groups " + cmd;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam8)

// R8-L1 (R7-L1): another local user takes the name of the caller's state directory first
// (/tmp/zpolicy-UID, used without XDG_RUNTIME_DIR: cron jobs, CI accounts, nobody), and
// the decoys of the name a run falls back to. Every run of the caller refused (exit 125)
// until root removed the directory. Root's state lives in /run/zpolicy, which only root
// can create: for root this is a control.
BOOST_DATA_TEST_CASE(a_state_directory_name_taken_by_another_user_stops_no_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string uid = std::to_string(uid_of(caller));
  const std::string fixed = "/tmp/zpolicy-" + uid;
  RunSpec spec;
  spec.root_prefix = in_fresh_tmp(
      as_uid_4242("install -d -m 0700 " + fixed) + " && " +
          as_uid_4242("install -d -m 0700 " + fixed + "-AAAAAA") + " && " +
          "install -d -o " + uid + " -m 0777 " + fixed + "-BBBBBB && ln -s " + box.base() + " " +
          fixed + "-CCCCCC && \"$@\" && \"$@\" && \"$@\"",
      "stat -c '%n %u %a' /tmp/* | sort");
  spec.command = {"/bin/sh", "-c", "echo ran >> ran"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 0, r.describe());
  BOOST_CHECK_EQUAL(read_file(box.ws("ran")).value_or(""), "ran\nran\nran\nran\n");
  // The other user's directories are left as they were, and no run used a decoy.
  BOOST_CHECK_MESSAGE(r.out.find(fixed + " 4242 700\n") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find(fixed + "-AAAAAA 4242 700\n") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find(fixed + "-BBBBBB " + uid + " 777\n") != std::string::npos, r.out);
  BOOST_CHECK(!exists(box.base() + "/lock"));
  if (caller == Caller::Nobody)
    BOOST_CHECK_MESSAGE(r.out.find(" " + uid + " 700\n") != std::string::npos,
                        "no private state directory of the caller's: " << r.out);
}

// R8-P1: concurrent runs in one fresh workspace, ending together, while a run of the same
// caller elsewhere outlives them (another job of the same CI account, a second terminal).
// None of them is alone on the host at its end, so each left its record and placeholders
// for later, and the run that ended last and alone removed only its own: after every run
// had exited 0, .env, .git, node_modules ... stayed in the workspace (also when two runs
// end within microseconds of each other: the one that got the lock read the other's record
// as live). The workspace must be exactly as before once the last run is gone.
BOOST_DATA_TEST_CASE(concurrent_runs_leave_the_workspace_as_it_was, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  Sandbox elsewhere(caller);
  box.write_file(box.ws("README"), "x\n");
  const std::string before = snapshot(box.workspace());
  const std::string before_elsewhere = snapshot(elsewhere.workspace());
  auto wait_for = [](const std::string& file) {
    return std::vector<std::string>{
        "/bin/sh", "-c", "i=0; while [ ! -e " + file + " ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i+1)); done"};
  };
  const std::string go = box.base() + "/go", end = elsewhere.base() + "/end";
  RunSpec hold;
  hold.command = wait_for(end);
  Running outliving = elsewhere.start(hold);
  BOOST_REQUIRE(wait_until([&] { return exists(elsewhere.ws(".env")); }, std::chrono::seconds(10)));
  std::vector<Running> runs;
  RunSpec together;
  together.command = wait_for(go);
  for (int i = 0; i < 4; ++i) runs.push_back(box.start(together));
  BOOST_REQUIRE(wait_until([&] { return exists(box.ws(".env")); }, std::chrono::seconds(10)));
  std::ofstream(go).put('\n');
  for (auto& r : runs) {
    const RunResult res = box.finish(r);
    BOOST_CHECK_MESSAGE(res.exit_code == 0, res.describe());
  }
  std::ofstream(end).put('\n');
  const RunResult last = elsewhere.finish(outliving);
  BOOST_CHECK_MESSAGE(last.exit_code == 0, last.describe());
  BOOST_CHECK_EQUAL(snapshot(box.workspace()), before);
  BOOST_CHECK_EQUAL(snapshot(elsewhere.workspace()), before_elsewhere);
}

// R8-W1: ZP013 knew /etc, /usr, /var/lib ... by name only, and not /opt (installed
// software), nor /srv, /mnt, /media themselves, nor a system directory under another name
// through a bind mount, nor one bound below the workspace (bwrap's bind is recursive).
// Each ran with the directory writable. Checked in a mount namespace of the test's own,
// with tmpfs over /opt, /srv, /mnt and /media, so nothing of the host's is ever bound.
BOOST_DATA_TEST_CASE(a_system_directory_as_a_workspace_is_refused_by_every_name,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string uid = std::to_string(uid_of(caller));
  const std::string alias = box.base() + "/alias";
  box.make_dir(alias);
  box.make_dir(box.ws("tool"));
  RunSpec spec;
  spec.root_prefix = {
      "/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
      "for d in /opt /srv /mnt /media; do mount -t tmpfs -o mode=0755 tmpfs $d || exit 99; done; "
      "install -d -o " + uid + " /opt/tool /srv/app /mnt/data /media/usb && "
      "mount --bind /opt/tool " + alias + " && mount --bind /opt/tool " + box.ws("tool") + " && "
      "for w in /opt /opt/tool /srv /mnt /media " + alias + " " + box.workspace() +
          " /srv/app /mnt/data /media/usb; do cd $w || exit 98; out=$(\"$@\" 2>&1); rc=$?; "
          "case \"$out\" in *ZP013*) echo ZP013;; esac; echo \"$w $rc\"; done",
      "sh"};
  spec.command = {"/bin/true"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 0, r.describe());
  for (const std::string& w : std::vector<std::string>{"/opt", "/opt/tool", "/srv", "/mnt", "/media", alias, box.workspace()})
    BOOST_CHECK_MESSAGE(r.out.find("ZP013\n" + w + " 3\n") != std::string::npos,
                        w << " not refused by ZP013: " << r.out);
  for (const std::string w : {"/srv/app", "/mnt/data", "/media/usb"})
    BOOST_CHECK_MESSAGE(r.out.find("\n" + w + " 0\n") != std::string::npos,
                        w << " refused: " << r.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
