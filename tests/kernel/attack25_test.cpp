#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 25 (docs/redteam-2026-12.md "Attack 25"): git's discovery from a
// directory in a writable root that is no repository at the start, where the host's git
// later runs. Each case runs as root and as uid 65534 and is judged from the host: the
// host's git.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// The host's scheduled maintenance, as systemd's timer (or cron) runs it for the caller:
// `git for-each-repo` over `maintenance.repo`, started in the home, whatever it says.
void host_scheduled_maintenance(const Sandbox& box) {
  box.host_command({"/bin/sh", "-c",
                    "cd \"$HOME\" && git for-each-repo --config=maintenance.repo maintenance run "
                    "--schedule=hourly >/dev/null 2>&1; true"});
}

// A shell step that configures the repository whose git directory is `gitdir` (by `git
// config --file`) so that the scheduled maintenance's prefetch runs `up.sh` in the
// workspace, which records `marker`: a remote whose upload-pack is that script.
std::string prefetching_remote(const Sandbox& box, const std::string& gitdir,
                               const std::string& marker) {
  const std::string cfg = "git config --file " + gitdir + "/config ";
  return hook("up.sh", marker) + " && " + cfg + "remote.origin.url " + box.base() + "/nowhere && " +
         cfg + "remote.origin.uploadpack " + box.ws("up.sh") + " && " + cfg +
         "maintenance.prefetch.enabled true && " + cfg + "maintenance.prefetch.schedule hourly";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack25)

