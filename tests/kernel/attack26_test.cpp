#include <sys/stat.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 26 (docs/redteam-2026-12.md "Attack 26"): what session 25 landed in host
// resolution, attacked again. Each case runs as root and as uid 65534 and is judged from
// the host: the host's git.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// The controls: in the monorepo, with `env` exported and the run started in `in` (a
// directory of the workspace; "" for its top), the command writes there and git in the
// sandbox sees the repository.
void expect_git_sees_the_monorepo(const Sandbox& box, std::vector<std::string> env,
                                  const std::string& in) {
  monorepo(box);
  RunSpec spec;
  spec.extra_env = std::move(env);
  if (!in.empty()) spec.cwd = box.ws(in);
  const RunResult r = run_script(box, spec, "echo mine > out && git log --oneline | grep -q i");
  BOOST_TEST(r.completed(), r.describe());
  const std::string out = in.empty() ? box.ws("out") : box.ws(in + "/out");
  BOOST_TEST(read_file(out).value_or("<missing>") == "mine\n", r.describe());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack26)

// A26-1: the caller's shell has `GIT_DIR=BASE/meta`, a `.git` file saying `gitdir:
// WS/gd.git`, which does not exist yet. git follows a `.git` file given as $GIT_DIR
// (setup_explicit_git_dir). On main c49b89f zpolicy protected the file and read no further:
// the command made `gd.git` a git directory with `core.fsmonitor`, exit 0, and the host's
// `git status` in that shell ran the monitor. Now the file is followed: `gd.git` is protected
// (a placeholder) and the write fails.
BOOST_DATA_TEST_CASE(a_git_dir_that_is_a_dot_git_file_is_followed, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), meta = box.base() + "/meta";
  box.write_file(meta, "gitdir: " + box.ws("gd.git") + "\n");
  RunSpec spec;
  spec.extra_env = {"GIT_DIR=" + meta};
  const std::string cfg = "git config --file gd.git/config ";
  const RunResult r = run_script(
      box, spec,
      hook("fsm.sh", pwned) +
          " && mkdir -p gd.git/objects gd.git/refs/heads && echo 'ref: refs/heads/main' > "
          "gd.git/HEAD && " +
          cfg + "core.repositoryformatversion 0 && " + cfg + "core.worktree " + box.workspace() +
          " && " + cfg + "core.fsmonitor " + box.ws("fsm.sh") + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("gd.git/config")), r.describe());
  box.host_command({"/bin/sh", "-c", "cd \"$1\" && GIT_DIR=\"$2\" git status >/dev/null 2>&1; true",
                    "sh", box.workspace(), meta});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A26-2: the caller's shell has `GIT_DIR=WS/.git` and stands in `WS/app`, the workspace of
// the run; the repository says `core.hooksPath = .husky` (husky's setting). With $GIT_DIR set
// and no worktree configured, git takes the directory it is started in for the worktree's top
// and stays there. On main c49b89f zpolicy resolved `.husky` against `WS` only: the command
// wrote `app/.husky/pre-commit`, exit 0, and the host's `git commit` in `app` ran it. Now the
// caller's working directory is a top too: `app/.husky` is protected and the write fails.
BOOST_DATA_TEST_CASE(a_git_dir_exported_in_a_subdirectory_takes_it_for_the_top,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  monorepo(box);
  git_config_set(box, box.workspace(), "core.hooksPath", ".husky");
  const std::string pwned = box.ws("pwned");
  RunSpec spec;
  spec.extra_env = {"GIT_DIR=" + box.ws(".git")};
  spec.cwd = box.ws("app");
  const RunResult r = run_script(
      box, spec, "mkdir -p .husky && " + hook(".husky/pre-commit", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("app/.husky/pre-commit")), r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && GIT_DIR=\"$2\" git -c user.name=t -c user.email=t@t.test commit "
                    "-q --allow-empty -m x >/dev/null 2>&1; true",
                    "sh", box.ws("app"), box.ws(".git")});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A26-2 by `$GIT_WORK_TREE`: exported with `GIT_DIR`, it is the top git takes, wherever the
