#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sandbox_fixture.hpp"

// Red team A13-3 (docs/redteam-2026-12.md, docs/protected-paths.md "What git's
// configuration names"): a protected git directory's config named files in the workspace
// that the host's next git command runs or reads as config (core.hooksPath, includes,
// core.fsmonitor, command-valued keys); the sandbox wrote `.githooks/pre-commit` and the
// host's `git commit` ran it. Resolution now protects every such target, and refuses a
// config it cannot read soundly.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// A git directory git recognizes at `dir`, with `config`.
void make_git_dir(const Sandbox& box, const std::string& dir, const std::string& config) {
  box.make_dir(dir);
  box.write_file(dir + "/HEAD", "ref: refs/heads/main\n");
  box.write_file(dir + "/config", config);
}

// Nothing the sandbox made is at `path`: it is absent, or an empty directory (the
// placeholder of a missing protected path, which outlives the run while other runs on
// the host are live; docs/protected-paths.md "Concurrent runs in one workspace").
bool nothing_planted(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (!fs::exists(st)) return true;
  return fs::is_directory(st) && fs::is_empty(path, ec) && !ec;
}

// Each of `script`'s writes is tried in turn; none may have reached the host.
std::string try_all(const std::vector<std::string>& writes) {
  std::string script;
  for (const auto& w : writes) script += "( " + w + " ) 2>/dev/null; ";
  return script + "true";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_git_config)

// core.hooksPath naming an existing directory (relative to the worktree top), a missing
// one (in a nested repository), and one a linked worktree's common config names,
// relative to that worktree; a hook that is a symlink into the workspace.
BOOST_DATA_TEST_CASE(hook_directories_a_config_names_are_protected, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  make_git_dir(box, box.ws(".git"), "[core]\n\tbare = false\n\thooksPath = .githooks\n");
  box.make_dir(box.ws(".githooks"));
  box.write_file(box.ws(".githooks/pre-commit"), "#!/bin/sh\nexit 0\n", 0755);
  // A hook that is a symlink into the workspace runs what it points at.
  box.make_dir(box.ws(".git/hooks"));
  box.make_dir(box.ws("scripts"));
  box.write_file(box.ws("scripts/pre-push"), "#!/bin/sh\nexit 0\n", 0755);
  BOOST_REQUIRE(symlink("../../scripts/pre-push", box.ws(".git/hooks/pre-push").c_str()) == 0);
  box.make_dir(box.ws("sub"));
  make_git_dir(box, box.ws("sub/.git"), "[Core]\n  HooksPath = \"hooks-missing\"  # husky-like\n");
  for (const auto* dir : {"wt", "gd", "common"}) box.make_dir(box.ws(dir));
  box.write_file(box.ws("wt/.git"), "gitdir: ../gd\n");
  box.write_file(box.ws("gd/HEAD"), "ref: refs/heads/main\n");
  box.write_file(box.ws("gd/commondir"), "../common\n");
  box.write_file(box.ws("common/config"), "[core]\nhooksPath=.wt-hooks\n");
  const RunResult r = box.sh(try_all({"echo evil > .githooks/pre-commit",
                                      "echo evil > .githooks/post-checkout",
                                      "echo evil > scripts/pre-push",
                                      "mv .githooks .gh2 && mkdir .githooks",
                                      "mkdir -p sub/hooks-missing && echo evil > sub/hooks-missing/pre-commit",
                                      "mkdir -p wt/.wt-hooks && echo evil > wt/.wt-hooks/pre-commit"}));
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws(".githooks/pre-commit")).value_or("") == "#!/bin/sh\nexit 0\n",
             "an existing hook overwritten: " << r.describe());
  BOOST_TEST((!exists(box.ws(".githooks/post-checkout")) && !exists(box.ws(".gh2/post-checkout"))),
             "a hook planted: " << r.describe());
  BOOST_TEST(!exists(box.ws(".gh2")), "the hooks directory moved aside: " << r.describe());
  BOOST_TEST(read_file(box.ws("scripts/pre-push")).value_or("") == "#!/bin/sh\nexit 0\n",
             "a symlinked hook's target written: " << r.describe());
  BOOST_TEST(nothing_planted(box.ws("sub/hooks-missing")),
             "a missing hooks directory made: " << r.describe());
  BOOST_TEST(nothing_planted(box.ws("wt/.wt-hooks")),
             "a linked worktree's hooks directory made: " << r.describe());
}

