#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team A23-4 (docs/redteam-2026-12.md "Attack 23"): a repository that holds the
// workspace from above. In a monorepo run with the workspace a package directory
// (`--workspace repo/app`), `repo/.git/config` may name paths below `app` (husky's
// monorepo setup: `core.hooksPath = app/.husky`); the sandbox wrote there, and the host's
// next git command in the monorepo ran it. Observed from the host, as root and as uid
// 65534: the command's write fails (or zpolicy refuses, exit 2), and the host's own git
// afterwards writes no marker.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_above23)

namespace {

// `zpolicy run --workspace DIR` (default policy) in DIR, the command `sh -c SCRIPT` followed
// by kDoneMarker when it succeeded.
RunResult run_in(const Sandbox& box, const std::string& dir, const std::string& script) {
  RunSpec spec;
  spec.options = {"--workspace", dir};
  spec.cwd = dir;
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  return box.run(spec);
}

// The host's next git commands in `repo`, as the caller, whatever they answer: a commit
// (pre-commit hook), a status (core.fsmonitor) and the alias `lint`.
void host_git(const Sandbox& box, const std::string& repo) {
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && for c in 'commit -q --allow-empty -m x' status lint; do "
                    "git -c user.name=t -c user.email=t@t.test $c >/dev/null 2>&1; done; true",
                    "sh", repo});
}

// The run did not get its write through: refused (exit 2) or the command failed, and it
// never printed the marker that follows its last step.
void expect_stopped(const RunResult& r) {
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
}

enum class HooksPath { Relative, Absolute, RelativeMissing };
std::ostream& operator<<(std::ostream& os, HooksPath h) {
  return os << (h == HooksPath::Relative   ? "relative"
                : h == HooksPath::Absolute ? "absolute"
                                           : "relative-missing");
}

}  // namespace