// shell stands.
BOOST_DATA_TEST_CASE(a_git_work_tree_exported_is_a_top, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  monorepo(box);
  git_config_set(box, box.workspace(), "core.hooksPath", ".husky");
  const std::string pwned = box.ws("pwned");
  RunSpec spec;
  spec.extra_env = {"GIT_DIR=" + box.ws(".git"), "GIT_WORK_TREE=app"};
  const RunResult r = run_script(
      box, spec, "mkdir -p app/.husky && " + hook("app/.husky/pre-commit", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("app/.husky/pre-commit")), r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && GIT_DIR=\"$2\" GIT_WORK_TREE=app git -c user.name=t -c "
                    "user.email=t@t.test commit -q --allow-empty -m x >/dev/null 2>&1; true",
                    "sh", box.workspace(), box.ws(".git")});
  BOOST_TEST(!exists(pwned), r.describe());
}

// Owner question 16: `$GIT_WORK_TREE` exported without `GIT_DIR` is the top git takes for
// the repository it discovers (setup_discovered_git_dir), wherever the shell stands. On main
// 6e762fd zpolicy took it only with `GIT_DIR`: the command wrote `app/.husky/pre-commit`,
// exit 0, and the host's `git commit` in the workspace in that shell ran it. Now the exported
// work tree is a top of every git directory read: `app/.husky` is protected.
BOOST_DATA_TEST_CASE(a_git_work_tree_exported_alone_is_the_discovered_repositorys_top,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  monorepo(box);
  git_config_set(box, box.workspace(), "core.hooksPath", ".husky");
  const std::string pwned = box.ws("pwned");
  RunSpec spec;
  spec.extra_env = {"GIT_WORK_TREE=" + box.ws("app")};
  const RunResult r = run_script(
      box, spec, "mkdir -p app/.husky && " + hook("app/.husky/pre-commit", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("app/.husky/pre-commit")), r.describe());
  host_commit_in_work_tree(box, box.workspace(), box.ws("app"));
  BOOST_TEST(!exists(pwned), r.describe());
}

