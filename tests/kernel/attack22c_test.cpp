#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Attack 22c (docs/redteam-2026-12.md "Attack 22c (attack22c)"): attack 22's fixes in
// compiler/resolve/resolve.cpp (A22-1's dangling host links, A22-3's deny roots the caller
// cannot see) attacked with the real bwrap and kernel as root and as uid 65534. Each case
// is a finding's reproduction, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack22c)

namespace {

// How uid 65534 fails to look at `BASE/priv/WHAT`: `BASE/priv` root's 0700, so WHAT cannot
// be stat'ed (A22-3's case); or `BASE/priv` 0711 and WHAT root's 0700, so WHAT can be
// stat'ed but not searched, and nothing below it looked at.
enum class Unseen { CannotStat, CannotSearch };
std::ostream& operator<<(std::ostream& os, Unseen u) {
  return os << (u == Unseen::CannotStat ? "cannot stat" : "can stat, cannot search");
}
const std::vector<Unseen> kUnseen{Unseen::CannotStat, Unseen::CannotSearch};

// `BASE/priv/WHAT/sub` (0755) as `unseen` says.
void make_private(Sandbox& box, const std::string& what, Unseen unseen) {
  const std::string priv = box.base() + "/priv";
  const bool stat = unseen == Unseen::CannotSearch;
  root_dir(priv, stat ? 0711 : 0700);
  root_dir(priv + "/" + what, stat ? 0700 : 0755);
  root_dir(priv + "/" + what + "/sub", 0755);
}

// Where the kernel would create a missing deny root outside every writable root by name:
// through the host's dangling link into the workspace, through one into a host directory
// the host's `mount --bind BASE/srv WS/mnt` shows there, or at its own name in that
// directory.
enum class DenyWay { LinkIntoWorkspace, LinkIntoHostBind, InHostBind };
std::ostream& operator<<(std::ostream& os, DenyWay w) {
  switch (w) {
    case DenyWay::LinkIntoWorkspace:
      return os << "dangling link into the workspace";
    case DenyWay::LinkIntoHostBind:
      return os << "dangling link into a host bind mount";
    case DenyWay::InHostBind:
      return os << "in a host bind mount";
  }
  return os;
}
const std::vector<DenyWay> kDenyWays{DenyWay::LinkIntoWorkspace, DenyWay::LinkIntoHostBind,
                                     DenyWay::InHostBind};

}  // namespace

// A22C-1: A22-3's names of a deny root the caller cannot stat were kept only where a mount
// showed the deny root itself. `deny: [BASE/priv/secret]` in root's 0700 `BASE/priv`, with
// the host's `mount --bind BASE/priv/secret/sub WS/mnt` (a part of it), under narrowed read
// roots: uid 65534's command read `mnt/k` (exit 0). A22C-5: the same where the caller can
// stat the deny root (`BASE/priv` 0711) but not search it (`secret` root's 0700): A11-3's
// names were kept only where the part's identity could be compared. Every name the mount
// table gives the deny root or a part the caller cannot look at is masked now; root's
// lookup compared identities and held.
BOOST_DATA_TEST_CASE(a_part_of_a_deny_root_the_caller_cannot_see_bound_into_the_workspace_is_denied,
                     bdata::make(kCallers) * bdata::make(kUnseen), caller, unseen) {
  Sandbox box(caller);
  make_private(box, "secret", unseen);
  const std::string secret = box.base() + "/priv/secret";
  root_file(secret + "/sub/k", "topsecret\n", 0644);
  box.make_dir(box.ws("mnt"));
  RunSpec spec;
  spec.root_prefix = host_bind_mount(secret + "/sub", box.ws("mnt"));
  spec.options = {"--policy",
                  box.write_policy("deny.yaml", workspace_write_policy(
                                                    kNarrowRead, "  deny: [\"" + secret + "\"]\n"))};
  expect_bound_deny_root_unread(box, spec);
}

