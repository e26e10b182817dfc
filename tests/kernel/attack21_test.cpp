#include <sys/stat.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <map>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "build_link_race.hpp"
#include "sandbox_fixture.hpp"

// Attack 21 (docs/redteam-2026-12.md "Attack 21 (attack21)"): session 20's refusal of a
// writable root whose way crosses a symlink in the workspace (N20-1, N20-3), the bound
// artifacts' reading of `${` (H17-10) and N20-2's refusal, attacked with the real bwrap and
// kernel as root and as uid 65534. Each case is a finding's reproduction or a pin of what
// held, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack21)

namespace {

// How the host's own link reaches the workspace's `build`, which an earlier run planted
// as a link to the victim: an absolute target, a relative one with `..`, or two links
// (`${HOME}/.cache -> BASE/host/hop`, `hop -> ../ws/build`).
enum class HostLink { Absolute, Relative, TwoHops };
std::ostream& operator<<(std::ostream& os, HostLink l) {
  return os << (l == HostLink::Absolute   ? "absolute"
                : l == HostLink::Relative ? "relative"
                                          : "two hops via ${HOME}");
}
const std::vector<HostLink> kHostLinks{HostLink::Absolute, HostLink::Relative,
                                       HostLink::TwoHops};

std::string policy_writing(const std::string& root, const std::string& protect = ".git, .env") {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n  write: [\"" + root +
         "\"]\n  protect: [" + protect + "]\nnetwork: none\n";
}

}  // namespace

// A21-1: the way to a writable root passes a link of the host's outside the workspace
// whose target goes through the workspace (`BASE/host/cache -> WS/build`), and an earlier
// run under the default policy made `WS/build` a link to the victim. Resolution followed
// the host's link with realpath(), which followed the planted one unseen: the root became
// `victim/out`, and the command overwrote `victim/out/file` (exit 0, no finding; root and
// nobody). Every link a target crosses is judged now: refused (exit 2), the victim
// unchanged; over a real `build` the same policy runs.
BOOST_DATA_TEST_CASE(a_host_link_into_the_workspace_never_carries_a_root_through_a_planted_link,
                     bdata::make(kCallers) * bdata::make(kHostLinks), caller, how) {
  Sandbox box(caller);
  const Victim victim(box);
  const std::string host = host_dir(box);
  std::string root;
  std::string named;  // the root as the command names it
  if (how == HostLink::TwoHops) {
    host_link(box, "../ws/build", host + "/hop");
    host_link(box, host + "/hop", box.home() + "/.cache");
    root = "${HOME}/.cache/out";
    named = box.home() + "/.cache/out";
  } else {
    host_link(box, how == HostLink::Absolute ? box.ws("build") : "../ws/build", host + "/cache");
    root = host + "/cache/out";
    named = root;
  }
  const RunResult first = box.sh("ln -s '" + victim.dir + "' build");
  BOOST_TEST_REQUIRE(first.completed(), first.describe());

  RunSpec spec;
  spec.options = {"--policy", box.write_policy("host-link.yaml", policy_writing(root))};
  const RunResult second = run_script(box, spec, "echo pwned > '" + named + "/file'");
  expect_refused(second, 2, "crosses a symlink inside the workspace ('" + box.ws("build") + "')");
  BOOST_TEST(victim.unchanged());
  BOOST_TEST(victim.file() == "orig\n");

  expect_runs_over_a_real_directory(box, spec, victim, box.ws("build"), named);
}

// A21-1's way raced: another run in the workspace (the default policy) swaps `build` for a
// link to the victim and back as fast as it can, while runs of a policy writing the host's
// `BASE/host/cache/out` (`cache -> WS/build`) start one after another. The links judged
// are those of the walk that gave the root, and the runner binds only the object that
// walk resolved: each run writes the real `build/out` or is refused (2 at resolution, 125
// at the descriptors or placeholders, 3 for a verifier finding, 126 where bwrap met the
// swap at the root's destination in the new root, which the host's `/` shows read-only:
// "Can't mkdir parents … Read-only file system", docs/run.md); the victim is never written.
BOOST_DATA_TEST_CASE(a_host_links_way_swapped_by_another_run_while_runs_start_is_never_followed,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  host_link(box, "../ws/build", host + "/cache");
  const std::string policy =
      box.write_policy("host-link.yaml", policy_writing(host + "/cache/out"));
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c", "echo pwned > '" + host + "/cache/out/file'"};
  race_build_link(box, spec, 20, {0, 2, 3, 125, 126});
}

// A21-2, the same walk for a protected path: `protect: [BASE/host/cfg/secret.env]` with
// the host's `host/cfg -> WS/cfg`, and `WS/cfg` a link to `WS/decoy` that an earlier run
// planted. The protection went to `decoy/secret.env`, and the command replaced `cfg` by a
// directory of its own: the host's `host/cfg/secret.env` read what the sandbox wrote (exit
// 0). Spelled `cfg/secret.env` the policy was refused; now this spelling is too (exit 2),
// and the host's file is unchanged.
BOOST_DATA_TEST_CASE(a_protected_path_through_a_host_link_into_a_planted_link_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  host_link(box, box.ws("cfg"), host + "/cfg");
  const RunResult first =
      box.sh("mkdir decoy && echo orig > decoy/secret.env && ln -s decoy cfg");
  BOOST_TEST_REQUIRE(first.completed(), first.describe());

  const std::string policy = box.write_policy(
      "protect-host-link.yaml",
      policy_writing("${WORKSPACE}", ".git, \"" + host + "/cfg/secret.env\""));
  RunSpec spec;
  spec.options = {"--policy", policy};
  const RunResult second =
      run_script(box, spec, "rm cfg && mkdir cfg && echo evil > cfg/secret.env");
  expect_refused(second, 2, "crosses a symlink inside a writable root ('" + box.ws("cfg") + "')");
  BOOST_TEST(read_file(host + "/cfg/secret.env").value_or("<missing>") == "orig\n");
}

// A21-3: a readable root whose way crosses a link in the workspace. `read: [/usr, …,
// "${WORKSPACE}/docs"]` (the host otherwise unreadable), after a run under the default
// policy made `docs` a link to a secret directory: the run bound the link's target
// readable and the command read it (exit 0), in read-only and in workspace-write (writing
// only `WS/out`). Refused now (exit 2), nothing read; over a real `docs` the policy runs
// and the secret directory stays unreadable.
BOOST_DATA_TEST_CASE(a_readable_root_through_a_link_planted_in_the_workspace_is_refused,
                     bdata::make(kCallers) * bdata::make(std::vector<int>{0, 1}), caller, writes) {
  Sandbox box(caller);
  const std::string secret = box.base() + "/secret";
  box.write_file(secret + "/key", "TOPSECRET\n");
  box.make_dir(box.ws("out"));
  const RunResult first = box.sh("ln -s '" + secret + "' docs");
  BOOST_TEST_REQUIRE(first.completed(), first.describe());

  const std::string policy = box.write_policy(
      "narrow-read.yaml",
      std::string("zpolicy: 1\nmode: ") + (writes ? "workspace-write" : "read-only") +
          "\nfilesystem:\n  read: [/usr, /bin, /lib, /lib64, /etc, \"${WORKSPACE}/docs\"]\n" +
          (writes ? "  write: [\"${WORKSPACE}/out\"]\n" : "") + "network: none\n");
  RunSpec spec;
  spec.options = {"--policy", policy};
  const RunResult second = run_script(box, spec, "cat docs/key; cat '" + secret + "/key'");
  expect_refused(second, 2,
                 "readable root '" + box.ws("docs") + "' crosses a symlink inside the workspace");
  BOOST_TEST(second.out.find("TOPSECRET") == std::string::npos, second.describe());

  box.host_command({"/bin/rm", box.ws("docs")});
  box.write_file(box.ws("docs/readme"), "docs\n");
  const RunResult control = run_script(box, spec, "cat docs/readme; cat '" + secret + "/key'");
  BOOST_TEST(control.completed(), control.describe());
  BOOST_TEST(control.out.find("docs") != std::string::npos, control.describe());
  BOOST_TEST(control.out.find("TOPSECRET") == std::string::npos, control.describe());
}

// N20-2: a writable root inside a deny root. Refused by the verifier before (exit 3, "malformed
// artifact … --remount-ro"), or run with the deny winning (an inner root alone). Now the
// deny wins in every spelling (the root is not mounted; docs/decisions.md "Deny masks"): the
// deny root the policy's own (`W/sec`), nested deeper (`deny: [W/a]`, `write: [W,
// W/a/b/sec/out]`), a pattern's match (`${WORKSPACE}/**/sec`), the inner root alone (`write:
// [W/sec/out]`). The run works; the secret is neither read nor written.
BOOST_DATA_TEST_CASE(a_writable_root_inside_a_deny_root_is_denied_in_every_spelling,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const std::string& dir : {std::string("sec"), std::string("a/b/sec")}) {
    box.write_file(box.ws(dir + "/k"), "SECRET\n");
    box.make_dir(box.ws(dir + "/out"));
  }
  struct Spelling {
    std::string write, deny, dir;
  };
  const std::vector<Spelling> spellings{
      {"\"${WORKSPACE}\", \"${WORKSPACE}/sec/out\"", "\"${WORKSPACE}/sec\"", "sec"},
      {"\"${WORKSPACE}\", \"${WORKSPACE}/a/b/sec/out\"", "\"${WORKSPACE}/a\"", "a/b/sec"},
      {"\"${WORKSPACE}\", \"${WORKSPACE}/sec/out\"", "\"${WORKSPACE}/**/sec\"", "sec"},
      {"\"${WORKSPACE}/sec/out\"", "\"${WORKSPACE}/sec\"", "sec"}};
  const std::string before = snapshot(box.workspace());
  for (const auto& s : spellings) {
    const std::string policy = box.write_policy(
        "deny-holds-root.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
                                "  write: [" + s.write + "]\n  deny: [" + s.deny +
                                    "]\nnetwork: none\n");
    RunSpec spec;
    spec.options = {"--policy", policy};
    const RunResult r = run_script(box, spec, "cat " + s.dir + "/k; echo x > " + s.dir + "/out/f");
    BOOST_TEST(r.exit_code == 0, s.write << " " << s.deny << "\n" << r.describe());
    BOOST_TEST(r.out.find("SECRET") == std::string::npos, r.describe());
    BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
    BOOST_TEST(snapshot(box.workspace()) == before, s.deny);
  }
}

