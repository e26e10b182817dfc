#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 24 (docs/redteam-2026-12.md "Attack 24"): session 23's host resolution
// after the review fixes. A24-1/2: a deny or protect pattern's walk through the host's
// links dropped names the pattern spells (two links to one directory walked it for the
// first one's states only; a link into the walk's start under a `**` that follows another
// component was never walked). A24-3: an unlistable `worktrees` level hid a linked
// worktree's config. A24-4: a legacy remote file whose name starts with a dot was skipped.
// A24-6: a common directory in the workspace of a git directory only the walk found was
// left writable, hooks and all. A24-7: a hard link in the workspace of a file of the
// repository above (its `.git` file, a hook, its config) was left writable. A24-8: a linked
// worktree's `.git` file in the workspace was protected by `**/.git` alone.
// Each case runs as root and as uid 65534 and is judged from the host: the command's
// output, the host's files, the host's git.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack24)

namespace {

std::string policy(const std::string& rules) {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
         "  write: [\"${WORKSPACE}\"]\n" +
         rules + "network: none\n";
}

// Where the second host link to the linked directory stands (A24-1/2's walks).
enum class IntoStart {
  StarFirst,       // `srv/*x/**/secret`: a `*` before the `**`
  DoubleStarLast,  // `srv/**/ax/**/secret`: a `**` and a literal before the second `**`
};
std::ostream& operator<<(std::ostream& os, IntoStart w) {
  switch (w) {
    case IntoStart::StarFirst:
      return os << "a star before the double star";
    case IntoStart::DoubleStarLast:
      return os << "a double star and a name before the double star";
  }
  return os;
}
const std::vector<IntoStart> kIntoStarts{IntoStart::StarFirst, IntoStart::DoubleStarLast};

}  // namespace