// A23-4: `core.hooksPath = app/hooks` (or absolute) in the repository above the workspace
// `app`. On main 27522c1 the command wrote `hooks/pre-commit` (exit 0) and the host's next
// `git commit` in the monorepo ran it. Now the hooks directory is protected: read-only
// where it exists, a placeholder where it does not.
BOOST_DATA_TEST_CASE(a_hooks_path_into_the_workspace_from_the_repository_above_is_protected,
                     bdata::make(kCallers) * bdata::make({HooksPath::Relative, HooksPath::Absolute,
                                                          HooksPath::RelativeMissing}),
                     caller, form) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  monorepo(box);
  if (form != HooksPath::RelativeMissing) box.make_dir(box.ws("app/hooks"));
  git_config_set(box, box.workspace(), "core.hooksPath",
                 form == HooksPath::Absolute ? box.ws("app/hooks") : "app/hooks");
  const RunResult r =
      run_in(box, box.ws("app"), "mkdir -p hooks && " + hook("hooks/pre-commit", pwned));
  expect_stopped(r);
  BOOST_TEST(!exists(box.ws("app/hooks/pre-commit")), r.describe());
  host_git(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

enum class Command { Fsmonitor, ShAlias };
std::ostream& operator<<(std::ostream& os, Command c) {
  return os << (c == Command::Fsmonitor ? "core.fsmonitor" : "alias !sh");
}

// A23-4 for a command value: `core.fsmonitor = app/fsm.sh` (protected: the write fails) and
// `alias.lint = !sh app/lint.sh` (a relative script an interpreter runs: refused, exit 2),
// as for the workspace's own `.git`. On main the command rewrote the script and the host's
// next `git status` (`git lint`) ran it.
BOOST_DATA_TEST_CASE(a_command_value_naming_a_workspace_file_from_above_is_protected,
                     bdata::make(kCallers) * bdata::make({Command::Fsmonitor, Command::ShAlias}),
                     caller, command) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  monorepo(box);
  const std::string script = command == Command::Fsmonitor ? "fsm.sh" : "lint.sh";
  box.write_file(box.ws("app/" + script), "#!/bin/sh\nexit 0\n", 0755);
  if (command == Command::Fsmonitor)
    git_config_set(box, box.workspace(), "core.fsmonitor", "app/fsm.sh");
  else
    git_config_set(box, box.workspace(), "alias.lint", "!sh app/lint.sh");
  const RunResult r = run_in(box, box.ws("app"), hook(script, pwned));
  expect_stopped(r);
  if (command == Command::ShAlias) BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(read_file(box.ws("app/" + script)).value_or("") == "#!/bin/sh\nexit 0\n",
             r.describe());
  host_git(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

// A23-4 for an include: `include.path = ../app/extra.cfg` (relative to `.git`), existing or
// not. On main the command wrote `[core] hooksPath` there naming hooks of its own, and the
// host's next `git commit` ran them. Now the include is protected (read-only, or a
// placeholder).
BOOST_DATA_TEST_CASE(an_include_into_the_workspace_from_the_repository_above_is_protected,
                     bdata::make(kCallers) * bdata::make(std::vector<bool>{false, true}), caller,
                     existing) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  monorepo(box);
  if (existing) box.write_file(box.ws("app/extra.cfg"), "");
  git_config_set(box, box.workspace(), "include.path", "../app/extra.cfg");
  const RunResult r =
      run_in(box, box.ws("app"),
             "mkdir -p h2 && " + hook("h2/pre-commit", pwned) +
                 " && printf '[core]\\n\\thooksPath = " + box.ws("app/h2") + "\\n' > extra.cfg");
  expect_stopped(r);
  host_git(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

// A23-4 through a `.git` file: the monorepo checked out as a linked worktree (`ws/.git` a
// file naming `BASE/main/.git/worktrees/ws`), the main repository's config naming
// `app/hooks`, relative to the worktree's top. On main the host's next `git commit` in the
// worktree ran the sandbox's hook.
BOOST_DATA_TEST_CASE(a_linked_worktree_above_the_workspace_is_read, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), main_repo = box.base() + "/main";
  box.make_dir(main_repo);
  box.host_command({kGit, "init", "-q", main_repo});
  box.host_command({kGit, "-C", main_repo, "-c", "user.name=t", "-c", "user.email=t@t.test",
                    "commit", "-q", "--allow-empty", "-m", "i"});
  box.host_command({kGit, "-C", main_repo, "worktree", "add", "-q", "--detach", box.workspace()});
  box.make_dir(box.ws("app/hooks"));
  git_config_set(box, main_repo, "core.hooksPath", "app/hooks");
  const RunResult r = run_in(box, box.ws("app"), hook("hooks/pre-commit", pwned));
  expect_stopped(r);
  host_git(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

enum class Farther { Outer, SymlinkedGitDir };
std::ostream& operator<<(std::ostream& os, Farther f) {
  return os << (f == Farther::Outer ? "outer repository" : "symlinked .git, ceiling");
}

// Every repository above is read, not only the one git's discovery from the workspace
// finds: `outer/.git` naming `mid/app/hooks` with `outer/mid` a repository of its own (the
// host's `git commit` in `outer` runs it); and a `.git` that is a symlink to a separate git
// directory, zpolicy run with GIT_CEILING_DIRECTORIES at the repository's top (which stops
// git's discovery from the workspace, not the host's git in the repository). On main
// 27522c1 the command wrote the hook and the host's next commit ran it.
BOOST_DATA_TEST_CASE(every_repository_above_is_read,
                     bdata::make(kCallers) *
                         bdata::make({Farther::Outer, Farther::SymlinkedGitDir}),
                     caller, shape) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  RunSpec spec;
  std::string top = box.workspace(), dir;
  if (shape == Farther::Outer) {
    monorepo(box);
    box.host_command({kGit, "init", "-q", box.ws("mid")});
    box.make_dir(box.ws("mid/app/hooks"));
    git_config_set(box, box.workspace(), "core.hooksPath", "mid/app/hooks");
    dir = box.ws("mid/app");
  } else {
    const std::string gitdir = box.base() + "/gd";
    box.make_dir(gitdir);
    box.host_command({kGit, "init", "-q", "--separate-git-dir", gitdir, box.workspace()});
    box.host_command({"/bin/rm", box.ws(".git")});
    box.host_command({"/bin/ln", "-s", gitdir, box.ws(".git")});
    box.make_dir(box.ws("app/hooks"));
    git_config_set(box, box.workspace(), "core.hooksPath", "app/hooks");
    spec.extra_env = {"GIT_CEILING_DIRECTORIES=" + box.workspace()};
    dir = box.ws("app");
  }
  spec.options = {"--workspace", dir};
  spec.cwd = dir;
  spec.command = {"/bin/sh", "-c",
                  "mkdir -p hooks && " + hook("hooks/pre-commit", pwned) + " && echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  expect_stopped(r);
  host_git(box, top);
  BOOST_TEST(!exists(pwned), r.describe());
}

enum class Inside { Bare, DotGit };
std::ostream& operator<<(std::ostream& os, Inside i) {
  return os << (i == Inside::Bare ? "bare repository" : ".git/hooks");
}

// A workspace inside a git directory: a bare repository's package directory (`core.hooksPath
// = app/hooks`, relative to the bare repository) or a repository's `.git/hooks` itself. On
// main the command wrote the hook and the host's next push into the bare repository (git
// commit in the repository) ran it. Now refused, exit 2.
BOOST_DATA_TEST_CASE(a_workspace_inside_a_git_directory_is_refused,
                     bdata::make(kCallers) * bdata::make({Inside::Bare, Inside::DotGit}), caller,
                     where) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  std::string workspace, script;
  if (where == Inside::Bare) {
    box.host_command({kGit, "init", "-q", "--bare", box.ws("r.git")});
    box.make_dir(box.ws("r.git/app/hooks"));
    git_config_set(box, box.ws("r.git"), "core.hooksPath", "app/hooks");
    workspace = box.ws("r.git/app");
    script = hook("hooks/post-receive", pwned);
  } else {
    monorepo(box);
    workspace = box.ws(".git/hooks");
    script = hook("pre-commit", pwned);
  }
  const RunResult r = run_in(box, workspace, script);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("inside the git directory") != std::string::npos, r.describe());
  if (where == Inside::Bare) {
    box.make_dir(box.ws("src"));
    box.host_command({"/bin/sh", "-c",
                      "cd \"$1\" && git init -q && git -c user.name=t -c user.email=t@t.test "
                      "commit -q --allow-empty -m x && git push -q \"$2\" HEAD:refs/heads/main "
                      ">/dev/null 2>&1; true",
                      "sh", box.ws("src"), box.ws("r.git")});
  } else {
    host_git(box, box.workspace());
  }
  BOOST_TEST(!exists(pwned), r.describe());
}

// A writable root that is itself a git directory (a bare repository; `repo/.git` given as
// the workspace) is read-only whole under every policy, as the default's `**/.git` makes
// it: with `protect: [.git]` only, the command wrote `hooks/pre-receive` (`pre-commit`) on
// main 27522c1, and the host's next push (commit) ran it.
BOOST_DATA_TEST_CASE(a_writable_root_that_is_a_git_directory_is_read_only,
                     bdata::make(kCallers) * bdata::make({Inside::Bare, Inside::DotGit}), caller,
                     where) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string policy =
      box.write_policy("p.yaml",
                       "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n  write: "
                       "[\"${WORKSPACE}\"]\n  protect: [.git]\nnetwork: none\n");
  std::string workspace;
  if (where == Inside::Bare) {
    box.host_command({kGit, "init", "-q", "--bare", box.ws("r.git")});
    workspace = box.ws("r.git");
  } else {
    monorepo(box);
    workspace = box.ws(".git");
  }
  const std::string name = where == Inside::Bare ? "post-receive" : "pre-commit";
  RunSpec spec;
  spec.options = {"--policy", policy, "--workspace", workspace};
  spec.cwd = workspace;
  spec.command = {"/bin/sh", "-c",
                  hook("hooks/" + name, pwned) + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  expect_stopped(r);
  BOOST_TEST(!exists(workspace + "/hooks/" + name), r.describe());
  if (where == Inside::Bare) {
    box.make_dir(box.ws("src"));
    box.host_command({"/bin/sh", "-c",
                      "cd \"$1\" && git init -q && git -c user.name=t -c user.email=t@t.test "
                      "commit -q --allow-empty -m x && git push -q \"$2\" HEAD:refs/heads/main "
                      ">/dev/null 2>&1; true",
                      "sh", box.ws("src"), box.ws("r.git")});
  } else {
    host_git(box, box.workspace());
  }
  BOOST_TEST(!exists(pwned), r.describe());
}

enum class Ordinary { Plain, HooksAtTop, SiblingPackage, NestedRepository };
std::ostream& operator<<(std::ostream& os, Ordinary o) {
  return os << (o == Ordinary::Plain            ? "plain"
                : o == Ordinary::HooksAtTop     ? "hooks at the top"
                : o == Ordinary::SiblingPackage ? "a sibling package's hooks"
                                                : "the workspace a repository of its own");
}

// Held (no false refusal): monorepos whose config names nothing below the workspace, or
// only its own hooks path (`core.hooksPath = app/hooks` with the workspace a repository
// of its own: the hooks directory is read-only, the rest of the package writable).
BOOST_DATA_TEST_CASE(ordinary_monorepos_still_run,
                     bdata::make(kCallers) *
                         bdata::make({Ordinary::Plain, Ordinary::HooksAtTop,
                                      Ordinary::SiblingPackage, Ordinary::NestedRepository}),
                     caller, kind) {
  Sandbox box(caller);
  monorepo(box);
  box.write_file(box.ws("app/src.js"), "old\n");
  if (kind == Ordinary::HooksAtTop) {
    box.make_dir(box.ws("tools/hooks"));
    git_config_set(box, box.workspace(), "core.hooksPath", "tools/hooks");
    git_config_set(box, box.workspace(), "core.fsmonitor", "false");
  } else if (kind == Ordinary::SiblingPackage) {
    box.make_dir(box.ws("web/.husky/_"));
    git_config_set(box, box.workspace(), "core.hooksPath", "web/.husky/_");
  } else if (kind == Ordinary::NestedRepository) {
    box.host_command({kGit, "init", "-q", box.ws("app")});
    box.make_dir(box.ws("app/hooks"));
    git_config_set(box, box.workspace(), "core.hooksPath", "app/hooks");
  }
  const RunResult r =
      run_in(box, box.ws("app"), "echo new > src.js && mkdir -p lib && echo x > lib/y");
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("app/src.js")).value_or("") == "new\n", r.describe());
  if (kind == Ordinary::NestedRepository) {
    const RunResult w = run_in(box, box.ws("app"), "echo x > hooks/pre-commit");
    expect_stopped(w);
  }
}