// H17-10's class, pinned: workspaces whose names hold what the artifacts or the analyzer
// could misread (a quote, a backslash, bytes that are no UTF-8, a name spelled like a
// variable, `,` and `:`, leading and trailing spaces) run, and what the policy protects or
// denies there holds: `.git/config` read-only (EROFS, unchanged), the deny root unreadable.
BOOST_DATA_TEST_CASE(odd_workspace_names_run_and_keep_their_protections,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy(
      "odd.yaml", workspace_write_policy(
                      "[\"/\"]", "  protect: [.git]\n  deny: [\"${WORKSPACE}/sec\"]\n"));
  for (const std::string name : {"q\"uote", "back\\slash", "non\xff\xfeutf8", "${WORKSPACE}",
                                 "${HOME}x", "a,b:c=d", " lead", "trail "}) {
    const std::string ws = box.ws(name);
    box.write_file(ws + "/sec/k", "SECRET\n");
    box.write_file(ws + "/.git/config", "[core]\n");
    RunSpec spec;
    spec.options = {"--policy", policy};
    spec.cwd = ws;
    const RunResult r =
        run_script(box, spec, "cat sec/k; echo x >> .git/config || echo git-refused; echo w > ok");
    BOOST_TEST(r.completed(), name << "\n" << r.describe());
    BOOST_TEST(r.out.find("SECRET") == std::string::npos, name << "\n" << r.describe());
    BOOST_TEST(r.out.find("git-refused") != std::string::npos, name << "\n" << r.describe());
    BOOST_TEST(r.err.find("Read-only file system") != std::string::npos, name);
    BOOST_TEST(read_file(ws + "/.git/config").value_or("<missing>") == "[core]\n", name);
    BOOST_TEST(read_file(ws + "/ok").value_or("<missing>") == "w\n", name);
  }
}

