#include <sys/stat.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Review 25b (docs/redteam-2026-12.md "Review 25b"): what host resolution reads of git's
// system config, the caller's environment and the files git reads one path from. Each case
// is judged from the host: the host's git, run after the sandboxed command.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// `sh -c SCRIPT` under the default policy, with `env` added to the caller's.
RunResult run_with_env(const Sandbox& box, const std::vector<std::string>& env,
                       const std::string& script) {
  RunSpec spec;
  spec.extra_env = env;
  return run_script(box, spec, script);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_review25b)

// R25-4: the host's git is a build with another prefix than /usr, `BASE/pfx/bin/git` on the
// caller's PATH, which reads `BASE/pfx/etc/gitconfig` as its system config (modelled by a
// wrapper that execs /usr/bin/git with GIT_CONFIG_SYSTEM set: zpolicy sees the wrapper only,
// as it sees a /usr/local git). That config says `core.hooksPath = hooks`, relative: git
// takes it against the worktree, the workspace. On main 209e151 zpolicy read /etc/gitconfig
// only; the command wrote `hooks/pre-commit` and the host's `git commit` ran it. Now the
// prefix's config is read and `hooks` protected: the write fails.
BOOST_DATA_TEST_CASE(the_system_config_of_a_git_on_path_with_another_prefix_is_read,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pfx = box.base() + "/pfx", pwned = box.ws("pwned");
  box.make_dir(pfx + "/bin");
  box.make_dir(pfx + "/etc");
  box.write_file(
      pfx + "/bin/git",
      "#!/bin/sh\nGIT_CONFIG_SYSTEM=" + pfx + "/etc/gitconfig exec /usr/bin/git \"$@\"\n", 0755);
  box.write_file(pfx + "/etc/gitconfig", "[core]\n\thooksPath = hooks\n");
  workspace_repository(box, false);
  const RunResult r =
      run_with_env(box, {"PATH=" + pfx + "/bin:" + kHostPath},
                   "mkdir -p hooks && " + hook("hooks/pre-commit", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("hooks/pre-commit")), r.describe());
  host_commit(box, box.workspace(), pfx + "/bin");
  BOOST_TEST(!exists(pwned), r.describe());
}

// R25-5: a relative GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, XDG_CONFIG_HOME or HOME names a
// config file git opens from the directory it runs in: `../x` from the workspace is outside
// it (ZP003, which judges the value from zpolicy's directory, is silent), and from the
// workspace's `app` it is `WS/x`, where the command may write a config saying
// `core.hooksPath = hooks`. On main 209e151 zpolicy skipped such a value and ran (exit 0).
// Now the run is refused, naming the variable, before the command runs.
BOOST_DATA_TEST_CASE(a_relative_git_config_location_in_the_environment_is_refused,
                     bdata::make(kCallers) * bdata::make({"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
                                                          "XDG_CONFIG_HOME", "HOME"}),
                     caller, variable) {
  Sandbox box(caller);
  workspace_repository(box, false);
  const std::string name(variable);
  // Outside the workspace from zpolicy's directory (ZP003 judges a value there against it),
  // inside it from a subdirectory the host's git may run in.
  const std::string value = "../x";
  const RunResult r = run_with_env(box, {name + "=" + value}, "echo mine > out");
  expect_refused(r, 2, "$" + name + " is the relative path '" + value + "'");
  BOOST_TEST(!exists(box.ws("out")), r.describe());
}

// R25-6: a program another tool that git runs takes from git's config (git-lfs's custom
// transfer agent, git-secrets' providers, git-svn's authors program), relative: git-lfs and
// the others run it from the directory git runs in, the workspace's top. On main 209e151 no
// rule classed these keys, and the command wrote `tools/run` (exit 0) for the host's next
// `git push` (lfs), `git commit` (git-secrets' hook) or `git svn fetch` to run. Now it is
// protected: the write fails and nothing is there.
BOOST_DATA_TEST_CASE(a_program_a_tool_git_runs_takes_from_gits_config_is_protected,
                     bdata::make(kCallers) * bdata::make({"lfs.customtransfer.agent.path",
                                                          "secrets.providers", "svn.authorsProg"}),
                     caller, key) {
  Sandbox box(caller);
  workspace_repository(box, false);
  git_config_set(box, box.workspace(), key, "tools/run");
  const RunResult r = box.sh(
      "mkdir -p tools && printf '#!/bin/sh\\necho hi\\n' > tools/run && chmod +x tools/run || exit "
      "1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("tools/run")).value_or("").find("echo hi") == std::string::npos,
             r.describe());
}

