// The files git reads one path from (compiler/resolve/gitdir.hpp NamedPath: `.git`'s
// `gitdir: `, `commondir`, a linked worktree's `gitdir`) and the configuration files git
// reads for every repository (compiler/resolve/git_config_files.hpp), as git reads them
// (review 25b, R25-4, R25-5, R25-7).
#include <sys/stat.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "compiler/resolve/git_config_files.hpp"
#include "compiler/resolve/gitdir.hpp"
#include "support/scoped_env.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy::compiler;
using zpolicy::test::ScopedEnv;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(git_path_files)

// R25-7: git reads the whole file and strips only trailing '\n' and '\r'.
BOOST_AUTO_TEST_CASE(a_gitdir_line_is_taken_as_git_takes_it) {
  zpolicy::test::TempDir t;
  t.write("a/.git", "gitdir: /x/gd \n");
  BOOST_TEST(gitdir_named_by(t / "a/.git").path.value_or("") == "/x/gd ");
  t.write("b/.git", "gitdir: gd\r\n\r\n");
  BOOST_TEST(gitdir_named_by(t / "b/.git").path.value_or("") == t / "b/gd");
  // A second line is part of the name, as git keeps it.
  t.write("c/.git", "gitdir: /x/gd\n/y\n");
  BOOST_TEST(gitdir_named_by(t / "c/.git").path.value_or("") == "/x/gd\n/y");
  // Longer than the 4 KiB read before: the name is whole.
  const std::string longer = "/x/" + std::string(5000, 'd');
  t.write("d/.git", "gitdir: " + longer + "\n");
  BOOST_TEST(gitdir_named_by(t / "d/.git").path.value_or("") == longer);
  // No `gitdir: `, or no name after it: none, as git takes none.
  t.write("e/.git", "gitdir:/x\n");
  t.write("f/.git", "gitdir: \n");
  for (const char* rel : {"e/.git", "f/.git", "missing/.git"}) {
    const NamedPath n = gitdir_named_by(t / rel);
    BOOST_TEST((!n.path && !n.refusal), rel);
  }
}

// R25-7: what zpolicy cannot mirror refuses: a NUL byte (git's name ends there), a file
// larger than git reads of a `.git` file.
BOOST_AUTO_TEST_CASE(a_path_file_zpolicy_cannot_mirror_is_refused) {
  zpolicy::test::TempDir t;
  t.write("a/.git", std::string("gitdir: /x/gd\0/y\n", 17));
  const NamedPath nul = gitdir_named_by(t / "a/.git");
  BOOST_TEST(!nul.path);
  BOOST_TEST(nul.refusal.value_or("").find("NUL") != std::string::npos);
  t.write("b/.git", "gitdir: /x/" + std::string(kGitPathFileMaxBytes, 'd') + "\n");
  const NamedPath big = gitdir_named_by(t / "b/.git");
  BOOST_TEST(!big.path);
  BOOST_TEST(big.refusal.value_or("").find("larger than") != std::string::npos);
}

// R25-7: `commondir` and a linked worktree's `gitdir` by the same reading; worktree.c
// strips every trailing space of the latter.
BOOST_AUTO_TEST_CASE(commondir_and_a_worktrees_gitdir_are_taken_as_git_takes_them) {
  zpolicy::test::TempDir t;
  t.write("gd/HEAD", "ref: refs/heads/main\n");
  t.write("gd/commondir", "../common \n");
  BOOST_TEST(commondir_named_by(t / "gd").path.value_or("") == t / "gd/../common ");
  t.write("gd/gitdir", "/w/t/.git \t\n");
  BOOST_TEST(worktree_of_admin_dir(t / "gd").path.value_or("") == "/w/t");
  t.write("gd/commondir", std::string("..\0/x", 5));
  BOOST_TEST(commondir_named_by(t / "gd").refusal.has_value());
}