// A21B-1: the host bind-mounts a directory of its own into the workspace (`mount --bind
// BASE/srv WS/mnt`); a run under the default policy writes the workspace, the mount
// included, and plants `WS/mnt/l -> victim`. A policy naming the root by the mount's
// other name, `write: [BASE/srv/l/out]` (or reading `BASE/srv/l`), crossed a link whose
// directory, compared as a string, lay outside the workspace: the run bound the victim
// and the command overwrote it (exit 0). A link's directory is judged under every name the
// host's mounts give it now: refused (exit 2) naming both names, the victim unchanged; over
// a real directory the same policy runs.
BOOST_DATA_TEST_CASE(a_link_planted_through_a_host_bind_mount_in_the_workspace_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const Victim victim(box);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  plant(box, "ln -s '" + victim.dir + "' mnt/l", bind.prefix);
  BOOST_TEST_REQUIRE(is_symlink(src + "/l"));

  const std::string named = "('" + src + "/l', which the host's mounts also show as '" +
                            box.ws("mnt/l") + "')";
  RunSpec spec;
  spec.root_prefix = bind.prefix;
  spec.options = {"--policy", box.write_policy("write.yaml", policy_writing(src + "/l/out"))};
  const RunResult write = run_script(
      box, spec, "echo pwned > '" + victim.dir + "/out/file'; echo pwned > '" + src + "/l/out/file'");
  expect_refused(write, 2,
                 "writable root '" + src + "/l/out' crosses a symlink inside the workspace " + named);

  RunSpec read;
  read.root_prefix = bind.prefix;
  read.options = {"--policy",
                  box.write_policy("read.yaml",
                                   "zpolicy: 1\nmode: read-only\nfilesystem:\n  read: [/usr, "
                                   "/lib, /lib64, /bin, /etc, \"" +
                                       src + "/l\"]\nnetwork: none\n")};
  const RunResult reading =
      run_script(box, read, "cat '" + victim.dir + "/out/file' '" + src + "/l/out/file'");
  BOOST_TEST(reading.exit_code == 2, reading.describe());
  BOOST_TEST(reading.out.find("orig") == std::string::npos, reading.describe());
  BOOST_TEST(reading.err.find("readable root '" + src + "/l' crosses a symlink inside the " +
                              "workspace " + named) != std::string::npos,
             reading.describe());
  BOOST_TEST(victim.unchanged());
  BOOST_TEST(victim.file() == "orig\n");

  expect_runs_over_a_real_directory(box, spec, victim, src + "/l", src + "/l/out");
}

