#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 24b (docs/redteam-2026-12.md "Attack 24b"): what session 24 landed (the
// symlinks in a git directory, attack 24's fixes, git staying where it was started, the
// link-free walks). A24B-1: a file of a git directory zpolicy reads outside every writable
// root (a remote's hook or `.git` file, the common directory's hook of a repository above
// that is a linked worktree, a linked worktree's `.git` file outside) hard-linked into the
// workspace was left writable: A24-7 searched the paths protected outside, and these were not
// among them. Each case runs as root and as uid 65534 and is judged from the host: the
// command's output, the host's file, the host's git.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack24b)

namespace {

// Which file outside the workspace, read by the host's git, has a hard link in it.
enum class LinkedOutside {
  RemoteHook,       // a remote's `BASE/srv.git/hooks/post-receive` at `WS/tools/post-receive`
  RemoteGitFile,    // a remote's `BASE/srv/repo/.git` (naming `BASE/gd.git`) at `WS/gitfile`
  CommonHook,       // `BASE/main/.git/hooks/pre-commit`, the common directory of the
                    // repository above the workspace `app`, a linked worktree, at
                    // `app/scripts/pre-commit`
  WorktreeGitFile,  // `BASE/wt/.git`, a linked worktree of the workspace's repository, at
                    // `WS/wtgit`
};
std::ostream& operator<<(std::ostream& os, LinkedOutside l) {
  switch (l) {
    case LinkedOutside::RemoteHook:
      return os << "a remote's hook";
    case LinkedOutside::RemoteGitFile:
      return os << "a remote's .git file";
    case LinkedOutside::CommonHook:
      return os << "the common directory's hook of the repository above";
    case LinkedOutside::WorktreeGitFile:
      return os << "the .git file of a linked worktree outside";
  }
  return os;
}

// A shell step that makes `dir` a git directory with a pre-commit and a post-receive hook
// recording `marker`, one git takes for a worktree's too.
std::string evil_git_directory(const std::string& dir, const std::string& marker) {
  return "git init -q --bare " + dir + " && git --git-dir=" + dir + " config core.bare false && " +
         hook(dir + "/hooks/pre-commit", marker) + " && " +
         hook(dir + "/hooks/post-receive", marker);
}

}  // namespace

// A24B-1: on main 70a8508 each command below exited 0 having rewritten the file outside the
// workspace through its other name, and the host's `git push origin` (a remote's hook, its
// `.git` file now naming `WS/evil`) or `git commit` (in the repository above, in the linked
// worktree now using `WS/evil`) ran the command's hook. The other name is read-only now: the
// write fails, the file is unchanged, the host's git runs nothing of the command's.
BOOST_DATA_TEST_CASE(a_hard_link_of_a_file_of_a_git_directory_read_outside_is_protected,
                     bdata::make(kCallers) *
                         bdata::make({LinkedOutside::RemoteHook, LinkedOutside::RemoteGitFile,
                                      LinkedOutside::CommonHook, LinkedOutside::WorktreeGitFile}),
                     caller, linked) {
  Sandbox box(caller);
  const std::string base = box.base(), pwned = box.ws("pwned"), evil = box.ws("evil");
  std::string original, alias, script, app = box.workspace();
  switch (linked) {
    case LinkedOutside::RemoteHook:
    case LinkedOutside::RemoteGitFile: {
      workspace_repository(box, false);
      const bool hook_linked = linked == LinkedOutside::RemoteHook;
      const std::string remote = hook_linked ? base + "/srv.git" : base + "/srv/repo";
      const std::string gitdir = hook_linked ? remote : base + "/gd.git";
      box.make_dir(gitdir);
      box.host_command({kGit, "init", "-q", "--bare", gitdir});
      if (!hook_linked) {
        box.make_dir(base + "/srv");
        box.make_dir(remote);
        box.write_file(remote + "/.git", "gitdir: " + gitdir + "\n");
      }
      box.host_command({kGit, "-C", box.workspace(), "remote", "add", "origin", remote});
      if (hook_linked) {
        original = gitdir + "/hooks/post-receive";
        alias = box.ws("tools/post-receive");
        box.make_dir(box.ws("tools"));
        box.write_file(original, "#!/bin/sh\nexit 0\n", 0755);
        script = hook("tools/post-receive", pwned);
      } else {
        original = remote + "/.git";
        alias = box.ws("gitfile");
        script = evil_git_directory(evil, pwned) + " && echo 'gitdir: " + evil + "' > gitfile";
      }
      break;
    }
    case LinkedOutside::CommonHook: {
      const std::string main = base + "/main";
      box.make_dir(main);
      box.host_command({kGit, "init", "-q", main});
      commit_empty(box, main, "i");
      box.host_command({kGit, "-C", main, "worktree", "add", "-q", "-f", box.workspace()});
      app = box.ws("app");
      box.make_dir(app);
      box.make_dir(app + "/scripts");
      original = main + "/.git/hooks/pre-commit";
      alias = app + "/scripts/pre-commit";
      box.write_file(original, "#!/bin/sh\nexit 0\n", 0755);
      script = hook("scripts/pre-commit", pwned);
      break;
    }
    case LinkedOutside::WorktreeGitFile: {
      workspace_repository(box, false);
      const std::string wt = base + "/wt";
      box.make_dir(wt);
      box.host_command({kGit, "-C", box.workspace(), "worktree", "add", "-q", "-f", wt});
      original = wt + "/.git";
      alias = box.ws("wtgit");
      script = evil_git_directory(evil, pwned) + " && echo 'gitdir: " + evil + "' > wtgit";
      break;
    }
  }
  box.host_command({"/bin/ln", original, alias});
  const std::string before = read_file(original).value_or("<none>");
  RunSpec spec;
  if (app != box.workspace()) spec.options = {"--workspace", app};
  spec.cwd = app;
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("Read-only file system") != std::string::npos, r.describe());
  BOOST_TEST(read_file(original).value_or("<none>") == before, r.describe());
  switch (linked) {
    case LinkedOutside::RemoteHook:
    case LinkedOutside::RemoteGitFile:
      box.host_command({"/bin/sh", "-c",
                        "cd \"$1\" && git push -q origin HEAD:refs/heads/x >/dev/null 2>&1; true",
                        "sh", box.workspace()});
      break;
    case LinkedOutside::CommonHook:
      commit_empty(box, box.workspace(), "x");
      break;
    case LinkedOutside::WorktreeGitFile:
      box.host_command({"/bin/sh", "-c",
                        "git -C \"$1\" -c user.name=t -c user.email=t@t.test commit -q "
                        "--allow-empty -m w >/dev/null 2>&1; true",
                        "sh", base + "/wt"});
      break;
  }
  BOOST_TEST(!exists(pwned), r.describe());
}

// Control for A24B-1: with a local remote outside the workspace protected there whole, a
// hard link between two of the workspace's own files stays writable, and the run goes on.
BOOST_DATA_TEST_CASE(workspace_files_linked_to_each_other_stay_writable_beside_a_remote,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  workspace_repository(box, false);
  const std::string remote = box.base() + "/srv.git";
  box.make_dir(remote);
  box.host_command({kGit, "init", "-q", "--bare", remote});
  box.host_command({kGit, "-C", box.workspace(), "remote", "add", "origin", remote});
  box.write_file(box.ws("a"), "host\n");
  box.host_command({"/bin/ln", box.ws("a"), box.ws("b")});
  const RunResult r = box.sh("echo mine > b");
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("a")).value_or("<none>") == "mine\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
