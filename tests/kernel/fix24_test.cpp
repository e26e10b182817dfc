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

// Attack 24's open item and noticed items (docs/redteam-2026-12.md "Attack 24"), fixed on
// fix24. A24-5: a host symlink loop (or a chain of more than 40 links) that a deny or
// protect pattern's walk met refused every run, although nothing can be made through it;
// it names nothing now where the sandbox cannot change its lookup, and still refuses where
// it can (a link or a directory of the workspace on the loop). A writable root inside a
// common directory without a HEAD of its own was not refused as inside a git directory.
// Each case runs as root and as uid 65534 and is judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_fix24)

namespace {

std::string policy(const std::string& rules) {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
         "  write: [\"${WORKSPACE}\"]\n" +
         rules + "network: none\n";
}

// The host links a pattern's walk meets beside `srv/real` (A24-5).
enum class Unfollowable {
  Loop,       // `srv/loop -> loop`
  LongChain,  // `srv/c0 -> c1 -> … -> c41 -> real`: 42 links from c0, 41 from c1
};
std::ostream& operator<<(std::ostream& os, Unfollowable u) {
  return os << (u == Unfollowable::Loop ? "a loop" : "a chain of more than 40 links");
}

void make_unfollowable(const Sandbox& box, const std::string& dir, Unfollowable u) {
  if (u == Unfollowable::Loop) {
    box.host_command({"/bin/ln", "-s", "loop", dir + "/loop"});
    return;
  }
  box.host_command({"/bin/ln", "-s", "real", dir + "/c41"});
  for (int i = 0; i < 41; ++i)
    box.host_command(
        {"/bin/ln", "-s", "c" + std::to_string(i + 1), dir + "/c" + std::to_string(i)});
}

// How a loop below the pattern's start passes the workspace (A24-5, still refused).
enum class LoopThrough {
  WorkspaceLink,       // `srv/wl -> WS/wl`, `WS/wl -> srv/wl`
  WorkspaceDirectory,  // `srv/d -> ../ws/sub/../../srv/d`: the sandbox may make `sub` a link
};
std::ostream& operator<<(std::ostream& os, LoopThrough t) {
  return os << (t == LoopThrough::WorkspaceLink ? "a link in the workspace"
                                                : "a directory in the workspace");
}

// Which git directory without a HEAD holds the writable root (`hooks`).
enum class HeadlessCommon {
  Bare,    // `C.git`, a bare clone used through `git worktree add ../wt`, its HEAD removed
  DotGit,  // `repo/.git`, with a linked worktree `wt`, its HEAD removed
};
std::ostream& operator<<(std::ostream& os, HeadlessCommon h) {
  return os << (h == HeadlessCommon::Bare ? "a bare repository's" : "a repository's .git");
}

}  // namespace

// A24-5, deny: `deny: [BASE/srv/*/secret]` with the host's `srv/loop -> loop` (or a chain
// of 42 links) refused every run, exit 2, "crosses more than 40 symlinks" (70a8508): the
// walk took the link for a dangling one and asked where the kernel would create what it
// names. The kernel's lookup fails there for the host and the sandbox alike, and nothing on
// its way lies in the workspace: the run goes on, and the deny holds for the sibling
// `srv/real/secret` (and, for the chain, where its shorter part leads).
BOOST_DATA_TEST_CASE(a_host_loop_below_a_deny_pattern_runs,
                     bdata::make(kCallers) *
                         bdata::make({Unfollowable::Loop, Unfollowable::LongChain}),
                     caller, shape) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv";
  box.make_dir(srv + "/real");
  box.write_file(srv + "/real/secret", "secret-fix24\n");
  make_unfollowable(box, srv, shape);
  const std::string policy_file =
      box.write_policy("deny.yaml", policy("  deny: [\"" + srv + "/*/secret\"]\n"));
  const RunResult r = box.sh("cat " + srv + "/real/secret " + srv + "/c9/secret " + srv +
                                 "/loop/secret 2>/dev/null; echo mine > out",
                             {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("secret-fix24") == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("<missing>") == "mine\n", r.describe());
}

