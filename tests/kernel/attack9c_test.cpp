#include <string>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "notify_share_check.hpp"
#include "sandbox_fixture.hpp"

// Round 9c of the red-team pass (docs/redteam-2026-12.md "Round 9c: attacks on round 9's
// fixes"): the members of round 9's classes its fixes missed.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack9c)

// R9c-G2: git takes a directory for a repository when `objects` and `refs` are reached
// through symlinks (access(2) follows them), or when a `commondir` file names where they
// are (a linked worktree's git directory). R9-G1's walk wanted two real directories, so
// such a bare repository's config and hooks stayed writable; host git started there obeys
// them (`core.pager` on `git log`).
BOOST_DATA_TEST_CASE(a_bare_repository_reached_through_links_stays_read_only,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("fixtures"));
  box.host_command({"/usr/bin/git", "init", "-q", "--bare", box.ws("fixtures/t.git")});
  box.host_command({"/bin/mv", box.ws("fixtures/t.git/objects"), box.ws("fixtures/store")});
  box.host_command({"/bin/ln", "-s", "../store", box.ws("fixtures/t.git/objects")});
  box.host_command({"/usr/bin/git", "init", "-q", "--bare", box.ws("fixtures/common.git")});
  box.make_dir(box.ws("fixtures/linked"));
  box.write_file(box.ws("fixtures/linked/HEAD"), "ref: refs/heads/main\n", 0644);
  box.write_file(box.ws("fixtures/linked/commondir"), "../common.git\n", 0644);
  const std::string bare = snapshot(box.ws("fixtures/t.git"));
  const std::string linked = snapshot(box.ws("fixtures/linked"));
  const RunResult r = box.sh(
      "echo '[core] pager = touch PWNED' >> fixtures/t.git/config; "
      "echo 'touch PWNED' > fixtures/t.git/hooks/pre-receive; "
      "echo ../evil.git > fixtures/linked/commondir; "
      "mkdir fixtures/other && echo ok > fixtures/other/x");
  BOOST_CHECK_MESSAGE(r.completed(), r.describe());
  BOOST_CHECK_EQUAL(snapshot(box.ws("fixtures/t.git")), bare);
  BOOST_CHECK_EQUAL(snapshot(box.ws("fixtures/linked")), linked);
  BOOST_CHECK_EQUAL(read_file(box.ws("fixtures/other/x")).value_or(""), "ok\n");
}

// R9c-L3: fanotify groups are charged to the caller like inotify instances; a command that
// opened them until refused took all 128 of its caller's. It gets a quarter of each now
// (~1 s per caller).
BOOST_DATA_TEST_CASE(a_sandbox_gets_only_its_share_of_inotify_and_fanotify,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.command = {"/usr/bin/python3", "-c", kCountNotifyHandles};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  check_notify_share(box);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