// A21B-2: a protected path no writable root holds by name, `protect: [BASE/srv/secret.env]`,
// while the host's `mount --bind BASE/srv WS/mnt` shows it in the writable workspace: only
// the names of protected paths inside writable roots were looked up in the mount table, so
// the command rewrote `WS/mnt/secret.env` (exit 0). Its other names are protected too now:
// the write fails, the file is unchanged; the rest of the mount stays writable.
BOOST_DATA_TEST_CASE(a_protected_path_shown_in_the_workspace_by_a_host_bind_mount_is_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  box.write_file(src + "/secret.env", "orig\n");
  RunSpec spec;
  spec.root_prefix = bind.prefix;
  spec.options = {"--policy",
                  box.write_policy("protect.yaml",
                                   policy_writing("${WORKSPACE}", ".git, .env, \"" + src +
                                                                      "/secret.env\", \"" +
                                                                      src + "/new/key\""))};
  const RunResult r = run_script(box, spec,
                                 "echo evil > mnt/secret.env || echo refused; mkdir -p mnt/new; "
                                 "echo evil > mnt/new/key || echo refused-new; echo mine > mnt/other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(src + "/secret.env").value_or("<missing>") == "orig\n", r.describe());
  BOOST_TEST(r.out.find("refused-new") != std::string::npos, r.describe());
  BOOST_TEST(!read_file(src + "/new/key"), r.describe());
  BOOST_TEST(read_file(src + "/other").value_or("<missing>") == "mine\n", r.describe());
}

// A21B-3: A21-2 through the host's bind mount. `protect: [BASE/srv/cfg/secret.env]`, no
// writable root holding `BASE/srv` by name, while `mount --bind BASE/srv WS/mnt` shows it
// in the workspace and a run under the default policy planted `WS/mnt/cfg -> decoy`: the
// walk followed `BASE/srv/cfg` (outside every writable root as a string), the protection
// went to `WS/decoy/secret.env`, and the command replaced the link by a directory of its
// own and wrote the host's `BASE/srv/cfg/secret.env` (exit 0). A link under any name the
// host's mounts give a writable root stops the walk now: refused, exit 2.
BOOST_DATA_TEST_CASE(a_protected_path_through_a_link_planted_via_a_host_bind_mount_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  plant(box,
        "mkdir decoy && echo orig > decoy/secret.env && ln -s '" + box.ws("decoy") + "' mnt/cfg",
        bind.prefix);

  RunSpec spec;
  spec.root_prefix = bind.prefix;
  spec.options = {"--policy",
                  box.write_policy("protect.yaml",
                                   policy_writing("${WORKSPACE}", ".git, .env, \"" + src +
                                                                      "/cfg/secret.env\""))};
  const RunResult r =
      run_script(box, spec, "rm mnt/cfg; mkdir mnt/cfg; echo evil > mnt/cfg/secret.env");
  expect_refused(r, 2,
                 "protected path '" + src + "/cfg/secret.env' crosses a symlink inside a "
                 "writable root ('" + src + "/cfg')");
  BOOST_TEST(is_symlink(src + "/cfg"), r.describe());
  BOOST_TEST(read_file(box.ws("decoy/secret.env")).value_or("<missing>") == "orig\n");
}

// A21C-1: A21B-2 for a pattern. `protect: ["BASE/srv/*.env"]`, no writable root holding
// `BASE/srv` by name, while the host's `mount --bind BASE/srv WS/mnt` shows it in the
// workspace: the pattern walk entered only directories below or above a writable root by
// name, matched nothing, and the command rewrote `WS/mnt/secret.env` (exit 0). The walk
// takes the writable roots' mount aliases as roots now: the match is protected under
// each name, the write fails, the file is unchanged; the rest of the mount stays writable.
BOOST_DATA_TEST_CASE(a_protect_pattern_shown_in_the_workspace_by_a_host_bind_mount_is_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  box.write_file(src + "/secret.env", "orig\n");
  RunSpec spec;
  spec.root_prefix = bind.prefix;
  spec.options = {"--policy", box.write_policy("protect.yaml",
                                               policy_writing("${WORKSPACE}", ".git, .env, \"" +
                                                                                  src + "/*.env\""))};
  const RunResult r =
      run_script(box, spec, "echo evil > mnt/secret.env || echo refused; echo mine > mnt/other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(src + "/secret.env").value_or("<missing>") == "orig\n", r.describe());
  BOOST_TEST(read_file(src + "/other").value_or("<missing>") == "mine\n", r.describe());
}

// A21C-2: a protected file the caller cannot look at, `protect: ["BASE/priv/secret.env"]`
// in a directory only root may search (the file itself writable by all), which the host's
// `mount --bind BASE/priv/secret.env WS/secret.env` shows in the workspace. As uid 65534
// resolution took it for missing, its deepest directory has no other name, and the
// command rewrote it through `WS/secret.env` (exit 0). The mount table names the mount's
// root by itself now: protected, the write fails, the file unchanged (root and nobody).
BOOST_DATA_TEST_CASE(a_protected_file_the_caller_cannot_see_bound_into_the_workspace_is_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string priv = box.base() + "/priv";
  root_dir(priv, 0700);
  root_file(priv + "/secret.env", "orig\n", 0666);
  box.write_file(box.ws("secret.env"), "");
  RunSpec spec;
  spec.root_prefix = host_bind_mount(priv + "/secret.env", box.ws("secret.env"));
  spec.options = {"--policy",
                  box.write_policy("protect.yaml",
                                   policy_writing("${WORKSPACE}",
                                                  ".git, .env, \"" + priv + "/secret.env\""))};
  const RunResult r = run_script(box, spec, "echo evil > secret.env || echo refused");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(priv + "/secret.env").value_or("<missing>") == "orig\n", r.describe());
}

// A21C-3: a missing protected path under another name of its directory in a writable
// root. The host's `mount --bind WS WS/up` shows the workspace at `WS/up` too; `.git` did
// not exist, so its placeholder was made at `WS/.git` alone, and the command planted
// `up/.git/hooks/pre-commit` and `up/.git/config`, which the host's next git command in
// the workspace runs and reads (exit 0). The other names of a missing protected path's
// deepest existing directory get placeholders too now: both writes fail; the rest of the
// workspace stays writable under both names.
BOOST_DATA_TEST_CASE(a_missing_git_under_a_host_bind_of_the_workspace_into_itself_is_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("up"));
  RunSpec spec;
  spec.root_prefix = host_bind_mount(box.workspace(), box.ws("up"));
  spec.options = {"--policy", box.write_policy("protect.yaml", policy_writing("${WORKSPACE}"))};
  const RunResult r = run_script(box, spec,
                                 "mkdir -p up/.git/hooks && echo evil > up/.git/hooks/pre-commit "
                                 "|| echo refused; echo '[core]' > up/.git/config || echo "
                                 "refused-config; echo mine > up/other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused\n") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("refused-config") != std::string::npos, r.describe());
  // Not "nothing at .git": a placeholder another live run shares outlives this run.
  BOOST_TEST(!read_file(box.ws(".git/hooks/pre-commit")), r.describe());
  BOOST_TEST(!read_file(box.ws(".git/config")), r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A21C-4: A21B-3 for what git's configuration names. The host's `mount --bind BASE/srv
// WS/mnt`; a run under the default policy planted `WS/mnt/hooks -> decoy`; then the host
// set `core.hooksPath` to `BASE/srv/hooks`. The walk of git's targets guarded with the
// writable roots' own names: it followed the link, the protection went to `decoy`, and
// the command replaced the link by a directory holding a `pre-commit` of its own, which
// the host's next commit runs (exit 0). Every name the host's mounts give a writable root
// guards those walks now: refused, exit 2, the link left as it was.
BOOST_DATA_TEST_CASE(a_git_hooks_path_through_a_link_planted_via_a_host_bind_mount_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  git_init(box);
  plant(box, "mkdir decoy && ln -s '" + box.ws("decoy") + "' mnt/hooks", bind.prefix);
  box.host_command(
      {"/usr/bin/git", "-C", box.workspace(), "config", "core.hooksPath", src + "/hooks"});

  RunSpec spec;
  spec.root_prefix = bind.prefix;
  spec.options = {"--policy", box.write_policy("protect.yaml", policy_writing("${WORKSPACE}"))};
  const RunResult r = run_script(
      box, spec, "rm mnt/hooks; mkdir mnt/hooks; echo 'echo pwned' > mnt/hooks/pre-commit");
  expect_refused(r, 2,
                 "core.hookspath names '" + src + "/hooks', which passes through the symlink '" +
                     src + "/hooks' in a writable root");
  BOOST_TEST(is_symlink(src + "/hooks"), r.describe());
  BOOST_TEST(!read_file(box.ws("decoy/pre-commit")), r.describe());
}

// A21C-5: A21C-3 for a deny root. `deny: ["WS/ddir"]`, missing, with the host's `mount
// --bind WS WS/up`: its placeholder was masked at `WS/ddir` alone, the command wrote
// `up/ddir/x`, and the placeholder was left on the host holding it (exit 0). The other
// names of a missing deny root's directory in a writable root are deny roots too now:
// the write fails; the rest of the workspace stays writable.
BOOST_DATA_TEST_CASE(a_missing_deny_root_under_a_host_bind_of_the_workspace_into_itself_is_denied,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("up"));
  RunSpec spec;
  spec.root_prefix = host_bind_mount(box.workspace(), box.ws("up"));
  spec.options = {"--policy", box.write_policy("deny.yaml", workspace_write_policy(
                                                              "[\"/\"]", "  protect: [.git, .env]\n"
                                                                         "  deny: [\"" +
                                                                             box.ws("ddir") + "\"]\n"))};
  const RunResult r =
      run_script(box, spec, "echo evil > up/ddir/x || echo refused; echo mine > up/other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  // Not "nothing at ddir": a placeholder another live run shares outlives this run.
  BOOST_TEST(!read_file(box.ws("ddir/x")), r.describe());
  struct stat st;
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());

  // A missing deny root outside every writable root, `BASE/srv/new` with the host's
  // `mount --bind BASE/srv WS/mnt`, gets no placeholder there (it would create the deny
  // root on the host, which the runner watches). The run worked, and the watch stopped the
  // sandbox that created it only after it could write there (red team A22C-3): refused
  // before anything runs now, nothing written.
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  RunSpec outside;
  outside.root_prefix = bind.prefix;
  outside.options = {"--policy", box.write_policy("deny-outside.yaml",
                                                  workspace_write_policy(
                                                      "[\"/\"]", "  protect: [.git, .env]\n  deny: [\"" +
                                                                     src + "/new\"]\n"))};
  const RunResult refused = run_script(box, outside, "echo mine > mnt/other");
  BOOST_TEST(refused.exit_code == 2, refused.describe());
  BOOST_TEST(refused.err.find("deny root '" + src + "/new' does not exist") != std::string::npos,
             refused.describe());
  BOOST_TEST(!read_file(src + "/other"), refused.describe());
  BOOST_TEST(lstat((src + "/new").c_str(), &st) != 0, refused.describe());
}

