#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 24e (docs/redteam-2026-12.md "Attack 24e"): attack 24d's fixes (git's own
// spelling of the names it resolves relative values against), attacked. Each case runs as
// root and as uid 65534 and is judged from the host: the host's git.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack24e)

// A24E-1: the workspace's remote `origin` is the non-bare repository `BASE/srv/repo`, whose
// config says `core.hooksPath = ../../../ws/hooks`. git's receive-pack enters the git
// directory and runs the push hooks there (githooks(5): "always executed in $GIT_DIR"), so
// git takes the value against `srv/repo/.git`: `BASE/ws/hooks`, the workspace's `hooks`.
// zpolicy took it against the worktree top `srv/repo` only (`BASE/../ws/hooks`), and on main
// 68b2003 the command exited 0 having made `hooks/post-receive`, which the host's `git push
// origin` ran. Now `hooks` is protected: the write fails.
BOOST_DATA_TEST_CASE(a_remote_s_relative_hooks_path_is_taken_where_push_hooks_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string base = box.base(), pwned = box.ws("pwned");
  const std::string repo = base + "/srv/repo";
  box.make_dir(base + "/srv");
  box.host_command({kGit, "init", "-q", repo});
  commit_empty(box, repo, "r");
  // From `repo/.git` up to `BASE`, then down to the workspace.
  const std::string ws = box.workspace();
  const std::string rel = "../../../" + ws.substr(base.size() + 1) + "/hooks";
  git_config_set(box, repo, "core.hooksPath", rel);
  workspace_repository(box, false);
  git_config_set(box, ws, "remote.origin.url", repo);
  const RunResult r =
      box.sh("mkdir -p hooks && " + hook("hooks/post-receive", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("hooks/post-receive")), r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git push -q origin HEAD:refs/heads/other >/dev/null 2>&1; true",
                    "sh", ws});
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