// A25-1: the caller's `~/.gitconfig` registers `WS/old` for scheduled maintenance (`git
// maintenance register` in a repository since removed), and the workspace is no repository.
// zpolicy read no `maintenance.repo`, and no git directory at all here: on main 209e151 the
// command exited 0 having made `old` a repository whose remote's upload-pack is its own
// script, which the host's next scheduled maintenance (its prefetch) ran. Now `old` is
// protected where it is missing (a placeholder): `git init old` fails.
BOOST_DATA_TEST_CASE(a_missing_scheduled_repository_in_the_workspace_cannot_be_made,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  box.host_command({kGit, "config", "--global", "maintenance.repo", box.ws("old")});
  const RunResult r =
      box.sh("git init -q old && " + prefetching_remote(box, "old/.git", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("old/.git/config")), r.describe());
  host_scheduled_maintenance(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

// A25-1, a registered directory that exists, a plain one (a package of the workspace): git's
// discovery from it takes `pkg/.git` first. On main 209e151 the command ran `git init pkg`,
// and the scheduled maintenance ran its remote's upload-pack. Now `pkg/.git` is protected (a
// placeholder): `git init` fails.
BOOST_DATA_TEST_CASE(a_scheduled_directory_in_the_workspace_cannot_get_a_git_directory,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  box.make_dir(box.ws("pkg"));
  box.host_command({kGit, "config", "--global", "maintenance.repo", box.ws("pkg")});
  const RunResult r =
      box.sh("git init -q pkg && " + prefetching_remote(box, "pkg/.git", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  host_scheduled_maintenance(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

// A25-1, the same directory made a bare repository: git's discovery takes `pkg` itself once
// it holds a HEAD, `objects` and `refs`. On main 209e151 the command made them and a config,
// and the scheduled maintenance ran its remote's upload-pack. Now `pkg/HEAD` is protected
// too (a placeholder directory, which git never takes for a HEAD).
BOOST_DATA_TEST_CASE(a_scheduled_directory_in_the_workspace_cannot_become_a_bare_repository,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  box.make_dir(box.ws("pkg"));
  box.host_command({kGit, "config", "--global", "maintenance.repo", box.ws("pkg")});
  const RunResult r = box.sh(
      "mkdir -p pkg/objects pkg/refs/heads && echo 'ref: refs/heads/main' > pkg/HEAD && "
      "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = true\\n' > pkg/config && " +
      prefetching_remote(box, "pkg", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  host_scheduled_maintenance(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

// A25-1, a registered name in the workspace that is a file now (`git -C` fails there): the
// command could remove it and make the directory a repository. Now the file is protected:
// `rm` fails.
BOOST_DATA_TEST_CASE(a_scheduled_name_that_is_a_file_in_the_workspace_stays_one,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  box.write_file(box.ws("pkg"), "not a directory\n");
  box.host_command({kGit, "config", "--global", "maintenance.repo", box.ws("pkg")});
  const RunResult r = box.sh("rm -f pkg && git init -q pkg && " +
                             prefetching_remote(box, "pkg/.git", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  host_scheduled_maintenance(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

// A25-2: the workspace is no repository, and its top holds a file `HEAD` saying `ref:
// refs/heads/main`. R18-2 protects a writable root's HEAD so that git's discovery cannot
// take the root for a bare repository, but one that is there only waits for `objects` and
// `refs`: on main 209e151 the command made them and a `config` with `core.worktree` and
// `core.fsmonitor`, exit 0, and the host's `git status` in the workspace ran the monitor.
// Now the run is refused before the command runs (exit 2, naming the HEAD).
BOOST_DATA_TEST_CASE(an_existing_head_at_a_writable_roots_top_is_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  box.write_file(box.ws("HEAD"), "ref: refs/heads/main\n");
  const RunResult r =
      box.sh(hook("fsm.sh", pwned) +
             " && mkdir -p objects refs/heads && printf '[core]\\n\\trepositoryformatversion = "
             "0\\n\\tbare = false\\n\\tworktree = " +
             box.workspace() + "\\n\\tfsmonitor = " + box.ws("fsm.sh") + "\\n' > config || exit 1");
  BOOST_TEST(r.exit_code == 2, r.describe());
  const std::string said = "'" + box.ws("HEAD") + "' is a HEAD git would take";
  const size_t first = r.err.find(said);
  BOOST_TEST(first != std::string::npos, r.describe());
  // Once, though the default's `.git` and `**/.git` both name the top's `.git`.
  BOOST_TEST(r.err.find(said, first + 1) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("objects")), r.describe());
  box.host_command(
      {"/bin/sh", "-c", "cd \"$1\" && git status >/dev/null 2>&1; true", "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A25-3: the workspace's repository has a `.git` git rejects: its HEAD is there but empty (as a
// crash leaves it; the host's `git status` says "not a git repository"). R18-2 judged `.git` a
// git directory by its parts being there and left the top's HEAD unprotected: on main 209e151
// the command made the top a bare repository (HEAD, `objects`, `refs`, a `config` with
// `core.worktree` and `core.fsmonitor`), exit 0, and the host's `git status` ran the monitor.
// Now the top's HEAD is protected as for a missing `.git` (a placeholder): writing it fails.
BOOST_DATA_TEST_CASE(a_dot_git_with_a_head_git_rejects_leaves_the_top_no_bare_repository,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  workspace_repository(box, false);
  box.write_file(box.ws(".git/HEAD"), "");
  const RunResult r =
      box.sh(hook("fsm.sh", pwned) +
             " && echo 'ref: refs/heads/main' > HEAD && mkdir -p objects refs/heads && printf "
             "'[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = " +
             box.workspace() + "\\n\\tfsmonitor = " + box.ws("fsm.sh") + "\\n' > config || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  box.host_command(
      {"/bin/sh", "-c", "cd \"$1\" && git status >/dev/null 2>&1; true", "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A25-4: the caller's `~/.gitconfig` includes a file of the workspace (a team's shared
// config kept in a project), and the workspace holds no repository, nor lies in one: zpolicy
// read the caller's global config only along with a git directory, so nothing was read. On
// main 209e151 the command wrote `core.fsmonitor` into the included file, exit 0, and the
// host's `git status` in another repository ran it. Now the global files and what they
// include are read whatever else is: the include is protected, the write fails.
BOOST_DATA_TEST_CASE(a_global_include_in_a_workspace_without_repositories_is_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), other = box.base() + "/other";
  box.write_file(box.ws("team.gitconfig"), "");
  box.write_file(box.home() + "/.gitconfig",
                 "[include]\n\tpath = " + box.ws("team.gitconfig") + "\n");
  box.make_dir(other);
  box.host_command({kGit, "init", "-q", other});
  const RunResult r =
      box.sh(hook("fsm.sh", pwned) + " && printf '[core]\\n\\tfsmonitor = " + box.ws("fsm.sh") +
             "\\n' >> team.gitconfig || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  box.host_command({"/bin/sh", "-c", "cd \"$1\" && git status >/dev/null 2>&1; true", "sh", other});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A25-5: the caller's `~/.gitconfig` says `core.hooksPath = WS/hooks` (absolute), and the
// workspace holds no repository, nor lies in one: what the global config named was taken only
// with a git directory's tops. On main 209e151 the command wrote `hooks/pre-commit`, exit 0,
// and the host's `git commit` in another repository ran it. Now `hooks` is protected.
BOOST_DATA_TEST_CASE(a_global_hooks_path_in_a_workspace_without_repositories_is_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), other = box.base() + "/other";
  box.write_file(box.home() + "/.gitconfig", "[core]\n\thooksPath = " + box.ws("hooks") + "\n");
  box.make_dir(other);
  box.host_command({kGit, "init", "-q", other});
  const RunResult r = box.sh("mkdir -p hooks && " + hook("hooks/pre-commit", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("hooks/pre-commit")), r.describe());
  host_commit(box, other);
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