// A21B-4: a writable root spelled through 36 links (`BASE/h/lN -> .`), then a chain of six
// (`c5 -> c4`, …, `c0 -> WS/build`) into `build`, which an earlier run planted as a link to
// the victim: 43 links, more than the kernel follows in one lookup. The walk stopped
// counting at the fifth of the chain and spelled the rest from that link, unjudged; a
// separate `stat()` followed it afresh with a count of its own and found a directory, so
// resolution accepted the root and only the runner's bind by descriptor refused it (125).
// The walk alone judges now: refused at resolution (exit 2, `run` and `compile`), with the
// limit named, nothing run, the victim unchanged. Under the limit (30 links and the chain
// into a real `build`) the same layout runs.
BOOST_DATA_TEST_CASE(a_root_past_the_kernels_link_limit_is_refused_before_anything_runs,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const Victim victim(box);
  const std::string h = box.base() + "/h";
  box.make_dir(h);
  for (int i = 1; i <= 36; ++i) host_link(box, ".", h + "/l" + std::to_string(i));
  host_link(box, box.ws("build"), h + "/c0");
  for (int i = 1; i <= 5; ++i)
    host_link(box, "c" + std::to_string(i - 1), h + "/c" + std::to_string(i));
  const RunResult first = box.sh("ln -s '" + victim.dir + "' build");
  BOOST_TEST_REQUIRE(first.completed(), first.describe());
  auto through = [&](int links) {
    std::string root = h;
    for (int i = 1; i <= links; ++i) root += "/l" + std::to_string(i);
    return root + "/c5/out";
  };

  const std::string root = through(36);
  const std::string policy = box.write_policy("many-links.yaml", policy_writing(root));
  const std::string refusal = "writable root '" + root + "' crosses more than 40 symlinks";
  RunSpec spec;
  spec.options = {"--policy", policy};
  const RunResult run = run_script(
      box, spec, "echo pwned > '" + victim.dir + "/out/file'; echo pwned > '" + root + "/file'");
  expect_refused(run, 2, refusal);
  const RunResult compiled = box.host_command(
      {"/bin/sh", "-c",
       "\"$0\" compile \"$1\" --target linux --workspace \"$2\"; echo \"status=$?\"",
       zpolicy_binary(), policy, box.workspace()});
  BOOST_TEST(compiled.out.find("status=2") != std::string::npos, compiled.describe());
  BOOST_TEST(compiled.err.find(refusal) != std::string::npos, compiled.describe());
  BOOST_TEST(victim.unchanged());
  BOOST_TEST(victim.file() == "orig\n");

  const std::string near = through(30);
  RunSpec control;
  control.options = {"--policy", box.write_policy("fewer-links.yaml", policy_writing(near))};
  expect_runs_over_a_real_directory(box, control, victim, box.ws("build"), near);
}

