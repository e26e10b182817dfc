#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 23c (docs/redteam-2026-12.md "Attack 23c"): A23-4's reading of the
// repositories above a writable root, attacked. Observed from the host, as root and as uid
// 65534: the command's write fails (or zpolicy refuses, exit 2), and the host's own git
// afterwards writes no marker.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack23c)

namespace {

enum class Pointer { File, ThroughWorkspaceLink };
std::ostream& operator<<(std::ostream& os, Pointer p) {
  return os << (p == Pointer::File ? ".git -> app/gitfile" : ".git -> app/l -> gitfile");
}

}  // namespace

// A23C-2: A23B-2's refusal of a pattern walk's host link whose way crosses a link inside the
// workspace was skipped under a `**` alone where the link led into the walk's start: with
// the host's `BASE/srv/x -> WS/l` and `WS/l` an earlier run's link to `BASE/srv/y`, `deny:
// [BASE/srv/**/secret]` (`protect: [BASE/srv/**/.env]`) ran on main 09f07ab; the command
// re-pointed `l` at `new` and wrote `new/secret` (`new/.env`), which the host read as
// `BASE/srv/x/secret`. Refused now, exit 2 at the pattern's line, the link as it was.
BOOST_DATA_TEST_CASE(a_double_star_through_a_host_link_to_a_workspace_link_into_its_start_is_refused,
                     bdata::make(kCallers) * bdata::make({true, false}), caller, deny) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv", name = deny ? "secret" : ".env";
  box.make_dir(srv);
  box.make_dir(srv + "/y");
  box.write_file(srv + "/y/" + name, "real\n");
  box.host_command({"/bin/ln", "-s", srv + "/y", box.ws("l")});
  box.host_command({"/bin/ln", "-s", box.ws("l"), srv + "/x"});
  const std::string rules = deny ? "  deny: [\"" + srv + "/**/secret\"]\n"
                                 : "  protect: [.git, \"" + srv + "/**/.env\"]\n";
  RunSpec spec;
  spec.options = {"--policy",
                  box.write_policy("link.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                                "  read: [\"/\"]\n  write: [\"${WORKSPACE}\"]\n" +
                                                    rules + "network: none\n")};
  spec.command = {"/bin/sh", "-c",
                  "mkdir new && echo evil > new/" + name + " && ln -sfn \"$PWD/new\" l && echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  expect_refused(r, 2, "leads through the symlink '" + box.ws("l") + "' inside a writable root");
  BOOST_TEST(r.err.find("link.yaml:6:") != std::string::npos, r.describe());
  BOOST_TEST(read_file(srv + "/x/" + name).value_or("<none>") == "real\n", r.describe());
  BOOST_TEST(!exists(box.ws("new")), r.describe());
}

// A23C-1: the repository above the workspace `app` keeps its git directory apart (`git init
// --separate-git-dir`), and its `.git` is the host's symlink to a `.git` file in the
// package (`.git -> app/gitfile`; or to a link there, `app/l -> gitfile`). zpolicy read the
// git directory that file named and protected it, but not the file: on main 09f07ab the
// command made a git directory of its own with a pre-commit hook, wrote `gitdir:` naming it
// into `gitfile` (re-pointed `l`), exit 0, and the host's next `git commit` in the repository
// ran the hook. Now the file is protected (the write fails) and a link in the workspace on
// the way to it refuses the run (exit 2).
BOOST_DATA_TEST_CASE(a_git_file_above_linked_into_the_workspace_is_protected,
                     bdata::make(kCallers) *
                         bdata::make({Pointer::File, Pointer::ThroughWorkspaceLink}),
                     caller, shape) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), gitdir = box.base() + "/gd";
  box.make_dir(gitdir);
  box.host_command({kGit, "init", "-q", "--separate-git-dir", gitdir, box.workspace()});
  box.host_command({kGit, "-C", box.workspace(), "-c", "user.name=t", "-c", "user.email=t@t.test",
                    "commit", "-q", "--allow-empty", "-m", "i"});
  box.make_dir(box.ws("app"));
  box.host_command({"/bin/rm", box.ws(".git")});
  box.write_file(box.ws("app/gitfile"), "gitdir: " + gitdir + "\n");
  if (shape == Pointer::File) {
    box.host_command({"/bin/ln", "-s", "app/gitfile", box.ws(".git")});
  } else {
    box.host_command({"/bin/ln", "-s", "gitfile", box.ws("app/l")});
    box.host_command({"/bin/ln", "-s", "app/l", box.ws(".git")});
  }
  box.host_command({kGit, "-C", box.workspace(), "status", "-s"});
  const std::string evil = box.ws("app/evil");
  const std::string repoint = shape == Pointer::File
                                  ? "echo 'gitdir: " + evil + "' > gitfile"
                                  : "echo 'gitdir: " + evil + "' > g2 && ln -sfn g2 l";
  RunSpec spec;
  spec.options = {"--workspace", box.ws("app")};
  spec.cwd = box.ws("app");
  spec.command = {"/bin/sh", "-c",
                  "git init -q --bare evil && git --git-dir=evil config core.bare false && printf '#!/bin/sh\\necho PWNED > " + pwned +
                      "\\n' > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit && " +
                      repoint + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  if (shape == Pointer::ThroughWorkspaceLink) BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(read_file(box.ws("app/gitfile")).value_or("") == "gitdir: " + gitdir + "\n",
             r.describe());
  host_commit(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