// include.path relative to the including file, includeIf whatever its condition (here
// one that does not hold, and a missing file), and an include the included file names.
BOOST_DATA_TEST_CASE(included_config_files_are_protected, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  make_git_dir(box, box.ws(".git"),
               "[include]\n\tpath = ../shared.gitconfig\n"
               "[includeIf \"gitdir:/nowhere/\"]\n\tpath = ../cond.gitconfig\n");
  box.write_file(box.ws("shared.gitconfig"), "[include]\n\tpath = conf/nested.gitconfig\n");
  box.make_dir(box.ws("conf"));
  box.write_file(box.ws("conf/nested.gitconfig"), "[user]\n\tname = x\n");
  const RunResult r = box.sh(try_all({"printf '[core]\\nhooksPath = h\\n' >> shared.gitconfig",
                                      "echo '[core] hooksPath = h' > cond.gitconfig",
                                      "echo '[core] hooksPath = h' >> conf/nested.gitconfig"}));
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("shared.gitconfig")).value_or("").find("hooksPath") ==
                 std::string::npos,
             "an included file written: " << r.describe());
  BOOST_TEST(nothing_planted(box.ws("cond.gitconfig")),
             "a conditional include made: " << r.describe());
  BOOST_TEST(read_file(box.ws("conf/nested.gitconfig")).value_or("") == "[user]\n\tname = x\n",
             "a nested include written: " << r.describe());
}

// core.fsmonitor and command-valued keys naming scripts in the workspace: relative to
// the worktree top, absolute, quoted as the shell removes quotes (`"tools"/conv.sh` and
// `./to"ol"s/alias.sh` name tools/…, red team A14B-3), missing or not.
BOOST_DATA_TEST_CASE(scripts_a_config_runs_are_protected, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  make_git_dir(box, box.ws(".git"),
               "[core]\n\tfsmonitor = tools/fsmonitor\n\teditor = \"./tools/editor\" --wait\n"
               "[diff \"x\"]\n\ttextconv = \\\"tools\\\"/conv.sh\n"
               "[alias]\n\tt = !./to\\\"ol\\\"s/alias.sh \\\"$1\\\"\n"
               "[credential \"https://example.test\"]\n\thelper = " +
                   box.ws("tools/cred") + " get\n"
                   "[filter \"lfs\"]\n\tclean = FOO=1 tools/filter/clean %f\n");
  box.make_dir(box.ws("tools"));
  box.write_file(box.ws("tools/fsmonitor"), "#!/bin/sh\n", 0755);
  box.write_file(box.ws("tools/conv.sh"), "cat\n", 0755);
  const RunResult r = box.sh(try_all({"echo evil > tools/fsmonitor", "echo evil > tools/editor",
                                      "echo evil > tools/conv.sh", "echo evil > tools/alias.sh",
                                      "echo evil > tools/cred",
                                      "mkdir -p tools/filter && echo evil > tools/filter/clean",
                                      "echo ok > tools/other"}));
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("tools/fsmonitor")).value_or("") == "#!/bin/sh\n",
             "the fsmonitor hook written: " << r.describe());
  BOOST_TEST(read_file(box.ws("tools/conv.sh")).value_or("") == "cat\n",
             "a textconv script written: " << r.describe());
  for (const auto* made : {"tools/editor", "tools/alias.sh", "tools/cred", "tools/filter/clean"})
    BOOST_TEST(nothing_planted(box.ws(made)), made << " made: " << r.describe());
  BOOST_TEST(read_file(box.ws("tools/other")).value_or("") == "ok\n",
             "a file no key names is still writable: " << r.describe());
}

// What zpolicy cannot read as git would refuses the run before anything runs, naming the
// config file and line: one case of each kind (a bad line, a word only a shell could
// resolve, an include too deep, an include that is no regular file, an interpreter's
// module or workspace script, a command the splitter cannot follow); the unit tests
// (git_config/what_cannot_be_read_soundly_is_refused_at_its_line) have the others.
BOOST_DATA_TEST_CASE(a_config_zpolicy_cannot_read_refuses_the_run, bdata::make(kCallers),
                     caller) {
  const std::vector<std::pair<std::string, std::string>> configs = {
      {"[core]\n\teditor = vi\n\tpager = less \\q\n", ":3:"},
      {"[core]\n\tsshCommand = ssh -F $HOME/cfg/x\n", ":2:"},
      {"[include]\n\tpath = config\n", ":2:"},  // itself, past git's include depth
      {"[include]\n\tpath = ../fifo\n", ":2:"},
      // Red team A14B-2: what `nbstripout --install` writes, and a script an interpreter
      // runs from the workspace, load code a sandbox can plant next to them.
      {"[filter \"nbstripout\"]\n\tclean = python3 -m nbstripout\n", ":2:"},
      {"[diff \"x\"]\n\ttextconv = env python3 @WS@/tools/conv.py\n", ":2:"},
      // Red team A14B-3: what the splitter cannot follow.
      {"[alias]\n\tt = !cd tools && sh x\n", ":2:"},
      {"[core]\n\tfsmonitor = `echo tools`/fsm\n", ":2:"},
  };
  for (auto [config, line] : configs) {
    Sandbox box(caller);
    if (const auto at = config.find("@WS@"); at != std::string::npos)
      config.replace(at, 4, box.workspace());
    make_git_dir(box, box.ws(".git"), config);
    BOOST_REQUIRE(mkfifo(box.ws("fifo").c_str(), 0644) == 0);
    BOOST_REQUIRE(chown(box.ws("fifo").c_str(), uid_of(caller), uid_of(caller)) == 0);
    const RunResult r = box.sh("echo ran > ran");
    BOOST_TEST(r.exit_code == 2, config << "\n" << r.describe());
    BOOST_TEST(!exists(box.ws("ran")), config << "\n" << r.describe());
    BOOST_TEST(r.err.find(box.ws(".git/config") + line) != std::string::npos,
               config << "\n" << r.describe());
  }
}

