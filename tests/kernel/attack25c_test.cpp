#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 25c (docs/redteam-2026-12.md "Attack 25c"): what attack 25 and review 25
// landed in host resolution, attacked again. Each case runs as root and as uid 65534 and is
// judged from the host: the host's git.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack25c)

// A25C-1: the caller's `~/.gitconfig` registers `WS/pkg` for scheduled maintenance, a
// repository whose `.git/HEAD` is empty, as a crash leaves it. git's discovery from `pkg`
// rejects that `.git` (validate_headref) and takes `pkg` itself for a bare repository once
// it holds a HEAD, `objects` and `refs`. On main 32a03e1 zpolicy took `pkg/.git` for a git
// directory by its parts and stopped there: the command made `pkg` a bare repository whose
// remote's upload-pack is its script, exit 0, and the host's scheduled maintenance ran it.
// Now the discovery goes on past that `.git`: `pkg/HEAD` is protected and the write fails.
BOOST_DATA_TEST_CASE(a_scheduled_repository_whose_head_git_rejects_cannot_become_bare,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  box.host_command({kGit, "init", "-q", box.ws("pkg")});
  box.write_file(box.ws("pkg/.git/HEAD"), "");
  box.host_command({kGit, "config", "--global", "maintenance.repo", box.ws("pkg")});
  const std::string cfg = "git config --file pkg/config ";
  const RunResult r = box.sh(
      "mkdir -p pkg/objects pkg/refs/heads && echo 'ref: refs/heads/main' > pkg/HEAD && " +
      hook("up.sh", pwned) + " && " + cfg + "core.bare true && " + cfg + "remote.origin.url " +
      box.base() + "/nowhere && " + cfg + "remote.origin.uploadpack " + box.ws("up.sh") + " && " +
      cfg + "maintenance.prefetch.enabled true && " + cfg +
      "maintenance.prefetch.schedule hourly || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$HOME\" && git for-each-repo --config=maintenance.repo maintenance run "
                    "--schedule=hourly >/dev/null 2>&1; true"});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A25C-2: the caller's shell has `GIT_DIR=WS/meta.git` (a git directory kept apart from its
// worktree, as dotfile managers do), which does not exist yet. The host's git in that shell
// uses it from any directory. On main 83b3e6f the command made `meta.git` a git directory
// with `core.worktree` and `core.fsmonitor`, exit 0, and the host's `git status` in that
// shell ran the monitor. Now `$GIT_DIR` is protected wherever it lies: the write fails.
BOOST_DATA_TEST_CASE(a_missing_git_dir_of_the_callers_environment_cannot_be_made,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), meta = box.ws("meta.git");
  RunSpec spec;
  spec.extra_env = {"GIT_DIR=" + meta};
  const std::string cfg = "git config --file meta.git/config ";
  const RunResult r = run_script(
      box, spec,
      hook("fsm.sh", pwned) +
          " && mkdir -p meta.git/objects meta.git/refs/heads && echo 'ref: refs/heads/main' > "
          "meta.git/HEAD && " +
          cfg + "core.repositoryformatversion 0 && " + cfg + "core.worktree .. && " + cfg +
          "core.fsmonitor " + box.ws("fsm.sh") + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(!exists(meta + "/config"), r.describe());
  box.host_command({"/bin/sh", "-c", "cd \"$1\" && GIT_DIR=\"$2\" git status >/dev/null 2>&1; true",
                    "sh", box.workspace(), meta});
  BOOST_TEST(!exists(pwned), r.describe());
}

// The control: a run started from a git hook, whose environment holds the relative
// `GIT_DIR=.git` git gives its hooks, runs as any other in that repository.
BOOST_DATA_TEST_CASE(a_run_from_a_hook_with_a_relative_git_dir_runs, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.host_command({kGit, "init", "-q", box.workspace()});
  RunSpec spec;
  spec.extra_env = {"GIT_DIR=.git"};
  const RunResult r = run_script(box, spec, "echo built > out");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("") == "built\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