// R25-7: the workspace's `.git` file says `gitdir: BASE/gd ` (git writes its git directory's
// real name, and this one ends in a space). git strips only '\n' and '\r' and uses
// `BASE/gd `, whose config says `core.hooksPath = WS/hooks`; zpolicy stripped the space too
// and read `BASE/gd`, another repository. On main 209e151 the command wrote
// `hooks/pre-commit` and the host's `git commit` ran it. Now `BASE/gd ` is read: the write
// fails.
BOOST_DATA_TEST_CASE(a_gitdir_line_is_read_as_git_reads_it, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string gd = box.base() + "/gd ", pwned = box.ws("pwned");
  box.make_dir(gd);
  box.host_command({kGit, "init", "-q", "--separate-git-dir", gd, box.workspace()});
  BOOST_TEST_REQUIRE(read_file(box.ws(".git")).value_or("") == "gitdir: " + gd + "\n");
  box.make_dir(box.base() + "/gd");
  box.host_command({kGit, "init", "-q", "--bare", box.base() + "/gd"});
  git_config_set(box, box.workspace(), "core.hooksPath", box.ws("hooks"));
  const RunResult r = box.sh("mkdir -p hooks && " + hook("hooks/pre-commit", pwned) + " || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("hooks/pre-commit")), r.describe());
  host_commit(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

// R25-8: the caller's own `.git` file at mode 0, naming the git directory `BASE/gd` whose
// config says `core.hooksPath = WS/hooks`. zpolicy could not read it and took it for none;
// the caller (or a sandbox running as the caller, where it is writable) may chmod it back,
// and git then follows it. On main 209e151 the command wrote `hooks/pre-commit` (exit 0)
// and, once the caller made `.git` readable, the host's `git commit` ran it. Now the run is
// refused, naming the file. As uid 65534: root reads every file.
BOOST_AUTO_TEST_CASE(the_callers_own_unreadable_git_file_is_refused) {
  Sandbox box(Caller::Nobody);
  const std::string pwned = box.ws("pwned");
  workspace_repository(box, true);
  git_config_set(box, box.workspace(), "core.hooksPath", box.ws("hooks"));
  box.host_command({"/bin/chmod", "0", box.ws(".git")});
  const RunResult r = box.sh("mkdir -p hooks && " + hook("hooks/pre-commit", pwned));
  expect_refused(r, 2, "'" + box.ws(".git") + "'");
  box.host_command({"/bin/chmod", "0644", box.ws(".git")});
  host_commit(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

// R25-8: the repository above the workspace `app`, its `.git/config` (saying
// `core.hooksPath = app/hooks`) the caller's own at mode 0: git run by the caller dies there
// now, so zpolicy took the repository for none; once the caller makes it readable, git runs
// the hooks in `app/hooks`. On main 209e151 the command wrote `app/hooks/pre-commit` (exit 0)
// and the host's `git commit` in the monorepo ran it after the chmod. Now the run is
// refused, naming the repository. As uid 65534: root reads every file.
BOOST_AUTO_TEST_CASE(the_callers_own_unreadable_config_above_the_workspace_is_refused) {
  Sandbox box(Caller::Nobody);
  const std::string pwned = box.ws("pwned"), app = box.ws("app");
  monorepo(box);
  git_config_set(box, box.workspace(), "core.hooksPath", "app/hooks");
  box.host_command({"/bin/chmod", "0", box.ws(".git/config")});
  RunSpec spec;
  spec.options = {"--workspace", app};
  spec.cwd = app;
  const RunResult r =
      run_script(box, spec, "mkdir -p hooks && " + hook("hooks/pre-commit", pwned) + " || exit 1");
  expect_refused(r, 2, "'" + box.ws(".git") + "'");
  box.host_command({"/bin/chmod", "0644", box.ws(".git/config")});
  host_commit(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
