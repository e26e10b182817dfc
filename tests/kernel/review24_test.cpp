#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Review 24 (docs/redteam-2026-12.md "Review 24") of main 70a8508, the holes left around
// A24-7 and A23C-3/4:
// * R24-1: the git directories found outside every writable root (a linked worktree's
//   common directory, a remote's repository) were not recorded for the search of other
//   names (hard links), so a hook or config file of theirs hard-linked into the workspace
//   stayed writable.
// * R24-2: a symlinked `config` hid `core.bare` from A23C-3's check.
// * R24-3: a writable root spelled with `//` (a `HOME` ending in '/') was not walked up for
//   A23C-4.
// Each case runs as root and as uid 65534 and is judged from the host: the file is
// unchanged, the host's git ran no hook of the sandbox's, or the run was refused (exit 2).
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_review24)

namespace {

// Where the git directory outside every writable root comes from, and which of its files
// has a hard link in the workspace.
enum class Outside {
  CommonHook,    // a linked worktree's common directory: `mono/.git/hooks/pre-commit`
  CommonConfig,  // the same: `mono/.git/config`
  RemoteHook,    // the remote `srv/r.git`: `hooks/post-receive`
  RemoteConfig,  // the same: `config`
  // CommonHook under a policy that also protects a directory holding the workspace and
  // `mono` (the search of hard links skips it, so `mono/.git` is recorded on its own)
  CommonHookAround,
};
std::ostream& operator<<(std::ostream& os, Outside o) {
  return os << (o == Outside::CommonHook     ? "a common directory's hook"
                : o == Outside::CommonConfig ? "a common directory's config"
                : o == Outside::RemoteHook   ? "a remote's hook"
                : o == Outside::RemoteConfig ? "a remote's config"
                                             : "a common directory's hook, a protected "
                                               "directory around the workspace");
}

const std::string kHarmlessHook = "#!/bin/sh\nexit 0\n";

}  // namespace

// R24-1: the workspace `wt/app` of a linked worktree `wt` of `mono` (`git worktree add`),
// holding a hard link of `mono/.git/hooks/pre-commit` (`pc`) or of `mono/.git/config`
// (`cfg`); or the workspace of a repository whose remote `origin` is `srv/r.git`, holding
// a hard link of `r.git/hooks/post-receive` (`pr`) or of its `config` (`rcfg`). On main
// 70a8508 the command rewrote the hook, exit 0, and the host's `git commit` in `wt` (`git
// push origin`) ran the sandbox's hook. Each such name is read-only now: the write fails, also
// where the policy protects a directory around both (the search skips one that holds a
// writable root, so what it holds is recorded on its own).
// The config cases held on 70a8508 already (every config file git reads is recorded as a
// git target wherever it lies) and stay here as controls: appending a `core.hooksPath`
// naming a directory of the sandbox's is refused the same way.
BOOST_DATA_TEST_CASE(a_hard_link_of_a_git_directory_found_outside_is_protected,
                     bdata::make(kCallers) *
                         bdata::make({Outside::CommonHook, Outside::CommonConfig,
                                      Outside::RemoteHook, Outside::RemoteConfig,
                                      Outside::CommonHookAround}),
                     caller, outside) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const bool remote = outside == Outside::RemoteHook || outside == Outside::RemoteConfig;
  const bool config = outside == Outside::CommonConfig || outside == Outside::RemoteConfig;
  std::string gitdir, work, workspace;
  if (remote) {
    workspace = box.ws("ws");
    box.make_dir(workspace);
    box.host_command({kGit, "init", "-q", workspace});
    commit_empty(box, workspace, "i");
    box.make_dir(box.base() + "/srv");
    gitdir = box.base() + "/srv/r.git";
    box.host_command({kGit, "init", "-q", "--bare", gitdir});
    box.host_command({kGit, "-C", workspace, "remote", "add", "origin", gitdir});
    work = workspace;
  } else {
    const std::string mono = box.ws("mono");
    box.make_dir(mono);
    box.host_command({kGit, "init", "-q", mono});
    commit_empty(box, mono, "i");
    work = box.ws("wt");
    box.host_command({kGit, "-C", mono, "worktree", "add", "-q", work});
    workspace = work + "/app";
    box.make_dir(workspace);
    gitdir = mono + "/.git";
  }
  const std::string hook_name = remote ? "post-receive" : "pre-commit";
  const std::string original = gitdir + (config ? "/config" : "/hooks/" + hook_name);
  const std::string alias = workspace + "/" + (config ? "cfg" : "hook");
  if (!config) box.write_file(original, kHarmlessHook, 0755);
  BOOST_TEST_REQUIRE(link(original.c_str(), alias.c_str()) == 0);
  const std::string before = read_file(original).value_or("<none>");
  RunSpec spec;
  spec.options = {"--workspace", workspace};
  if (outside == Outside::CommonHookAround)
    spec.options = {"--policy",
                    box.write_policy("around.yaml",
                                     "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                     "  read: [\"/\"]\n  write: [\"${WORKSPACE}\"]\n"
                                     "  protect: [.git, \"" +
                                         box.workspace() + "\"]\nnetwork: none\n"),
                    "--workspace", workspace};
  spec.cwd = workspace;
  const std::string script = config ? "mkdir -p h && " + hook("h/" + hook_name, pwned) +
                                          " && printf '[core]\\n\\thooksPath = " + workspace +
                                          "/h\\n' >> cfg"
                                    : hook("hook", pwned);
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(read_file(original).value_or("<none>") == before, r.describe());
  box.host_command({"/bin/sh", "-c",
                    remote ? "cd \"$1\" && git push -q origin HEAD:refs/heads/main >/dev/null "
                             "2>&1; true"
                           : "cd \"$1\" && git -c user.name=t -c user.email=t@t.test commit -q "
                             "--allow-empty -m x >/dev/null 2>&1; true",
                    "sh", work});
  BOOST_TEST(!exists(pwned), r.describe());
}

