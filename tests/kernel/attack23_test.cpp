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

// Attack 23 (docs/redteam-2026-12.md "Attack 23 (attack23)"): A22F-1's class, the other
// names in a git directory the host's git reads through a host link into the workspace,
// attacked with the real bwrap and kernel as root and as uid 65534. Each case is a
// finding's reproduction or a held attack, observed from the host: after the run the
// host's own git (the push or submodule update that would run the sandbox's hook) runs,
// and the hook's marker must not appear.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack23)

namespace {

void link(const Sandbox& box, const std::string& target, const std::string& at) {
  box.host_command({"/bin/ln", "-s", target, at});
}

// After the run, as the caller: the host's `git push origin`, which runs the pushed-to
// repository's post-receive hook.
void host_push(const Sandbox& box) {
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git -c user.name=t -c user.email=t@t.test push -q origin "
                    "HEAD:refs/heads/main >/dev/null 2>&1; true",
                    "sh", box.workspace()});
}

RunResult run(const Sandbox& box, const std::string& script) {
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  return box.run(spec);
}

}  // namespace

// A23-1: a symlinked `commondir` refused only in a git directory a protected path names; in
// a remote's repository it was not read and not judged. With the host's
// `BASE/host/repo.git` (a HEAD, and `commondir -> WS/cd`, a file of the workspace or
// dangling) as `origin`, the command wrote `WS/evil` into `cd` and made `evil` a bare
// repository with a post-receive hook, and the host's `git push origin` ran it (exit 0;
// "PWNED"). Now refused: exit 2, nothing made, the push runs nothing of the sandbox's.
BOOST_DATA_TEST_CASE(a_remotes_symlinked_commondir_into_the_workspace_is_refused,
                     bdata::make(kCallers) * bdata::make(std::vector<bool>{false, true}), caller,
                     dangling) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), remote = box.base() + "/host/repo.git";
  workspace_repository(box, false);
  box.make_dir(remote);
  box.write_file(remote + "/HEAD", "ref: refs/heads/main\n");
  if (!dangling) {
    box.host_command({kGit, "init", "-q", "--bare", box.base() + "/host/real.git"});
    box.write_file(box.ws("cd"), box.base() + "/host/real.git\n");
  }
  link(box, box.ws("cd"), remote + "/commondir");
  box.host_command({kGit, "-C", box.workspace(), "remote", "add", "origin", remote});
  const RunResult r =
      run(box, "printf '%s\\n' " + box.ws("evil") + " > cd && git init -q --bare evil && " +
                   hook("evil/hooks/post-receive", pwned));
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("evil")), r.describe());
  host_push(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

// A23-2: A22F-1 judged a linked `remotes` or `branches` directory, not a linked file in it:
// git reads `remotes/origin` through the link (fopen), zpolicy's reading skipped it. With
// the host's `GITDIR/remotes/origin -> WS/.origin` (`URL: <a host repository>`), the
// command wrote `URL: WS/evil.git` there, a repository of its own with a post-receive
// hook, and the host's `git push origin` ran it. Now the link in the workspace's own `.git`
// refuses (a symlink inside a writable root), and one in a git directory outside has its
// target protected (the write fails) or, dangling, refuses.
BOOST_DATA_TEST_CASE(a_legacy_remote_file_linked_into_the_workspace_is_protected,
                     bdata::make(kCallers) * bdata::make(std::vector<bool>{false, true}) *
                         bdata::make(std::vector<bool>{false, true}) *
                         bdata::make(std::vector<bool>{false, true}),
                     caller, branches, separate, dangling) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), good = box.base() + "/host/good.git";
  const std::string gitdir = workspace_repository(box, separate);
  const std::string dir = gitdir + (branches ? "/branches" : "/remotes");
  const std::string prefix = branches ? "" : "URL: ";
  box.make_dir(box.base() + "/host");
  box.host_command({kGit, "init", "-q", "--bare", good});
  box.host_command({"/bin/mkdir", "-p", dir});
  if (!dangling) box.write_file(box.ws(".origin"), prefix + good + "\n");
  link(box, box.ws(".origin"), dir + "/origin");
  const RunResult r =
      run(box, "git init -q --bare evil.git && " + hook("evil.git/hooks/post-receive", pwned) +
                   " && printf '%s\\n' '" + prefix + box.ws("evil.git") + "' > .origin");
  if (separate && !dangling) {
    BOOST_TEST(r.exit_code != 0, r.describe());  // the write to `.origin` fails
    BOOST_TEST(read_file(box.ws(".origin")).value_or("") == prefix + good + "\n", r.describe());
  } else {
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(!exists(box.ws("evil.git")), r.describe());
  }
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  host_push(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

namespace {

// Where the host linked the submodule's git directory into the workspace.
enum class SubLink { GitDir, Hooks, Config };
std::ostream& operator<<(std::ostream& os, SubLink l) {
  return os << (l == SubLink::GitDir  ? "modules/sub"
                : l == SubLink::Hooks ? "modules/sub/hooks"
                                      : "modules/sub/config");
}

}  // namespace

// A23-3: A22F-1 judged a linked `modules` directory, not what lies in it, and a submodule's
// git directory there was read only when its `.git` pointer was protected, which a
// deinitialized submodule has none of. With the host's `GITDIR/modules/sub -> WS/.msub`,
// or `GITDIR/modules/sub/hooks -> WS/.h`, or `GITDIR/modules/sub/config -> WS/.subcfg`, the
// command made `.msub` a git directory with a post-checkout hook (wrote `.h/post-checkout`;
// set `core.hooksPath` in `.subcfg`), and the host's `git submodule update --init` ran it.
// Now each submodule git directory below `modules` is read as every git directory: a link
// in the workspace's own `.git` refuses, one in a git directory outside has its target
// protected (the writes fail).
BOOST_DATA_TEST_CASE(a_submodules_git_directory_linked_into_the_workspace_is_protected,
                     bdata::make(kCallers) *
                         bdata::make({SubLink::GitDir, SubLink::Hooks, SubLink::Config}) *
                         bdata::make(std::vector<bool>{false, true}),
                     caller, where, separate) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string gitdir = workspace_repository(box, separate);
  const std::string subsrc = deinitialized_submodule(box);
  const std::string module = gitdir + "/modules/sub";
  std::string script;
  if (where == SubLink::GitDir) {
    box.host_command({"/bin/rm", "-rf", module});
    box.make_dir(box.ws(".msub"));
    link(box, box.ws(".msub"), module);
    script = "git clone -q --bare " + subsrc + " .msub/x && mv .msub/x/* .msub/ && " +
             "git config -f .msub/config core.bare false && " +
             hook(".msub/hooks/post-checkout", pwned);
  } else if (where == SubLink::Hooks) {
    box.host_command({"/bin/rm", "-rf", module + "/hooks"});
    box.make_dir(box.ws(".h"));
    link(box, box.ws(".h"), module + "/hooks");
    script = hook(".h/post-checkout", pwned);
  } else {
    box.host_command({"/bin/mv", module + "/config", box.ws(".subcfg")});
    link(box, box.ws(".subcfg"), module + "/config");
    script = "mkdir -p .h && " + hook(".h/post-checkout", pwned) +
             " && printf '[core]\\n\\thooksPath = %s\\n' " + box.ws(".h") + " >> .subcfg";
  }
  const RunResult r = run(box, script);
  if (separate) {
    BOOST_TEST(r.exit_code != 0, r.describe());  // the link's target is read-only
  } else {
    BOOST_TEST(r.exit_code == 2, r.describe());
  }
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  host_submodule_update(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

// Held (no false refusal): a deinitialized submodule, whose git directory is now read as
// every git directory, and an ordinary legacy remotes file still run.
BOOST_DATA_TEST_CASE(ordinary_submodules_and_legacy_remotes_still_run, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string gitdir = workspace_repository(box, false);
  deinitialized_submodule(box);
  box.host_command({kGit, "init", "-q", "--bare", box.base() + "/subsrc/up.git"});
  box.host_command({"/bin/mkdir", "-p", gitdir + "/remotes"});
  box.write_file(gitdir + "/remotes/up", "URL: " + box.base() + "/subsrc/up.git\n");
  const RunResult r = box.sh("echo ok > out");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("") == "ok\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
