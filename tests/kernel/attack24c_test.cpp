#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 24c (docs/redteam-2026-12.md "Attack 24c"): what review 24's fixes and the
// lead's "a config file that is a directory" change landed, attacked. Each case runs as root
// and as uid 65534 and is judged from the host: the command's output, the host's file, the
// host's git.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack24c)

namespace {

// Where the git directory of the populated submodule `lib` of the repository above the
// workspace `app` lies.
enum class SubmoduleGitDir {
  NamedElsewhere,  // `lib/.git` says `gitdir: BASE/mods/lib.git`, whose `config` the host
                   // hard-linked at `app/cfg`
  OwnDirectory,    // `lib/.git` is the git directory, its `core.fsmonitor` names `app/fsm.sh`
  // `lib/.git` says `gitdir: BASE/mods/lib.git`, whose config (no `core.worktree`) says
  // `core.fsmonitor = ../app/fsm.sh`, relative to the submodule's directory where git runs it
  RelativeToTheSubmodule,
};
std::ostream& operator<<(std::ostream& os, SubmoduleGitDir s) {
  switch (s) {
    case SubmoduleGitDir::NamedElsewhere:
      return os << "a .git file naming a git directory outside modules";
    case SubmoduleGitDir::OwnDirectory:
      return os << "a .git directory of its own";
    case SubmoduleGitDir::RelativeToTheSubmodule:
      return os << "a .git file naming a git directory whose core.fsmonitor is relative";
  }
  return os;
}

}  // namespace

// A24C-1: the workspace is `app` in the host's repository WS, whose populated submodule
// `lib` has its git directory outside WS's `modules`. zpolicy protected `lib/.git` but
// neither read nor recorded the git directory it is or names. On main dcfcfe0 each command
// exited 0 having written the `core.fsmonitor` the host's `git status` in WS runs (it enters
// every populated submodule with its config): through the hard link of `BASE/mods/lib.git/config`,
// or as the script `app/fsm.sh` lib's own config names (by its absolute path, or relative to
// `lib`, where git runs it). Each is protected now: the write fails, nothing of the
// command's runs.
BOOST_DATA_TEST_CASE(a_populated_submodule_s_git_directory_above_the_workspace_is_read,
                     bdata::make(kCallers) * bdata::make({SubmoduleGitDir::NamedElsewhere,
                                                          SubmoduleGitDir::OwnDirectory,
                                                          SubmoduleGitDir::RelativeToTheSubmodule}),
                     caller, layout) {
  Sandbox box(caller);
  const std::string base = box.base(), pwned = box.ws("pwned"), app = box.ws("app");
  const std::string lib = box.ws("lib");
  populated_submodule(box);
  box.make_dir(app);
  std::string watched, script;
  const std::string fsmonitor = "echo PWNED > " + pwned;
  switch (layout) {
    case SubmoduleGitDir::NamedElsewhere: {
      box.make_dir(base + "/mods");
      const std::string gitdir = base + "/mods/lib.git";
      box.host_command({"/bin/mv", box.ws(".git/modules/lib"), gitdir});
      box.write_file(lib + "/.git", "gitdir: " + gitdir + "\n");
      box.host_command({kGit, "config", "-f", gitdir + "/config", "core.worktree", lib});
      watched = gitdir + "/config";
      box.host_command({"/bin/ln", watched, app + "/cfg"});
      script = "printf '[core]\\n\\tfsmonitor = " + fsmonitor + "\\n' >> cfg";
      break;
    }
    case SubmoduleGitDir::OwnDirectory: {
      box.host_command({"/bin/rm", lib + "/.git"});
      box.host_command({"/bin/mv", box.ws(".git/modules/lib"), lib + "/.git"});
      box.host_command({kGit, "config", "-f", lib + "/.git/config", "--unset", "core.worktree"});
      box.host_command(
          {kGit, "config", "-f", lib + "/.git/config", "core.fsmonitor", app + "/fsm.sh"});
      watched = app + "/fsm.sh";
      script = "printf '#!/bin/sh\\n" + fsmonitor + "\\n' > fsm.sh && chmod +x fsm.sh";
      break;
    }
    case SubmoduleGitDir::RelativeToTheSubmodule: {
      box.make_dir(base + "/mods");
      const std::string gitdir = base + "/mods/lib.git";
      box.host_command({"/bin/mv", box.ws(".git/modules/lib"), gitdir});
      box.write_file(lib + "/.git", "gitdir: " + gitdir + "\n");
      box.host_command({kGit, "config", "-f", gitdir + "/config", "--unset", "core.worktree"});
      box.host_command(
          {kGit, "config", "-f", gitdir + "/config", "core.fsmonitor", "../app/fsm.sh"});
      watched = app + "/fsm.sh";
      script = "printf '#!/bin/sh\\n" + fsmonitor + "\\n' > fsm.sh && chmod +x fsm.sh";
      break;
    }
  }
  const std::string before = read_file(watched).value_or("<none>");
  RunSpec spec;
  spec.options = {"--workspace", app};
  spec.cwd = app;
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(read_file(watched).value_or("<none>") == before, r.describe());
  box.host_command(
      {"/bin/sh", "-c", "cd \"$1\" && git status >/dev/null 2>&1; true", "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
