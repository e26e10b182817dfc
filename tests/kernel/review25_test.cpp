#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Review 25 (docs/redteam-2026-12.md "Review 25"): the holes a read-only review of host
// resolution at main 209e151 found, R25-1, R25-2, R25-3 and R25-9. Each case runs as root and
// as uid 65534 and is judged from the host: the host's file, the host's git.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_review25)

namespace {

// `dir` (below base()) as seen from base(): "../.." for BASE/a/b.
std::string up_to_base(const Sandbox& box, const std::string& dir) {
  std::string up = "..";
  for (const char c : dir.substr(box.base().size() + 1))
    if (c == '/') up += "/..";
  return up;
}

// `script` run in `app` (a directory of the workspace's repository, or another directory)
// given as the workspace.
RunResult run_in(const Sandbox& box, const std::string& app, const std::string& script) {
  RunSpec spec;
  spec.options = {"--workspace", app};
  spec.cwd = app;
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  return box.run(spec);
}

}  // namespace

// R25-1: `submodule.lib.update = !tools/up.sh` in the workspace's `.git/config`. git runs it
// in the submodule's directory (submodule--helper's run_update_command: `cp.dir = sm_path`),
// which the workspace's `.gitmodules` maps the name to; zpolicy took its relative words
// against the top, as for any command. On main 209e151 the command exited 0 having written
// `lib/tools/up.sh`, which the host's `git submodule update` ran. Refused now, as `submodule
// foreach`'s relative words are: exit 2, naming the key and its file.
BOOST_DATA_TEST_CASE(a_submodule_update_command_s_relative_words_are_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  populated_submodule(box);
  // lib's HEAD moved past the commit the superproject records: `git submodule update` runs
  // the update command to go back to it.
  commit_empty(box, box.ws("lib"), "moved");
  git_config_set(box, box.workspace(), "submodule.lib.update", "!tools/up.sh");
  const RunResult r =
      box.sh("mkdir -p lib/tools && " + hook("lib/tools/up.sh", pwned) + " || exit 1");
  expect_refused(r, 2,
                 "submodule.lib.update = '!tools/up.sh' runs 'tools/up.sh' in a submodule's "
                 "directory");
  BOOST_TEST(r.err.find("git config '" + box.ws(".git/config") + "' line ") != std::string::npos,
             r.describe());
  BOOST_TEST(!exists(box.ws("lib/tools/up.sh")), r.describe());
  host_submodule_update(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

// R25-2: the workspace is `app` in the host's repository WS, whose populated submodule `lib`
// has a `.git` file naming `../app/.mods/lib.git`, which does not exist. zpolicy passed it by
// as no git directory; on main 209e151 the command exited 0 having made it a git directory
// (lib's own, copied) whose `core.fsmonitor` names its `fsm.sh`, and the host's `git status`
// in WS entered it and ran the script. The named directory is protected now (a placeholder):
// making it fails.
BOOST_DATA_TEST_CASE(a_submodule_pointer_to_a_missing_git_directory_is_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), app = box.ws("app");
  populated_submodule(box);
  box.make_dir(app);
  box.write_file(box.ws("lib/.git"), "gitdir: ../app/.mods/lib.git\n");
  const RunResult r =
      run_in(box, app,
             "mkdir -p .mods && cp -r ../.git/modules/lib .mods/lib.git && git config -f "
             ".mods/lib.git/config core.fsmonitor " +
                 app + "/fsm.sh && printf '#!/bin/sh\\necho PWNED > " + pwned +
                 "\\n' > fsm.sh && chmod +x fsm.sh");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(app + "/.mods/lib.git/HEAD"), r.describe());
  box.host_command(
      {"/bin/sh", "-c", "cd \"$1\" && git status >/dev/null 2>&1; true", "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

// R25-3: the workspace is the linked worktree `BASE/x/wt` of the host's repository WS, whose
// `.git/config` says `core.hooksPath = ../x/wt/h`, relative to WS, where the host's `git
// commit` in WS runs. zpolicy read WS's `.git` (the common directory) only with the linked
// worktree's tops, never WS; on main 209e151 the command exited 0 having written
// `h/pre-commit`, which the host's `git commit` in WS ran. `h` is protected now: the write
// fails.
BOOST_DATA_TEST_CASE(a_common_directory_s_config_is_read_with_its_own_worktree,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), wt = box.base() + "/x/wt";
  workspace_repository(box, false);
  box.make_dir(box.base() + "/x");
  box.host_command({kGit, "-C", box.workspace(), "worktree", "add", "-q", wt});
  git_config_set(box, box.workspace(), "core.hooksPath",
                 up_to_base(box, box.workspace()) + "/x/wt/h");
  const RunResult r = run_in(box, wt, "mkdir -p h && " + hook("h/pre-commit", pwned));
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(wt + "/h/pre-commit"), r.describe());
  commit_empty(box, box.workspace(), "c");
  BOOST_TEST(!exists(pwned), r.describe());
}

// R25-9: the workspace is `app` in the host's repository WS, whose `.git` file names the git
// directory `BASE/adm`, whose `commondir` names `WS/app/m/../c` with `m` missing. zpolicy
// took the name as spelled and refused each fixed name below it in turn (hooks, remotes,
// branches, modules, config), none under the name the kernel resolves once the command made
// `m`. Refused once now, at the `commondir`, naming it.
BOOST_DATA_TEST_CASE(a_common_directory_with_dot_dot_below_a_missing_directory_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string app = box.ws("app"), adm = box.base() + "/adm";
  box.make_dir(app);
  box.make_dir(adm);
  box.write_file(adm + "/HEAD", "ref: refs/heads/main\n");
  box.write_file(adm + "/commondir", app + "/m/../c\n");
  box.write_file(box.ws(".git"), "gitdir: " + adm + "\n");
  const RunResult r = run_in(box, app, "true");
  expect_refused(r, 2,
                 "common git directory named by '" + adm + "/commondir' '" + app +
                     "/m/../c' has '..' below '" + app + "/m', which does not exist");
  BOOST_TEST(r.err.find("git's hooks directory") == std::string::npos, r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