// R24-2: the monorepo's `.git/config` is a host symlink to `BASE/cfg/mono-config`, which
// says `core.bare = true` and `core.hooksPath = hooks`; the workspace is the package `app`.
// A23C-3's check read the config without following the link and took it for "no entries":
// on main 70a8508 the run went on (exit 0), the command wrote
// `app/hooks/reference-transaction`, and the host's `git update-ref` in `app` ran it. The
// config is read through the link now, as git's setup reads it: refused, exit 2.
BOOST_DATA_TEST_CASE(a_symlinked_config_saying_core_bare_is_judged, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), app = box.ws("app");
  box.host_command({kGit, "init", "-q", box.workspace()});
  commit_empty(box, box.workspace(), "i");
  box.make_dir(app);
  box.host_command({kGit, "-C", box.workspace(), "config", "core.bare", "true"});
  box.host_command({kGit, "-C", box.workspace(), "config", "core.hooksPath", "hooks"});
  const std::string cfg = box.base() + "/cfg";
  box.make_dir(cfg);
  box.host_command({"/bin/mv", box.ws(".git/config"), cfg + "/mono-config"});
  box.host_command({"/bin/ln", "-s", cfg + "/mono-config", box.ws(".git/config")});
  RunSpec spec;
  spec.options = {"--workspace", app};
  spec.cwd = app;
  spec.command = {"/bin/sh", "-c",
                  "mkdir -p hooks && " + hook("hooks/reference-transaction", pwned) + " && echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("relative to the directory git runs it in") != std::string::npos,
             r.describe());
  BOOST_TEST(!exists(app + "/hooks/reference-transaction"), r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git update-ref refs/heads/zp HEAD >/dev/null 2>&1; true", "sh",
                    app});
  BOOST_TEST(!exists(pwned), r.describe());
}

// R24-3: the host's monorepo BASE/mono whose package `app` is a symlink to BASE/data/app;
// `core.hooksPath = app/proj/hooks`; the policy writes `~/proj`, with `HOME` spelled
// `BASE/mono/app/` (a trailing '/'). The spelling `BASE/mono/app//proj` was skipped for its
// `//`, the repository `mono` above it never read: on main 70a8508 the command wrote
// `proj/hooks/pre-commit` (exit 0), and the host's `git commit` in `mono` ran it. The
// spelling is normalized now, `mono` read, and `hooks` read-only: the write fails.
BOOST_DATA_TEST_CASE(a_writable_root_spelled_with_an_empty_component_is_walked_up,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string mono = box.base() + "/mono", data = box.base() + "/data";
  box.make_dir(mono);
  box.host_command({kGit, "init", "-q", mono});
  commit_empty(box, mono, "i");
  box.make_dir(data);
  box.make_dir(data + "/app");
  box.make_dir(data + "/app/proj");
  box.host_command({"/bin/ln", "-s", data + "/app", mono + "/app"});
  box.host_command({kGit, "-C", mono, "config", "core.hooksPath", "app/proj/hooks"});
  RunSpec spec;
  spec.options = {"--policy", box.write_policy("p.yaml",
                                               "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                               "  read: [\"/\"]\n  write: [\"~/proj\"]\n"
                                               "  protect: [.git]\nnetwork: none\n")};
  spec.cwd = data + "/app/proj";
  spec.extra_env = {"HOME=" + mono + "/app/"};
  spec.command = {"/bin/sh", "-c",
                  "mkdir -p hooks && " + hook("hooks/pre-commit", pwned) + " && echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(data + "/app/proj/hooks/pre-commit"), r.describe());
  host_commit(box, mono);
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