// The same by the caller's `~/.gitconfig` (`core.hooksPath = .husky`, relative) with no
// repository in or above the workspace: git takes it in any repository, one elsewhere on
// the host too, against the exported work tree. On main 6e762fd the command wrote
// `.husky/pre-commit` in the workspace, exit 0, and the host's `git commit` in another
// repository in that shell ran it. Now `WS/.husky` is protected.
BOOST_DATA_TEST_CASE(a_git_work_tree_exported_alone_takes_the_global_hooks_path,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), other = box.base() + "/other";
  box.write_file(box.home() + "/.gitconfig", "[core]\n\thooksPath = .husky\n");
  box.make_dir(other);
  box.host_command({kGit, "init", "-q", other});
  RunSpec spec;
  spec.extra_env = {"GIT_WORK_TREE=" + box.workspace()};
  const RunResult r = run_script(
      box, spec, "mkdir -p .husky && " + hook(".husky/pre-commit", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws(".husky/pre-commit")), r.describe());
  host_commit_in_work_tree(box, other, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

// A28D-3 (attack 28d): a relative `GIT_WORK_TREE` exported alone names another top in each
// directory the host's git runs in. With `~/.gitconfig`'s `core.hooksPath = .husky` and
// `GIT_WORK_TREE=.` exported in the workspace's repository, on c652582 zpolicy protected the
// workspace's own `.husky` only: the command wrote `app/.husky/pre-commit`, and the host's
// `cd app && git commit` in that shell ran it. A relative value without `$GIT_DIR` is refused
// now (exit 2), as a relative `$GIT_CONFIG_GLOBAL` is, for each relative spelling.
BOOST_DATA_TEST_CASE(a_relative_git_work_tree_exported_alone_is_refused, bdata::make(kCallers),
                     caller) {
  for (const char* relative : {".", "./", "app/.."}) {
    Sandbox box(caller);
    monorepo(box);
    const std::string pwned = box.ws("pwned");
    box.write_file(box.home() + "/.gitconfig", "[core]\n\thooksPath = .husky\n");
    RunSpec spec;
    spec.extra_env = {std::string("GIT_WORK_TREE=") + relative};
    const RunResult r = run_script(
        box, spec, "mkdir -p app/.husky && " + hook("app/.husky/pre-commit", pwned) + " || exit 1");
    expect_refused(r, 2, std::string("$GIT_WORK_TREE is the relative path '") + relative + "'");
    BOOST_TEST(!exists(box.ws("app/.husky/pre-commit")), relative << ": " << r.describe());
    host_commit_in_work_tree(box, box.ws("app"), ".");
    BOOST_TEST(!exists(pwned), relative << ": " << r.describe());
  }
}

// The control: a relative `GIT_WORK_TREE` beside `GIT_DIR` (the shape git gives its hooks)
// runs, taken against the working directory.
BOOST_DATA_TEST_CASE(a_relative_git_work_tree_beside_git_dir_runs, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  expect_git_sees_the_monorepo(box, {"GIT_DIR=.git", "GIT_WORK_TREE=."}, "");
}

// The control: with `GIT_WORK_TREE` exported alone, a run in the repository works, and git
// in the sandbox sees it.
BOOST_DATA_TEST_CASE(a_run_with_a_git_work_tree_exported_alone_runs, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  expect_git_sees_the_monorepo(box, {"GIT_WORK_TREE=" + box.workspace()}, "");
}

// The control: a run from a subdirectory of a repository with `GIT_DIR` exported, as a
// dotfiles shell has it, works there, and git in the sandbox sees the repository.
BOOST_DATA_TEST_CASE(a_run_with_a_git_dir_exported_in_a_subdirectory_runs, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  expect_git_sees_the_monorepo(box, {"GIT_DIR=" + box.ws(".git")}, "app");
}

// A26-3: the repository's config has `alias.st = -c core.fsmonitor=tools/fsm.sh status`, and
// a populated submodule `lib`. git keeps an alias's `-c` settings for the `git status` it runs
// in `lib`, which runs `lib/tools/fsm.sh`. On main c49b89f zpolicy resolved the word against the
// tops only: the command wrote `lib/tools/fsm.sh`, exit 0, and the host's `git st` ran it. Now
// the relative word refuses: exit 2, naming the alias.
BOOST_DATA_TEST_CASE(an_aliass_relative_config_setting_reaching_submodules_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  populated_submodule(box);
  git_config_set(box, box.workspace(), "alias.st", "-c core.fsmonitor=tools/fsm.sh status");
  const std::string pwned = box.ws("pwned");
  const RunResult r = run_script(
      box, {}, "mkdir -p lib/tools && " + hook("lib/tools/fsm.sh", pwned) + " || exit 1");
  expect_refused(r, 2, "alias.st's -c core.fsmonitor");
  BOOST_TEST(!exists(box.ws("lib/tools/fsm.sh")), r.describe());
  box.host_command(
      {"/bin/sh", "-c", "cd \"$1\" && git st >/dev/null 2>&1; true", "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A26-4: the repository says `core.hooksPath = WS/sub/../hooks`, `sub` a directory of the
// workspace. The kernel takes '..' from what `sub` is when git looks. On main c49b89f zpolicy
// protected `WS/hooks` only: the command made `sub` a link to `deep/er` and wrote
// `deep/hooks/pre-commit`, exit 0, and the host's `git commit` ran it. Now `sub` is pinned:
// it cannot be removed or renamed, and stays a directory.
BOOST_DATA_TEST_CASE(a_directory_a_dot_dot_leaves_cannot_become_a_link, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.host_command({kGit, "init", "-q", box.workspace()});
  box.make_dir(box.ws("sub"));
  git_config_set(box, box.workspace(), "core.hooksPath", box.ws("sub/../hooks"));
  const std::string pwned = box.ws("pwned");
  const RunResult r =
      run_script(box, {},
                 "mkdir -p deep/er deep/hooks && " + hook("deep/hooks/pre-commit", pwned) +
                     " && { rmdir sub || mv sub sub2; } && ln -s deep/er sub || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  struct stat st {};
  BOOST_TEST((lstat(box.ws("sub").c_str(), &st) == 0 && S_ISDIR(st.st_mode)), r.describe());
  host_commit(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

// A26-4 through `$GIT_DIR`: `GIT_DIR=../.git` exported in `WS/app`, the run's workspace `WS`.
// On main c49b89f the command made `app` a link to `x/y` and `x` a repository with
// `core.fsmonitor`, and the host's `git status` in `app` (now `x/y`, whose `..` is `x`) ran
// it. Now `app` is pinned and stays a directory.
BOOST_DATA_TEST_CASE(a_git_dirs_dot_dot_leaves_a_pinned_directory, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  monorepo(box);
  const std::string pwned = box.ws("pwned");
  RunSpec spec;
  spec.options = {"--workspace", box.workspace()};
  spec.extra_env = {"GIT_DIR=../.git"};
  spec.cwd = box.ws("app");
  const RunResult r =
      run_script(box, spec,
                 "cd .. && mkdir -p x/y && git init -q x && " + hook("fsm.sh", pwned) +
                     " && git -C x config core.fsmonitor " + box.ws("fsm.sh") +
                     " && { rmdir app || mv app app2; } && ln -s x/y app || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  struct stat st {};
  BOOST_TEST((lstat(box.ws("app").c_str(), &st) == 0 && S_ISDIR(st.st_mode)), r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && GIT_DIR=../.git git status >/dev/null 2>&1; true", "sh",
                    box.ws("app")});
  BOOST_TEST(!exists(pwned), r.describe());
}

// A26-5: the caller's shell has `GIT_INDEX_FILE=WS/idx`. On main c49b89f the command made
// `lib` a repository with `core.fsmonitor` and recorded it in that index as a gitlink, exit 0,
// and the host's `git status` in the workspace entered `lib` and ran the monitor. Now the
// index is protected wherever it lies (a placeholder where missing): the write fails.
BOOST_DATA_TEST_CASE(the_index_of_the_callers_environment_is_protected, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  workspace_repository(box, false);
  const std::string pwned = box.ws("pwned"), index = box.ws("idx");
  RunSpec spec;
  spec.extra_env = {"GIT_INDEX_FILE=" + index};
  const RunResult r = run_script(
      box, spec,
      "git init -q lib && git -C lib -c user.name=t -c user.email=t@t.test commit -q "
      "--allow-empty -m l && " +
          hook("fsm.sh", pwned) + " && git -C lib config core.fsmonitor " + box.ws("fsm.sh") +
          " && GIT_INDEX_FILE=" + index +
          " git update-index --add --cacheinfo 160000,$(git -C lib rev-parse HEAD),lib || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && GIT_INDEX_FILE=\"$2\" git status >/dev/null 2>&1; true", "sh",
                    box.workspace(), index});
  BOOST_TEST(!exists(pwned), r.describe());
}

// The control: an alias's `-c` setting naming a program by name or an absolute path, in a
// repository with a populated submodule, refuses no run.
BOOST_DATA_TEST_CASE(an_aliass_config_setting_by_name_runs, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  populated_submodule(box);
  git_config_set(box, box.workspace(), "alias.lg", "-c core.pager=cat log");
  git_config_set(box, box.workspace(), "alias.df", "-c diff.external=/usr/bin/diff diff");
  const RunResult r = run_script(box, {}, "echo mine > out && git lg --oneline >/dev/null");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("<missing>") == "mine\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