// A22C-4: A21C-2's names of a protected path the caller cannot stat, the same filter.
// `protect: [BASE/priv/prot]` in root's 0700 `BASE/priv`, `prot/sub` the caller's, with the
// host's `mount --bind BASE/priv/prot/sub WS/mnt`: uid 65534's command wrote `mnt/x`, the
// host's `BASE/priv/prot/sub/x` (exit 0). Where it can stat `prot` but not search it, the
// same through A11-6's identity check (A22C-5). Protected under every name of a part now:
// EROFS.
BOOST_DATA_TEST_CASE(
    a_part_of_a_protected_path_the_caller_cannot_see_bound_into_the_workspace_is_protected,
    bdata::make(kCallers) * bdata::make(kUnseen), caller, unseen) {
  Sandbox box(caller);
  make_private(box, "prot", unseen);
  const std::string prot = box.base() + "/priv/prot";
  BOOST_TEST_REQUIRE(chown((prot + "/sub").c_str(), uid_of(caller), uid_of(caller)) == 0);
  box.make_dir(box.ws("mnt"));
  RunSpec spec;
  spec.root_prefix = host_bind_mount(prot + "/sub", box.ws("mnt"));
  spec.options = {"--policy",
                  box.write_policy("protect.yaml",
                                   workspace_write_policy("[\"/\"]", "  protect: [.git, \"" + prot +
                                                                          "\"]\n"))};
  const RunResult r = run_script(box, spec, "echo evil > mnt/x || echo refused; echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(r.err.find("Read-only file system") != std::string::npos, r.describe());
  BOOST_TEST(!exists(prot + "/sub/x"), r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A22C-2, A22C-3: a missing deny root outside every writable root by name gets no
// placeholder and is only watched (A17B-1), which stops the sandbox once it made the deny
// root, not before it wrote there: the command made it and wrote `authorized_keys`, which
// the host read as `DENY/authorized_keys` (exit 125, root and nobody), through the host's
// dangling link into the workspace (A22-1's way, held in attack 22 for "stopped") or into a
// host bind mount, or at its own name in a host bind mount. Refused before anything runs
// now: exit 2, nothing created.
BOOST_DATA_TEST_CASE(a_missing_deny_root_the_sandbox_could_create_is_refused,
                     bdata::make(kCallers) * bdata::make(kDenyWays), caller, way) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  RunSpec spec;
  std::string denied = host + "/dl", made;
  switch (way) {
    case DenyWay::LinkIntoWorkspace:
      host_link(box, box.ws("new"), denied);
      made = "new";
      break;
    case DenyWay::LinkIntoHostBind:
      host_link(box, src + "/new", denied);
      spec.root_prefix = bind.prefix;
      made = "mnt/new";
      break;
    case DenyWay::InHostBind:
      denied = src + "/new";
      spec.root_prefix = bind.prefix;
      made = "mnt/new";
      break;
  }
  spec.options = {"--policy",
                  box.write_policy("deny.yaml", workspace_write_policy(
                                                    "[\"/\"]", "  deny: [\"" + denied + "\"]\n"))};
  const RunResult r = run_script(
      box, spec, "mkdir " + made + "; echo evil > " + made + "/authorized_keys; sleep 2");
  expect_refused(r, 2, "deny root '" + denied + "' does not exist, and the kernel would create");
  BOOST_TEST(!exists(denied + "/authorized_keys"), r.describe());
  BOOST_TEST(!exists(box.ws("new")), r.describe());
  BOOST_TEST(!exists(src + "/new"), r.describe());
}

// A22C-6: A22-5's walk of a git URL rewrite's base judged one it could not resolve by its
// spelling: `url."BASE/host/h/../h/".insteadOf = https://example.test/` in the workspace's
// `.git/config`, with the host's dangling `BASE/host/h -> WS/l`, has '..' below a missing
// target. The run went on (exit 0); its command made `l` and `h/repo.git`, a bare repository
// with a post-receive hook, which the host's `git push https://example.test/repo.git` ran:
// the kernel follows `h` to `WS/l`, `..` to the workspace. Refused now: exit 2, nothing made.
BOOST_DATA_TEST_CASE(a_git_url_rewrite_with_dot_dot_after_a_dangling_host_link_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  host_link(box, box.ws("l"), host + "/h");
  git_workspace(box, git_rewrite(host + "/h/../h/"));
  const RunResult r =
      box.sh("mkdir l; git init -q --bare h/repo.git && echo evil > h/repo.git/hooks/post-receive");
  expect_refused(r, 2, "rewrites URLs to the local path '" + host + "/h/../h/', which has '..'");
  BOOST_TEST(!exists(box.ws("l")), r.describe());
  BOOST_TEST(!exists(box.ws("h/repo.git")), r.describe());
}

// Where the link a `commondir` is named through lies: in the workspace, or in a host
// directory the host's `mount --bind BASE/srv WS/mnt` shows there.
enum class LinkIn { Workspace, HostBind };
std::ostream& operator<<(std::ostream& os, LinkIn l) {
  return os << (l == LinkIn::Workspace ? "in the workspace" : "in a host bind mount");
}
const std::vector<LinkIn> kLinkIn{LinkIn::Workspace, LinkIn::HostBind};

// A22C-7: the workspace a linked worktree whose git directory, `BASE/adm/wt` (the host's,
// outside), names in `commondir` `L/.git`, where `L` is a link an earlier run planted
// (`WS/x`, or `BASE/srv/x` through the host's bind) to `WS/real`, a repository whose `.git`
// the default policy protects. The common directory's walk was skipped because the name
// it led to was protected already, so the link was never judged: the command re-pointed it
// at `WS/evil`, a repository of its own, and the host's next `git status` in the workspace
// ran `evil`'s `core.fsmonitor` (exit 0). Refused now, exit 2: the link stays, nothing ran.
BOOST_DATA_TEST_CASE(a_commondir_through_a_planted_link_to_a_protected_repository_is_refused,
                     bdata::make(kCallers) * bdata::make(kLinkIn), caller, in) {
  Sandbox box(caller);
  box.host_command({"/usr/bin/git", "init", "-q", box.ws("real")});
  const SrvBind bind = srv_bound_at_mnt(box);
  RunSpec spec;
  std::string link = box.ws("x"), shown = "x";
  if (in == LinkIn::HostBind) {
    link = bind.src + "/x";
    shown = "mnt/x";
    spec.root_prefix = bind.prefix;
  }
  host_link(box, box.ws("real"), link);
  const std::string adm = linked_worktree(box, link + "/.git");
  const RunResult r = run_script(
      box, spec, "git init -q evil && rm " + shown + " && ln -s '" + box.ws("evil") + "' " + shown);
  expect_refused(r, 2, "common git directory named by '" + adm + "/commondir'");
  char target[4096] = {};
  BOOST_TEST(readlink(link.c_str(), target, sizeof target - 1) > 0, r.describe());
  BOOST_TEST(std::string(target) == box.ws("real"), r.describe());
  BOOST_TEST(!exists(box.ws("evil")), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