// Red team A14B-1: `.git/hooks` that is a symlink to a workspace directory let the sandbox
// plant a hook the host's next `git commit` ran. In a git directory inside the workspace
// the link refuses the run (a symlink in a writable root, as every protected path); from
// a git directory outside every writable root (a worktree's) it is followed, and the
// directory it names is protected as a whole.
BOOST_DATA_TEST_CASE(a_hooks_directory_that_is_a_symlink_is_followed_or_refused,
                     bdata::make(kCallers), caller) {
  {
    Sandbox box(caller);
    make_git_dir(box, box.ws(".git"), "[core]\n\tbare = false\n");
    box.make_dir(box.ws("myhooks"));
    BOOST_REQUIRE(symlink("../myhooks", box.ws(".git/hooks").c_str()) == 0);
    const RunResult r = box.sh("echo evil > myhooks/pre-commit");
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(!exists(box.ws("myhooks/pre-commit")), r.describe());
    BOOST_TEST(r.err.find(box.ws(".git/hooks")) != std::string::npos, r.describe());
  }
  Sandbox box(caller);
  const std::string gd = box.base() + "/gd";
  make_git_dir(box, gd, "[core]\n\tbare = false\n");
  box.make_dir(box.ws("wt"));
  box.write_file(box.ws("wt/.git"), "gitdir: " + gd + "\n");
  box.make_dir(box.ws("myhooks"));
  BOOST_REQUIRE(symlink(box.ws("myhooks").c_str(), (gd + "/hooks").c_str()) == 0);
  const RunResult r = box.sh(try_all({"echo evil > myhooks/pre-commit",
                                      "mv myhooks mh2 && mkdir myhooks"}));
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(!exists(box.ws("myhooks/pre-commit")), "a hook planted: " << r.describe());
  BOOST_TEST(!exists(box.ws("mh2")), "the hooks directory moved aside: " << r.describe());
}

// Red team A14B-5: a hooks directory zpolicy cannot list (mode 0 for nobody; root lists
// it anyway) refuses the run at that directory, rather than reading as one without links.
BOOST_DATA_TEST_CASE(a_hooks_directory_that_cannot_be_listed_refuses_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  make_git_dir(box, box.ws(".git"), "[core]\n\tbare = false\n");
  box.make_dir(box.ws(".git/hooks"));
  BOOST_REQUIRE(chmod(box.ws(".git/hooks").c_str(), 0) == 0);
  const RunResult r = box.sh("echo ran > ran");
  BOOST_REQUIRE(chmod(box.ws(".git/hooks").c_str(), 0755) == 0);
  if (caller == Caller::Root) {
    BOOST_TEST(r.completed(), r.describe());
    return;
  }
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(!exists(box.ws("ran")), r.describe());
  BOOST_TEST(r.err.find(box.ws(".git/hooks")) != std::string::npos, r.describe());
}

// Red team A15-G1: an interpreter behind a program zpolicy does not know, which may be a
// wrapper (`timeout 10 python3 -m nbfilter`), protected nothing, and the host's `git add`
// imported the nbfilter.py the sandbox planted at the top. It refuses the run now, at the
// config line, before anything runs.
BOOST_DATA_TEST_CASE(a_wrapped_interpreter_refuses_the_run, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  make_git_dir(box, box.ws(".git"), "[core]\n\tbare = false\n"
                                    "[filter \"nb\"]\n\tclean = timeout 10 python3 -m nbfilter\n");
  const RunResult r = box.sh("echo 'import os' > nbfilter.py");
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(!exists(box.ws("nbfilter.py")), r.describe());
  BOOST_TEST(r.err.find(box.ws(".git/config") + ":4:") != std::string::npos, r.describe());
  BOOST_TEST(r.err.find("python3") != std::string::npos, r.describe());
}