// R25-4: the system file of a git on PATH built with another prefix than /usr is read,
// by the name PATH gives it and by its canonical path; /usr's and /'s are /etc/gitconfig.
BOOST_AUTO_TEST_CASE(the_system_config_of_each_git_on_path_is_listed) {
  zpolicy::test::TempDir t;
  t.write("pfx/bin/git", "#!/bin/sh\n");
  BOOST_TEST_REQUIRE(chmod((t / "pfx/bin/git").c_str(), 0755) == 0);
  t.write("brew/Cellar/git/bin/git", "#!/bin/sh\n");
  BOOST_TEST_REQUIRE(chmod((t / "brew/Cellar/git/bin/git").c_str(), 0755) == 0);
  std::filesystem::create_directories(t / "brew/bin");
  std::filesystem::create_symlink("../Cellar/git/bin/git", t / "brew/bin/git");
  // Not executable: no git the shell runs.
  t.write("plain/bin/git", "");
  const std::string path =
      t / "pfx/bin" + ":" + t / "brew/bin/" + ":" + t / "plain/bin" + ":relative/bin:/usr/bin";
  // The caller's $PATH, not this process's.
  ScopedEnv process_path("PATH", "/usr/bin:/bin");
  const auto files = git_config_files_outside("/home/u", CallerEnvironment({"PATH=" + path})).files;
  BOOST_TEST(files.front() == "/etc/gitconfig");
  BOOST_TEST(has(files, t / "pfx/etc/gitconfig"));
  BOOST_TEST(has(files, t / "brew/etc/gitconfig"));
  BOOST_TEST(has(files, t / "brew/Cellar/git/etc/gitconfig"));
  BOOST_TEST(!has(files, t / "plain/etc/gitconfig"));
  BOOST_TEST(!has(files, "/usr/etc/gitconfig"));
  BOOST_TEST(std::count(files.begin(), files.end(), "/etc/gitconfig") == 1);
}

// R25-5: a relative location git opens from the directory it runs in refuses; an empty
// one is none to git, an absolute one is read.
// The variables are the caller's (the CallerEnvironment given), whatever this process has.
BOOST_AUTO_TEST_CASE(a_relative_config_location_is_refused) {
  for (const std::string name :
       {"GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME", "HOME"}) {
    ScopedEnv absolute(name, "/abs");
    const auto out = git_config_files_outside("/home/u", CallerEnvironment({name + "=cfg"}));
    BOOST_TEST(out.refusal.value_or("").find("$" + name + " is the relative path 'cfg'") !=
                   std::string::npos,
               name);
    ScopedEnv relative(name, "cfg");
    BOOST_TEST(!git_config_files_outside("/home/u", CallerEnvironment({name + "="})).refusal, name);
    BOOST_TEST(!git_config_files_outside("/home/u", CallerEnvironment()).refusal, name);
  }
  ScopedEnv process_global("GIT_CONFIG_GLOBAL", "/srv/other");
  const auto out =
      git_config_files_outside("/home/u", CallerEnvironment({"GIT_CONFIG_GLOBAL=/srv/gc"}));
  BOOST_TEST(!out.refusal);
  BOOST_TEST(has(out.files, "/srv/gc"));
  BOOST_TEST(!has(out.files, "/srv/other"));
  BOOST_TEST(has(out.files, "/home/u/.gitconfig"));
}

// XDG_CONFIG_HOME and GIT_CONFIG_SYSTEM name files git reads; `/dev/null` names none.
BOOST_AUTO_TEST_CASE(the_callers_config_locations_are_listed) {
  ScopedEnv process_xdg("XDG_CONFIG_HOME", "/srv/process-xdg");
  ScopedEnv process_system("GIT_CONFIG_SYSTEM", "/srv/process-system");
  const auto out = git_config_files_outside(
      "/home/u", CallerEnvironment({"XDG_CONFIG_HOME=/srv/xdg", "GIT_CONFIG_SYSTEM=/srv/sys",
                                    "GIT_CONFIG_GLOBAL=/dev/null"}));
  BOOST_TEST(!out.refusal);
  BOOST_TEST(has(out.files, "/srv/xdg/git/config"));
  BOOST_TEST(has(out.files, "/srv/sys"));
  BOOST_TEST(!has(out.files, "/dev/null"));
  BOOST_TEST(!has(out.files, "/srv/process-xdg/git/config"));
  BOOST_TEST(!has(out.files, "/srv/process-system"));
}

BOOST_AUTO_TEST_SUITE_END()