// A24-5, protect: `protect: [${HOME}/*/.env]` with a loop in the home refused every run the
// same way; it runs now, and the pattern still protects what the host's `~/y -> WS/sub`
// names in the workspace.
BOOST_DATA_TEST_CASE(a_host_loop_below_a_protect_pattern_runs, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("sub"));
  box.host_command({"/bin/ln", "-s", "loop", box.home() + "/loop"});
  box.host_command({"/bin/ln", "-s", box.ws("sub"), box.home() + "/y"});
  const std::string policy_file =
      box.write_policy("protect.yaml", policy("  protect: [.git, \"${HOME}/*/.env\"]\n"));
  const RunResult r = box.sh("echo evil > sub/.env || echo refused-env; echo mine > out",
                             {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused-env") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.home() + "/y/.env").value_or("<none>") != "evil\n", r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("<missing>") == "mine\n", r.describe());
}

// A24-5, held: a loop the sandbox could end still refuses. Through a link in the workspace it
// could re-point that link; through a directory of the workspace (`sub/../..`) it could make
// `sub` a link to `x/y/z` and `x/srv/d` a directory holding `secret`, which the host then
// reads as `srv/d/secret` (by hand on the host: `cat srv/d/secret` printed what was written
// there). Exit 2, nothing runs.
BOOST_DATA_TEST_CASE(a_host_loop_through_the_workspace_still_refuses,
                     bdata::make(kCallers) *
                         bdata::make({LoopThrough::WorkspaceLink, LoopThrough::WorkspaceDirectory}),
                     caller, through) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv";
  box.make_dir(srv + "/real");
  box.make_dir(box.ws("sub"));
  box.write_file(srv + "/real/secret", "secret-fix24\n");
  if (through == LoopThrough::WorkspaceLink) {
    box.host_command({"/bin/ln", "-s", box.ws("wl"), srv + "/wl"});
    box.host_command({"/bin/ln", "-s", srv + "/wl", box.ws("wl")});
  } else {
    box.host_command({"/bin/ln", "-s", "../ws/sub/../../srv/d", srv + "/d"});
  }
  const std::string policy_file =
      box.write_policy("deny.yaml", policy("  deny: [\"" + srv + "/*/secret\"]\n"));
  const RunResult r = box.sh("cat " + srv + "/real/secret", {"--policy", policy_file});
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("secret-fix24") == std::string::npos, r.describe());
  BOOST_TEST(r.err.find(through == LoopThrough::WorkspaceLink
                            ? "inside a writable root"
                            : "crosses more than 40 symlinks") != std::string::npos,
             r.describe());
}

// Attack 24's noticed item: a writable root inside a common directory without a HEAD of its
// own was not refused as inside a git directory (discovery needs a HEAD), though git needs
// only `objects` and `refs` there to use it for a linked worktree, whose config it reads and
// whose hooks it runs. `--workspace C/hooks` (a bare clone used through `git worktree add`,
// or `repo/.git`, its HEAD removed): the default-policy run went on, exit 0, the command
// wrote `pre-commit`, and the host's `git commit` in the linked worktree ran it (70a8508).
// Refused now, exit 2, as a writable root inside a git directory with a HEAD is.
BOOST_DATA_TEST_CASE(a_writable_root_inside_a_headless_common_directory_is_refused,
                     bdata::make(kCallers) *
                         bdata::make({HeadlessCommon::Bare, HeadlessCommon::DotGit}),
                     caller, common_of) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string top = box.base() + "/g", wt = top + "/wt";
  box.make_dir(top);
  const std::string src = top + "/src";
  box.host_command({kGit, "init", "-q", src});
  commit_empty(box, src, "i");
  std::string common;
  if (common_of == HeadlessCommon::Bare) {
    common = top + "/C.git";
    box.host_command({kGit, "clone", "-q", "--bare", src, common});
    box.host_command({kGit, "--git-dir=" + common, "worktree", "add", "-q", wt});
  } else {
    common = src + "/.git";
    box.host_command({kGit, "-C", src, "worktree", "add", "-q", wt});
  }
  box.host_command({"/bin/rm", common + "/HEAD"});
  RunSpec spec;
  spec.options = {"--workspace", common + "/hooks"};
  spec.cwd = common + "/hooks";
  spec.command = {"/bin/sh", "-c",
                  hook("pre-commit", pwned) + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("lies inside the git directory '" + common + "'") != std::string::npos,
             r.describe());
  BOOST_TEST(!exists(common + "/hooks/pre-commit"), r.describe());
  commit_empty(box, wt, "w");
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