// Red team A15-G2: a program that runs a file named by an option without a '/' (`sed -f
// strip.sed`: the sandbox wrote `1e touch …` and the host's `git add` ran it; sed's and
// awk's are kernel_attack15's). Its file is protected, existing or not (`ssh -F`, `jq -f`
// behind a wrapper), and so is an existing file a word names without a '/'; a program that
// runs the project at the top (`make`) refuses the run.
BOOST_DATA_TEST_CASE(a_file_a_program_runs_by_a_name_without_a_slash_is_protected,
                     bdata::make(kCallers), caller) {
  {
    Sandbox box(caller);
    make_git_dir(box, box.ws(".git"),
                 "[core]\n\tsshCommand = ssh -F ssh_config\n"
                 "[filter \"jq\"]\n\tclean = timeout 5 jq -f clean.jq\n"
                 "[diff \"t\"]\n\ttextconv = tool --config=tool.toml\n");
    box.write_file(box.ws("ssh_config"), "Host *\n");
    box.write_file(box.ws("tool.toml"), "x = 1\n");
    const RunResult r = box.sh(try_all({"echo ProxyCommand\\ x >> ssh_config", "echo . > clean.jq",
                                        "echo evil > tool.toml", "echo ok > other.sed"}));
    BOOST_TEST_REQUIRE(r.completed(), r.describe());
    BOOST_TEST(read_file(box.ws("ssh_config")).value_or("") == "Host *\n",
               "an ssh config written: " << r.describe());
    BOOST_TEST(nothing_planted(box.ws("clean.jq")), "a jq program made: " << r.describe());
    BOOST_TEST(read_file(box.ws("tool.toml")).value_or("") == "x = 1\n",
               "a config file named without a '/' written: " << r.describe());
    BOOST_TEST(read_file(box.ws("other.sed")).value_or("") == "ok\n", r.describe());
  }
  Sandbox box(caller);
  make_git_dir(box, box.ws(".git"), "[alias]\n\tb = !make -s lint\n");
  const RunResult r = box.sh("echo 'lint:; touch x' > Makefile");
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(!exists(box.ws("Makefile")), r.describe());
  BOOST_TEST(r.err.find(box.ws(".git/config") + ":2:") != std::string::npos, r.describe());
}

// Red team A15-G4: a script a command names runs with its `#!` interpreter, which puts
// the script's directory first on its import path (python's sys.path[0]): the sandbox
// wrote tools/json.py and the host's `git add` imported it through tools/clean.py. As the
// explicit `python3 tools/clean.py`, it refuses the run, naming the config line and key;
// so does a hook that is a symlink to such a script.
BOOST_DATA_TEST_CASE(a_script_whose_shebang_runs_an_interpreter_refuses_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  make_git_dir(box, box.ws(".git"), "[filter \"j\"]\n\tclean = tools/clean.py\n");
  box.make_dir(box.ws("tools"));
  box.write_file(box.ws("tools/clean.py"), "#!/usr/bin/env python3\nimport json\n", 0755);
  const RunResult r = box.sh("echo 'import os' > tools/json.py");
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(!exists(box.ws("tools/json.py")), r.describe());
  BOOST_TEST(r.err.find(box.ws(".git/config") + ":2:") != std::string::npos, r.describe());
  BOOST_TEST(r.err.find("filter.j.clean") != std::string::npos, r.describe());
  // The same for a hook that is a symlink to such a script.
  Sandbox hook(caller);
  make_git_dir(hook, hook.ws(".git"), "[core]\n\tbare = false\n");
  hook.make_dir(hook.ws(".git/hooks"));
  hook.make_dir(hook.ws("scripts"));
  hook.write_file(hook.ws("scripts/pre-commit.py"), "#!/usr/bin/python3\nimport json\n", 0755);
  BOOST_REQUIRE(symlink("../../scripts/pre-commit.py", hook.ws(".git/hooks/pre-commit").c_str()) == 0);
  const RunResult h = hook.sh("echo 'import os' > scripts/json.py");
  BOOST_TEST(h.exit_code == 2, h.describe());
  BOOST_TEST(!exists(hook.ws("scripts/json.py")), h.describe());
  BOOST_TEST(h.err.find("pre-commit.py") != std::string::npos, h.describe());
}

// A repository whose config names nothing of the kind runs as before: a git-style alias
// and a remote URL with slashes protect nothing.
BOOST_DATA_TEST_CASE(a_repository_without_such_keys_runs_as_before, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  make_git_dir(box, box.ws(".git"),
               "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
               "[remote \"origin\"]\n\turl = https://example.test/src/repo.git\n"
               "[alias]\n\tst = status -- src/\n[core]\n\tfsmonitor = false\n");
  box.make_dir(box.ws("src"));
  const RunResult r = box.sh("echo ok > src/file");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("src/file")).value_or("") == "ok\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