// A24-1, deny: `deny: [BASE/srv/*/*/secret]` with the host's `srv/p/q -> data/d` and
// `srv/r -> data/d` names `data/d/secret` (through `p/q`) and `data/d/X/secret` (through
// `r`). The walk entered each link target once, with the states of the link met first, so
// one of the two was never denied and the command read it through its link (on da339b0:
// `srv/r/X/secret`, whichever order the host's directory lists them in, one is read). Both
// are denied now; the run goes on.
BOOST_DATA_TEST_CASE(two_host_links_to_one_directory_deny_what_each_spells, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv", data = box.base() + "/data";
  for (const auto& d : {srv, srv + "/p", data, data + "/d", data + "/d/X"}) box.make_dir(d);
  box.write_file(data + "/d/secret", "secret-one\n");
  box.write_file(data + "/d/X/secret", "secret-two\n");
  box.host_command({"/bin/ln", "-s", data + "/d", srv + "/p/q"});
  box.host_command({"/bin/ln", "-s", data + "/d", srv + "/r"});
  const std::string policy_file =
      box.write_policy("deny.yaml", policy("  deny: [\"" + srv + "/*/*/secret\"]\n"));
  const RunResult r = box.sh("cat " + srv + "/p/q/secret " + srv + "/r/X/secret " + data +
                                 "/d/secret " + data + "/d/X/secret 2>/dev/null; echo mine > out",
                             {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("secret-one") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("secret-two") == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("<missing>") == "mine\n", r.describe());
}

// A24-1, protect: `protect: [${HOME}/*/*/.env]` with the host's `~/p/q -> WS/sub` and `~/r
// -> WS/sub` names `sub/.env` (as `~/p/q/.env`) and `sub/X/.env` (as `~/r/X/.env`); one of
// them was left writable, the command wrote it, and the host read `evil` at its name in
// the home. Both are protected now (the writes fail); the rest of the workspace is
// writable.
BOOST_DATA_TEST_CASE(two_host_links_to_one_directory_protect_what_each_spells,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("sub"));
  box.make_dir(box.ws("sub/X"));
  box.make_dir(box.home() + "/p");
  box.host_command({"/bin/ln", "-s", box.ws("sub"), box.home() + "/p/q"});
  box.host_command({"/bin/ln", "-s", box.ws("sub"), box.home() + "/r"});
  const std::string policy_file =
      box.write_policy("protect.yaml", policy("  protect: [.git, \"${HOME}/*/*/.env\"]\n"));
  const RunResult r = box.sh(
      "echo evil > sub/.env || echo refused-one; echo evil > sub/X/.env || echo refused-two; "
      "echo mine > out",
      {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused-one") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("refused-two") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.home() + "/p/q/.env").value_or("<none>") != "evil\n", r.describe());
  BOOST_TEST(read_file(box.home() + "/r/X/.env").value_or("<none>") != "evil\n", r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("<missing>") == "mine\n", r.describe());
}

// A24-2: under a `**` alone, a host link into the walk's start was skipped as "walked at its
// own name", which holds only where the `**` is the pattern's first component. With the
// host's `srv/ax/l -> srv/other`, `deny: [BASE/srv/*x/**/secret]` (or `srv/**/ax/**/secret`)
// never walked `other` with the `**` after `ax` (`other` is no `*x`, nor below an `ax`),
// and the command read `srv/other/secret` as the denied `srv/ax/l/secret` (da339b0).
BOOST_DATA_TEST_CASE(a_host_link_into_the_start_after_a_component_is_walked,
                     bdata::make(kCallers) * bdata::make(kIntoStarts), caller, at) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv";
  for (const auto& d : {srv, srv + "/ax", srv + "/other"}) box.make_dir(d);
  box.write_file(srv + "/other/secret", "secret-three\n");
  box.host_command({"/bin/ln", "-s", srv + "/other", srv + "/ax/l"});
  const std::string pattern =
      at == IntoStart::StarFirst ? srv + "/*x/**/secret" : srv + "/**/ax/**/secret";
  const std::string policy_file =
      box.write_policy("deny.yaml", policy("  deny: [\"" + pattern + "\"]\n"));
  const RunResult r =
      box.sh("cat " + srv + "/ax/l/secret 2>/dev/null; echo mine > out", {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("secret-three") == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("<missing>") == "mine\n", r.describe());
}

// Held, and kept cheap: a `**` that is the pattern's first component still skips a host link
// into the start (its target is walked at its own name with the same states): `deny:
// [BASE/srv/**/secret]` with `srv/ax/l -> srv/other` denies `other/secret` and runs.
BOOST_DATA_TEST_CASE(a_host_link_into_the_start_under_a_first_double_star_is_denied_once,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv";
  for (const auto& d : {srv, srv + "/ax", srv + "/other"}) box.make_dir(d);
  box.write_file(srv + "/other/secret", "secret-four\n");
  box.host_command({"/bin/ln", "-s", srv + "/other", srv + "/ax/l"});
  const std::string policy_file =
      box.write_policy("deny.yaml", policy("  deny: [\"" + srv + "/**/secret\"]\n"));
  const RunResult r = box.sh("cat " + srv + "/ax/l/secret " + srv +
                                 "/other/secret 2>/dev/null; "
                                 "echo mine > out",
                             {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("secret-four") == std::string::npos, r.describe());
}

// A24-3: A23R-3's rule (a level git reaches entries of by name, there and not listable,
// refuses) was applied to `modules`, `remotes` and `branches`, not to `worktrees`. With the
// workspace's repository's linked worktree `BASE/wtp/wt`, `extensions.worktreeConfig`, its
// `.git/worktrees/wt/config.worktree` naming `core.hooksPath = WS/hk`, and
// `.git/worktrees` root's with mode 0711, uid 65534's default-policy run did not read
// `config.worktree`, the command wrote `hk/pre-commit`, and the caller's `git commit` in the
// linked worktree ran it (da339b0). Now uid 65534's run is refused (exit 2, "cannot list
// it"); root lists the level and protects `hk` (the write fails).
BOOST_DATA_TEST_CASE(an_unlistable_worktrees_directory_is_refused, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string gitdir = workspace_repository(box, false);
  const std::string wt = box.base() + "/wtp/wt";
  box.make_dir(box.base() + "/wtp");
  box.host_command({kGit, "-C", box.workspace(), "worktree", "add", "-q", wt});
  box.host_command({kGit, "-C", box.workspace(), "config", "extensions.worktreeConfig", "true"});
  box.write_file(gitdir + "/worktrees/wt/config.worktree",
                 "[core]\n\thooksPath = " + box.ws("hk") + "\n");
  root_owned(gitdir + "/worktrees", 0711);
  RunSpec spec;
  spec.command = {"/bin/sh", "-c",
                  "mkdir -p hk && " + hook("hk/pre-commit", pwned) + " && echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  if (caller == Caller::Nobody) {
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(r.err.find("cannot list it") != std::string::npos, r.describe());
  }
  commit_empty(box, wt, "w");
  BOOST_TEST(!exists(pwned), r.describe());
}

// A24-4: git reads `remotes/.x` for `git push .x` as it reads `remotes/origin`; the walk
// over the legacy remote files skipped every name starting with a dot. With the host's
// `.git/remotes/.x` naming `WS/evil.git`, the default-policy run made `evil.git` a bare
// repository with a post-receive hook, and the host's `git push .x` ran it (da339b0). Now
// its URL is protected as `remotes/origin`'s is: the repository cannot be made, and the
// push runs nothing of the sandbox's. (`branches/.x` is read too; git 2.39 dies on its
// refspec `refs/heads/.x` before it connects.)
BOOST_DATA_TEST_CASE(a_legacy_remote_file_named_with_a_dot_is_read, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string gitdir = workspace_repository(box, false);
  box.write_file(gitdir + "/remotes/.x", "URL: " + box.ws("evil.git") + "\n");
  RunSpec spec;
  spec.command = {"/bin/sh", "-c",
                  "git init -q --bare evil.git && " + hook("evil.git/hooks/post-receive", pwned) +
                      " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git -c user.name=t -c user.email=t@t.test push -q .x "
                    "HEAD:refs/heads/main >/dev/null 2>&1; true",
                    "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

// Where a git directory the walk reads names its common directory in the workspace (A24-6).
enum class CommonOf {
  Remote,  // the remote `BASE/srv/r.git` (HEAD, `commondir` naming `WS/common`), default policy
  Above,   // the repository above: `.git` a file naming `app/gd`, whose `commondir` is
           // `../common`; `protect: [.git]`
};
std::ostream& operator<<(std::ostream& os, CommonOf c) {
  return os << (c == CommonOf::Remote ? "a remote's git directory"
                                      : "the git directory of the repository above");
}

// A24-6: the common directory of a git directory that only this walk found (a remote's, the
// repository above's named by a `.git` file) was read for its config files, which were
// protected, but not protected whole as protect_common_directories protects those of the
// protected paths: git runs the hooks of the common directory. A common directory with no
// HEAD of its own (git needs only its `objects` and `refs`, A12-4) is no repository to
// `**/.git` either. With the remote `BASE/srv/r.git` naming `WS/common`, the default-policy
// run went on, exit 0, the command wrote `common/hooks/post-receive`, and the host's `git push
// origin` ran it; with the host's `.git` file above naming `app/gd` and `gd/commondir`
// `../common`, the command wrote `common/hooks/pre-commit` under `protect: [.git]` and the
// host's `git commit` ran it (da339b0). The common directory is read-only now.
BOOST_DATA_TEST_CASE(a_common_directory_in_the_workspace_is_protected_whole,
                     bdata::make(kCallers) * bdata::make({CommonOf::Remote, CommonOf::Above}),
                     caller, of) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const bool remote = of == CommonOf::Remote;
  const std::string ws = remote ? box.workspace() : box.ws("app");
  const std::string common = ws + "/common";
  if (!remote) box.make_dir(ws);
  box.host_command({kGit, "init", "-q", "--bare", common});
  box.host_command({kGit, "--git-dir=" + common, "config", "core.bare", "false"});
  box.host_command({"/bin/rm", common + "/HEAD"});
  RunSpec spec;
  std::string hook_name;
  if (remote) {
    workspace_repository(box, false);
    const std::string r_git = box.base() + "/srv/r.git";
    box.make_dir(box.base() + "/srv");
    box.make_dir(r_git);
    box.write_file(r_git + "/HEAD", "ref: refs/heads/main\n");
    box.write_file(r_git + "/commondir", common + "\n");
    box.host_command({kGit, "-C", box.workspace(), "remote", "add", "origin", r_git});
    hook_name = "post-receive";
  } else {
    box.make_dir(ws + "/gd");
    box.write_file(ws + "/gd/HEAD", "ref: refs/heads/main\n");
    box.write_file(ws + "/gd/commondir", "../common\n");
    box.write_file(box.ws(".git"), "gitdir: app/gd\n");
    commit_empty(box, box.workspace(), "i");
    spec.options = {"--policy", box.write_policy("git.yaml", policy("  protect: [.git]\n")),
                    "--workspace", ws};
    spec.cwd = ws;
    hook_name = "pre-commit";
  }
  spec.command = {
      "/bin/sh", "-c",
      hook("common/hooks/" + hook_name, pwned) + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(common + "/hooks/" + hook_name), r.describe());
  box.host_command({"/bin/sh", "-c",
                    remote ? "cd \"$1\" && git push -q origin HEAD:refs/heads/main >/dev/null "
                             "2>&1; true"
                           : "cd \"$1\" && git -c user.name=t -c user.email=t@t.test commit -q "
                             "--allow-empty -m x >/dev/null 2>&1; true",
                    "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

// Which file of the repository above the workspace `app` has a hard link in it (A24-7).
enum class LinkedAbove {
  GitFile,  // `.git`, a file naming a separate git directory, at `app/gitfile`
  Hook,     // `.git/hooks/pre-commit` at `app/scripts/pre-commit`
  Config,   // `.git/config` at `app/cfg`
};
std::ostream& operator<<(std::ostream& os, LinkedAbove l) {
  switch (l) {
    case LinkedAbove::GitFile:
      return os << "its .git file";
    case LinkedAbove::Hook:
      return os << "a hook";
    case LinkedAbove::Config:
      return os << "its config";
  }
  return os;
}

// A24-7: the hard-link aliases of protected files were looked for among the paths protected
// in a writable root only; those zpolicy protects outside every writable root (the
// repository above's `.git` file, git directory, config and hooks) were not matched, and the
// `.git` file above was not protected at all where it lies outside. With the workspace
// `app` of the default-policy run holding a hard link of the repository above's
// `.git/hooks/pre-commit` (a tracked script, `ln scripts/pre-commit ../.git/hooks/`), of
// its `.git/config`, or of its `.git` file, the command rewrote the hook (the host's `git
// commit` ran it), appended `core.hooksPath` to the config, or pointed the `.git` file at a
// git directory of its own (da339b0). Each other name is read-only now.
BOOST_DATA_TEST_CASE(a_hard_link_of_a_file_of_the_repository_above_is_protected,
                     bdata::make(kCallers) * bdata::make({LinkedAbove::GitFile, LinkedAbove::Hook,
                                                          LinkedAbove::Config}),
                     caller, linked) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), app = box.ws("app");
  box.make_dir(app);
  const std::string gitdir = workspace_repository(box, linked == LinkedAbove::GitFile);
  std::string original, alias, script;
  switch (linked) {
    case LinkedAbove::GitFile:
      original = box.ws(".git");
      alias = app + "/gitfile";
      script = "git init -q --bare evil && git --git-dir=evil config core.bare false && " +
               hook("evil/hooks/pre-commit", pwned) + " && printf 'gitdir: app/evil\\n' > gitfile";
      break;
    case LinkedAbove::Hook:
      box.make_dir(app + "/scripts");
      box.write_file(app + "/scripts/pre-commit", "#!/bin/sh\nexit 0\n", 0755);
      original = gitdir + "/hooks/pre-commit";
      alias = app + "/scripts/pre-commit";
      BOOST_TEST_REQUIRE(link(alias.c_str(), original.c_str()) == 0);
      script = hook("scripts/pre-commit", pwned);
      break;
    case LinkedAbove::Config:
      original = gitdir + "/config";
      alias = app + "/cfg";
      script = "mkdir -p h && " + hook("h/pre-commit", pwned) +
               " && printf '[core]\\n\\thooksPath = " + app + "/h\\n' >> cfg";
      break;
  }
  if (linked != LinkedAbove::Hook) BOOST_TEST_REQUIRE(link(original.c_str(), alias.c_str()) == 0);
  const std::string before = read_file(original).value_or("<none>");
  RunSpec spec;
  spec.options = {"--workspace", app};
  spec.cwd = app;
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(read_file(original).value_or("<none>") == before, r.describe());
  commit_empty(box, box.workspace(), "x");
  BOOST_TEST(!exists(pwned), r.describe());
}

// A24-8: a linked worktree of the workspace's repository inside the workspace (`git worktree
// add WS/wt`) has a `.git` file that git's own administrative directory records (`gitdir`),
// as an index records a populated submodule's `.git` (A16-6, protected under every policy);
// only `**/.git` protected it. Under `protect: [.git]`, the command made `evil` a git
// directory with a pre-commit hook and pointed `wt/.git` at it, exit 0, and the host's `git
// commit` in `wt` ran the hook (da339b0). It is protected now: the write fails.
BOOST_DATA_TEST_CASE(a_linked_worktrees_git_file_in_the_workspace_is_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), wt = box.ws("wt");
  workspace_repository(box, false);
  box.host_command({kGit, "-C", box.workspace(), "worktree", "add", "-q", wt});
  const std::string before = read_file(wt + "/.git").value_or("<none>");
  RunSpec spec;
  spec.options = {"--policy", box.write_policy("git.yaml", policy("  protect: [.git]\n"))};
  spec.command = {"/bin/sh", "-c",
                  "git init -q --bare evil && git --git-dir=evil config core.bare false && " +
                      hook("evil/hooks/pre-commit", pwned) + " && printf 'gitdir: " +
                      box.ws("evil") + "\\n' > wt/.git && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(read_file(wt + "/.git").value_or("<none>") == before, r.describe());
  commit_empty(box, wt, "w");
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
