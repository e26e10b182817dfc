#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 24d (docs/redteam-2026-12.md "Attack 24d"): what landed last on main
// (fix24, the lead's owner rule and `symlinks_in`, attack 24c's A24C-1 fix), attacked. Each
// case runs as root and as uid 65534 and is judged from the host: the host's file, the
// host's git.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack24d)

namespace {

// Who git finds through a `.git` that is a symlink to a `.git` file elsewhere.
enum class LinkedGitFile {
  Submodule,  // the populated submodule `lib` of the repository above the workspace `app`
  Remote,     // the repository the workspace's remote `origin` names
};
std::ostream& operator<<(std::ostream& os, LinkedGitFile s) {
  switch (s) {
    case LinkedGitFile::Submodule:
      return os << "a populated submodule of the repository above";
    case LinkedGitFile::Remote:
      return os << "a remote's repository";
  }
  return os;
}

}  // namespace

// A24D-1: a `.git` that is a symlink to a `.git` file (`lib/.git -> ../../gf/lib`), which
// names its git directory relative to where git looked `.git` up (`gitdir:
// ../../mods/lib.git`: `BASE/mods/lib.git`, from `WS/lib`). zpolicy took the name against
// the link target's directory (`BASE/gf`), found nothing there, and left the git directory
// git enters unread: on main 87282a7 the command exited 0 having rewritten, through the
// host's hard link in the workspace, the submodule's `config` (the host's `git status` in the
// repository above ran its `core.fsmonitor`) or the remote's `post-receive` hook (the host's
// `git push origin` ran it). Each is protected now: the write fails, nothing of the
// command's runs.
BOOST_DATA_TEST_CASE(a_dot_git_linked_to_a_git_file_names_what_git_finds,
                     bdata::make(kCallers) *
                         bdata::make({LinkedGitFile::Submodule, LinkedGitFile::Remote}),
                     caller, layout) {
  Sandbox box(caller);
  const std::string base = box.base(), pwned = box.ws("pwned");
  box.make_dir(base + "/mods");
  box.make_dir(base + "/gf");
  std::string workspace, watched, script, host_git;
  switch (layout) {
    case LinkedGitFile::Submodule: {
      const std::string lib = box.ws("lib"), gitdir = base + "/mods/lib.git";
      populated_submodule(box);
      box.host_command({"/bin/mv", box.ws(".git/modules/lib"), gitdir});
      box.host_command({kGit, "config", "-f", gitdir + "/config", "--unset", "core.worktree"});
      box.write_file(base + "/gf/lib", "gitdir: ../../mods/lib.git\n");
      box.host_command({"/bin/rm", lib + "/.git"});
      box.host_command({"/bin/ln", "-s", "../../gf/lib", lib + "/.git"});
      workspace = box.ws("app");
      box.make_dir(workspace);
      watched = gitdir + "/config";
      box.host_command({"/bin/ln", watched, workspace + "/cfg"});
      script = "printf '[core]\\n\\tfsmonitor = echo PWNED > " + pwned + "\\n' >> cfg";
      host_git = "git status >/dev/null 2>&1";
      break;
    }
    case LinkedGitFile::Remote: {
      const std::string repo = base + "/srv/repo", gitdir = base + "/mods/repo.git";
      box.make_dir(base + "/srv");
      box.host_command({kGit, "init", "-q", "--separate-git-dir", gitdir, repo});
      commit_empty(box, repo, "r");
      box.host_command({"/bin/rm", repo + "/.git"});
      box.write_file(base + "/gf/repo", "gitdir: ../../mods/repo.git\n");
      box.host_command({"/bin/ln", "-s", "../../gf/repo", repo + "/.git"});
      watched = gitdir + "/hooks/post-receive";
      box.write_file(watched, "#!/bin/sh\ntrue\n", 0755);
      workspace = box.workspace();
      workspace_repository(box, false);
      git_config_set(box, workspace, "remote.origin.url", repo);
      box.host_command({"/bin/ln", watched, workspace + "/pr"});
      script = "printf '#!/bin/sh\\necho PWNED > " + pwned + "\\n' > pr";
      host_git = "git push -q origin HEAD:refs/heads/other >/dev/null 2>&1";
      break;
    }
  }
  const std::string before = read_file(watched).value_or("<none>");
  RunSpec spec;
  spec.options = {"--workspace", workspace};
  spec.cwd = workspace;
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(read_file(watched).value_or("<none>") == before, r.describe());
  box.host_command({"/bin/sh", "-c", "cd \"$1\" && " + host_git + "; true", "sh", workspace});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A24D-3: the workspace's remote `origin = BASE/srv/lk`, the host's `srv/lk -> BASE/data/plain`
// (a plain directory) beside the bare repository `srv/lk.git`, which git's `enter_repo` finds
// from the URL's spelling (`lk/.git`, `lk`, `lk.git/.git`, `lk.git`). zpolicy tried the names
// from the canonical `data/plain`, found no repository, and on main 87282a7 the command
// exited 0 having rewritten `srv/lk.git/hooks/post-receive` through the host's hard link
// `WS/pr`, which the host's `git push origin` ran. Now it is protected: the write fails.
BOOST_DATA_TEST_CASE(a_remote_url_naming_a_symlink_is_tried_as_git_spells_it, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string base = box.base(), pwned = box.ws("pwned");
  const std::string link = base + "/srv/lk", repo = base + "/srv/lk.git";
  box.make_dir(base + "/srv");
  box.make_dir(base + "/data/plain");
  box.host_command({kGit, "init", "-q", "--bare", repo});
  box.host_command({"/bin/ln", "-s", base + "/data/plain", link});
  const std::string watched = repo + "/hooks/post-receive";
  box.write_file(watched, "#!/bin/sh\ntrue\n", 0755);
  workspace_repository(box, false);
  git_config_set(box, box.workspace(), "remote.origin.url", link);
  box.host_command({"/bin/ln", watched, box.ws("pr")});
  const std::string before = read_file(watched).value_or("<none>");
  const RunResult r = box.sh("printf '#!/bin/sh\\necho PWNED > " + pwned + "\\n' > pr || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(read_file(watched).value_or("<none>") == before, r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git push -q origin HEAD:refs/heads/other >/dev/null 2>&1; true",
                    "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A24D-4: the caller's `~/.gitconfig` is a link into a dotfiles directory (as stow and other
// dotfiles managers make it) saying `include.path = .gitconfig.local`, which git reads next
// to the name it opened, `~/.gitconfig.local`; that file says `core.hooksPath = WS/hooks`.
// zpolicy took the include against the link target's directory (`~/dotfiles`), read nothing
// there, and on main 87282a7 the command exited 0 having made `WS/hooks/pre-commit`, which
// the host's `git commit` ran. Now `WS/hooks` is protected: the write fails.
BOOST_DATA_TEST_CASE(a_relative_include_of_a_linked_config_is_read_next_to_the_link,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), home = box.home();
  box.make_dir(home + "/dotfiles");
  box.write_file(home + "/dotfiles/gitconfig", "[include]\n\tpath = .gitconfig.local\n");
  box.host_command({"/bin/ln", "-s", "dotfiles/gitconfig", home + "/.gitconfig"});
  box.write_file(home + "/.gitconfig.local", "[core]\n\thooksPath = " + box.ws("hooks") + "\n");
  workspace_repository(box, false);
  const RunResult r = box.sh("mkdir -p hooks && " + hook("hooks/pre-commit", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("hooks/pre-commit")), r.describe());
  host_commit(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

// A24D-2: the populated submodule `lib` of the repository above the workspace `app` has its
// git directory in the workspace, `app/x/.git` (a repository of its own there too, whose
// worktree is `app/x`), and that git directory's config says `core.fsmonitor =
// ../app/fsm.sh`, relative to where git runs it. `**/.git` found it first and read it with
// `app/x` as its worktree (`app/app/fsm.sh` protected); the submodule's worktree `lib`, found
// later, did not read it again: on main 87282a7 the command exited 0 having written
// `app/fsm.sh`, which the host's `git status` in the repository above ran in `lib`. Read
// again with `lib`, `app/fsm.sh` is protected: the write fails, nothing of the command's runs.
BOOST_DATA_TEST_CASE(a_git_directory_read_before_its_submodule_was_found_is_read_again,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string base = box.base(), pwned = box.ws("pwned"), app = box.ws("app");
  const std::string lib = box.ws("lib"), gitdir = app + "/x/.git";
  populated_submodule(box);
  box.make_dir(app);
  box.make_dir(app + "/x");
  box.host_command({"/bin/mv", box.ws(".git/modules/lib"), gitdir});
  box.host_command({kGit, "config", "-f", gitdir + "/config", "--unset", "core.worktree"});
  box.host_command({kGit, "config", "-f", gitdir + "/config", "core.fsmonitor", "../app/fsm.sh"});
  box.write_file(lib + "/.git", "gitdir: ../app/x/.git\n");
  const std::string watched = app + "/fsm.sh";
  RunSpec spec;
  spec.options = {"--workspace", app};
  spec.cwd = app;
  spec.command = {"/bin/sh", "-c",
                  "printf '#!/bin/sh\\necho PWNED > " + pwned +
                      "\\n' > fsm.sh && chmod +x fsm.sh && echo '" + std::string(kDoneMarker) +
                      "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(watched), r.describe());
  box.host_command(
      {"/bin/sh", "-c", "cd \"$1\" && git status >/dev/null 2>&1; true", "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