enum class Closed { GitDir, Config, WorktreesMain };
std::ostream& operator<<(std::ostream& os, Closed c) {
  return os << (c == Closed::GitDir   ? ".git 0700"
                : c == Closed::Config ? ".git/config 0600"
                                      : "a worktree's main .git 0700");
}

// An enclosing repository the caller cannot read: its `.git` (root's, mode 0700), its
// `config` (root's, 0600), or, for a linked worktree above (`ws/.git` a file), the main
// repository's `.git` that holds its git directory (root's, 0700). git run by uid 65534
// skips the first ("not a git repository") and dies at the others ("unable to access
// '.git/config'", "not a git repository: …/worktrees/ws"), so it runs nothing there; zpolicy
// does not refuse that caller's run either (its host git still runs no hook). Root reads
// it: the hooks path stays protected.
BOOST_DATA_TEST_CASE(an_enclosing_repository_the_caller_cannot_read,
                     bdata::make(kCallers) *
                         bdata::make({Closed::GitDir, Closed::Config, Closed::WorktreesMain}),
                     caller, closed) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), main_repo = box.base() + "/main";
  std::string path;
  if (closed == Closed::WorktreesMain) {
    box.make_dir(main_repo);
    box.host_command({kGit, "init", "-q", main_repo});
    box.host_command({kGit, "-C", main_repo, "-c", "user.name=t", "-c", "user.email=t@t.test",
                      "commit", "-q", "--allow-empty", "-m", "i"});
    box.host_command({kGit, "-C", main_repo, "worktree", "add", "-q", "--detach", box.workspace()});
    git_config_set(box, main_repo, "core.hooksPath", "app/hooks");
    path = main_repo + "/.git";
  } else {
    monorepo(box);
    git_config_set(box, box.workspace(), "core.hooksPath", "app/hooks");
    path = box.ws(closed == Closed::GitDir ? ".git" : ".git/config");
  }
  box.make_dir(box.ws("app/hooks"));
  BOOST_REQUIRE(chown(path.c_str(), 0, 0) == 0);
  BOOST_REQUIRE(chmod(path.c_str(), closed == Closed::Config ? 0600 : 0700) == 0);
  const RunResult r = run_in(box, box.ws("app"), hook("hooks/pre-commit", pwned));
  if (caller == Caller::Nobody) {
    BOOST_TEST(r.exit_code == 0, r.describe());
    BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  } else {
    expect_stopped(r);
  }
  host_git(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