// A21B-5: a workspace that is a deny root is ZP016's refusal (exit 3, before resolution),
// whether the workspace is the deny root by name (`cd BASE/srv`, `deny: [BASE/srv]`) or
// by another name the host's mounts give it (`mount --bind BASE/srv WS/mnt`, `cd WS/mnt`):
// resolution masks that name as the deny root too (A11-3), and the run was refused only
// by the verifier, "malformed-artifact: … remounts a writable bind's root only". Now the
// lint names the alias; nothing runs, nothing is read or written.
BOOST_DATA_TEST_CASE(a_workspace_that_is_a_deny_root_by_name_or_by_a_host_mount_is_zp016,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  box.write_file(src + "/secret", "secret-data\n");
  const std::string policy = box.write_policy(
      "deny-srv.yaml",
      workspace_write_policy("[\"/\"]", "  protect: [.git, .env]\n  deny: [\"" + src + "\"]\n"));
  const std::string before = snapshot(src);
  auto attempt = [&](const std::string& workspace, const std::vector<std::string>& prefix) {
    RunSpec spec;
    spec.root_prefix = prefix;
    spec.cwd = workspace;
    spec.options = {"--policy", policy};
    return run_script(box, spec, "cat secret; echo pwned > written");
  };

  const RunResult by_name = attempt(src, {});
  BOOST_TEST(by_name.exit_code == 3, by_name.describe());
  BOOST_TEST(by_name.err.find("the workspace ('" + src + "') lies in deny root '" + src + "'") !=
                 std::string::npos,
             by_name.describe());

  const RunResult by_alias = attempt(box.ws("mnt"), bind.prefix);
  BOOST_TEST(by_alias.exit_code == 3, by_alias.describe());
  BOOST_TEST(by_alias.err.find("the workspace ('" + box.ws("mnt") + "') is deny root '" + src +
                               "' by another name (a bind mount of it: the host's mounts show '" +
                               src + "' at '" + box.ws("mnt") + "')") != std::string::npos,
             by_alias.describe());
  BOOST_TEST(by_alias.err.find("ZP016") != std::string::npos, by_alias.describe());
  BOOST_TEST(by_alias.err.find("malformed-artifact") == std::string::npos, by_alias.describe());

  for (const RunResult* r : {&by_name, &by_alias}) {
    BOOST_TEST(r->out.find(kDoneMarker) == std::string::npos, r->describe());
    BOOST_TEST(r->out.find("secret-data") == std::string::npos, r->describe());
  }
  BOOST_TEST(snapshot(src) == before);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
