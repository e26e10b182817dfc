// Where the host's git runs a repository's hooks and commands (red team A23C-3:
// compiler/resolve/git_start_directory.hpp), the refusal of relative values where it stays
// in the directory it was started in (git_config_targets.hpp), and the caller's spelling
// of the workspace (red team A23C-4: workspace_spelling.hpp). git's behaviour each case
// stands for was checked by hand with git 2.39 (`git update-ref` in a package directory).
#include "compiler/resolve/git_start_directory.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/resolve/enclosing_repository.hpp"
#include "compiler/resolve/git_config_targets.hpp"
#include "compiler/resolve/workspace_spelling.hpp"
#include "support/scoped_env.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy::compiler;

namespace {

std::optional<std::string> canonical(const std::string& p) {
  return std::filesystem::weakly_canonical(p).string();
}

// Why git run in `top` (a worktree of `gitdir`, common directory `common`) stays where it
// was started; "" when it goes to a top.
std::string stays(const zpolicy::test::TempDir& t, const std::string& gitdir,
                  const std::string& common, const std::string& top) {
  return git_stays_where_started(t / gitdir, t / common, {t / top}, canonical).value_or("");
}

// The refusals of git_config_targets over `top`/.git/config, git staying where it was
// started by `why` (none: it goes to the top).
std::vector<std::string> refusals(const zpolicy::test::TempDir& top, const std::string& why) {
  GitConfigSources src{top / ".git", {top / ".git/config"}, {top.str()}};
  src.stays_where_started = why;
  std::vector<std::string> out;
  const GitCanonical canon = [](const std::string& p, const zpolicy::ir::SourceLoc&,
                                const std::string&) { return canonical(p); };
  const GitRefusal refuse = [&](const zpolicy::ir::SourceLoc& loc, const std::string& w) {
    out.push_back(loc.str() + " " + w);
  };
  GitConfigReads reads;
  git_config_targets(src, "/home/u", canon, refuse, reads);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(git_start_directory)

BOOST_AUTO_TEST_CASE(booleans_as_git_reads_them) {
  for (const char* v : {"true", "TRUE", "yes", "On", "1", "2", "-1", "1k", "0x10", "maybe"})
    BOOST_TEST(git_config_true(std::string(v)), v);
  for (const char* v : {"false", "No", "off", "", "0", "00", "0k", "0x0"})
    BOOST_TEST(!git_config_true(std::string(v)), v);
  BOOST_TEST(git_config_true(std::nullopt));  // `bare` written without '='
}

BOOST_AUTO_TEST_CASE(core_bare_and_core_worktree_as_gits_setup_reads_them) {
  zpolicy::test::TempDir t;
  t.mkdir("repo/app");
  t.mkdir("repo/wt");
  // An ordinary repository goes to its top.
  t.write("repo/.git/config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
  BOOST_TEST(stays(t, "repo/.git", "repo/.git", "repo") == "");
  // core.bare = true, however spelled; the last one counts.
  for (const char* bare : {"\tbare = true\n", "\tbare\n", "\tbare = false\n\tbare = yes\n"}) {
    t.write("repo/.git/config", std::string("[core]\n") + bare);
    BOOST_TEST(stays(t, "repo/.git", "repo/.git", "repo").find("core.bare") == 0u, bare);
  }
  t.write("repo/.git/config", "[core]\n\tbare = true\n\tbare = 0\n");
  BOOST_TEST(stays(t, "repo/.git", "repo/.git", "repo") == "");
  // git's setup reads neither an include nor config.worktree without worktreeConfig.
  t.write("inc.cfg", "[core]\n\tbare = true\n\tworktree = ../wt\n");
  t.write("repo/.git/config", "[include]\n\tpath = ../../inc.cfg\n");
  t.write("repo/.git/config.worktree", "[core]\n\tbare = true\n");
  BOOST_TEST(stays(t, "repo/.git", "repo/.git", "repo") == "");
  // core.worktree relative to the git directory: one that holds the top is the top git
  // goes to; one that does not leaves git where it was started.
  for (const std::string& wt : std::vector<std::string>{"..", t / "repo", t.str()}) {
    t.write("repo/.git/config", "[core]\n\tworktree = " + wt + "\n");
    BOOST_TEST(stays(t, "repo/.git", "repo/.git", "repo") == "", wt);
  }
  for (const std::string& wt : std::vector<std::string>{"../wt", t / "repo/wt", "../app"}) {
    t.write("repo/.git/config", "[core]\n\tworktree = " + wt + "\n");
    const std::string why = stays(t, "repo/.git", "repo/.git", "repo");
    BOOST_TEST(why.find("core.worktree = '" + wt + "'") == 0u, why);
    BOOST_TEST(why.find("does not hold '" + t / "repo" + "'") != std::string::npos, why);
  }
  // core.bare wins over core.worktree ("do not make sense").
  t.write("repo/.git/config", "[core]\n\tworktree = ..\n\tbare = true\n");
  BOOST_TEST(stays(t, "repo/.git", "repo/.git", "repo").find("core.bare") == 0u);
  // Not started in a worktree of it: git runs its hooks in the git directory.
  BOOST_TEST(!git_stays_where_started(t / "repo/.git", t / "repo/.git", {}, canonical));
}

BOOST_AUTO_TEST_CASE(a_linked_worktree_reads_them_only_with_worktree_config) {
  zpolicy::test::TempDir t;
  // The bare repository with its worktrees as subdirectories: `main/.git` names
  // `.bare/worktrees/main`, whose common directory says core.bare = true.
  t.write(".bare/config", "[core]\n\tbare = true\n");
  t.write(".bare/worktrees/main/commondir", "../..\n");
  t.mkdir("main");
  BOOST_TEST(stays(t, ".bare/worktrees/main", ".bare", "main") == "");
  // The common directory itself, reached from `.git` (gitdir: .bare) at the container.
  BOOST_TEST(stays(t, ".bare", ".bare", "").find("core.bare") == 0u);
  t.write(".bare/config", "[core]\n\tbare = true\n[extensions]\n\tworktreeConfig = true\n");
  BOOST_TEST(stays(t, ".bare/worktrees/main", ".bare", "main").find("core.bare") == 0u);
  t.write(".bare/worktrees/main/config.worktree", "[core]\n\tbare = false\n");
  BOOST_TEST(stays(t, ".bare/worktrees/main", ".bare", "main") == "");
}

BOOST_AUTO_TEST_CASE(relative_values_are_refused_where_git_stays_where_it_was_started) {
  const std::string why = "core.bare = 'true' (git config 'X' line 2)";
  for (const auto& [config, refused] : std::vector<std::pair<std::string, bool>>{
           {"[core]\n\thooksPath = hooks\n", true},
           {"[core]\n\thooksPath = ./hooks\n", true},
           {"[core]\n\thooksPath = /srv/hooks\n", false},
           {"[core]\n\thooksPath = ~/hooks\n", false},
           {"[alias]\n\tlint = !tools/lint --fix\n", true},
           {"[alias]\n\tlint = !/usr/bin/env tools/lint\n", true},
           {"[alias]\n\tlast = !git log -1 HEAD\n", false},
           {"[alias]\n\tst = status -sb\n", false},
           {"[alias]\n\th = -c core.hooksPath=h2 status\n", true},
           {"[core]\n\tpager = less -R\n", false},
           {"[core]\n\tsshCommand = bin/ssh\n", true},
           {"[remote \"up\"]\n\turl = ../up.git\n", true},
           {"[remote \"up\"]\n\turl = https://example.test/up.git\n", false},
           {"[branch \"main\"]\n\tremote = .\n", true}}) {
    zpolicy::test::TempDir top;
    top.write(".git/config", config);
    BOOST_TEST(refusals(top, "").empty(), config);
    const auto r = refusals(top, why);
    BOOST_TEST(r.size() == (refused ? 1u : 0u), config << (r.empty() ? "" : r.front()));
    if (!refused || r.empty()) continue;
    BOOST_TEST(r.front().find(top / ".git/config:2:") == 0u, r.front());
    BOOST_TEST(r.front().find("relative to the directory git runs it in") != std::string::npos,
               r.front());
    BOOST_TEST(r.front().find(why) != std::string::npos, r.front());
  }
}

// A23C-4: the repositories at a directory as well as above it, for the directories a
// spelling through host links names.
BOOST_AUTO_TEST_CASE(repositories_at_and_above_a_directory) {
  zpolicy::test::TempDir t;
  for (const char* dir : {"mono/.git", "outer/.git"}) {
    t.write(std::string(dir) + "/HEAD", "ref: refs/heads/main\n");
    t.mkdir(std::string(dir) + "/objects");
    t.mkdir(std::string(dir) + "/refs");
  }
  t.mkdir("data/app");
  EnclosingRepositories e;
  const auto tops = [&](const std::vector<EnclosingRepository>& found) {
    std::vector<std::string> out;
    for (const auto& r : found)
      if (r.top.rfind(t.str(), 0) == 0) out.push_back(r.top.substr(t.str().size()));
    return out;
  };
  BOOST_TEST(tops(e.above(t / "data/app")).empty());
  BOOST_TEST(tops(e.at_and_above(t / "mono")) == std::vector<std::string>{"/mono"},
             boost::test_tools::per_element());
  BOOST_TEST(tops(e.above(t / "mono")).empty());
}

BOOST_AUTO_TEST_CASE(the_caller_spelling_of_the_workspace_names_the_same_directory) {
  zpolicy::test::TempDir t;
  t.mkdir("data/app");
  t.mkdir("mono");
  t.symlink(t / "data/app", "mono/app");
  const std::string real = t / "data/app";
  BOOST_TEST(caller_workspace_spelling(t / "mono/app", real, std::nullopt) == t / "mono/app");
  BOOST_TEST(caller_workspace_spelling(t / "mono/./app/", real, std::nullopt) == t / "mono/app");
  BOOST_TEST(caller_workspace_spelling(real, real, std::nullopt) == "");
  BOOST_TEST(caller_workspace_spelling(t / "mono", real, std::nullopt) == "");
  // The current directory as the caller's $PWD spells it, used only where it names the
  // current one; this process's $PWD is not looked at.
  const std::string here = std::filesystem::current_path().string();
  t.symlink(here, "here");
  {
    zpolicy::test::ScopedEnv process_pwd("PWD", real.c_str());
    BOOST_TEST(caller_workspace_spelling(std::nullopt, here, t / "here") == t / "here");
    BOOST_TEST(caller_workspace_spelling(std::string("."), here, t / "here") == t / "here");
  }
  zpolicy::test::ScopedEnv process_pwd("PWD", (t / "here").c_str());
  BOOST_TEST(caller_workspace_spelling(std::nullopt, here, real) == "");
  BOOST_TEST(caller_workspace_spelling(std::nullopt, here, std::nullopt) == "");
}

BOOST_AUTO_TEST_SUITE_END()
