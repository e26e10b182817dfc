#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Attack 22 (docs/redteam-2026-12.md "Attack 22 (attack22)"): session 21's host resolution
// (A21C-1..5's lookups of a missing protected path's other names, drop_masked, A21-1's walk
// of a link's target) attacked with the real bwrap and kernel as root and as uid 65534.
// Each case is a finding's reproduction or a pin of what held, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack22)

namespace {

std::string policy_protecting(const std::string& extra) {
  return workspace_write_policy("[\"/\"]", "  protect: [.git, .env, \"" + extra + "\"]\n");
}

// Where the host's dangling link leads: straight into the workspace, or into a host
// directory the host's `mount --bind BASE/srv WS/mnt` shows in the workspace.
enum class LinkInto { Workspace, HostBind };
std::ostream& operator<<(std::ostream& os, LinkInto l) {
  return os << (l == LinkInto::Workspace ? "into the workspace" : "into a host bind mount");
}
const std::vector<LinkInto> kLinkInto{LinkInto::Workspace, LinkInto::HostBind};

// What stands where a protected path needs a directory, in the host directory the bind
// shows: a regular file or a FIFO (the sandbox can remove either through the mount).
enum class Blocker { File, Fifo };
std::ostream& operator<<(std::ostream& os, Blocker b) {
  return os << (b == Blocker::File ? "regular file" : "fifo");
}
const std::vector<Blocker> kBlockers{Blocker::File, Blocker::Fifo};

// What the workspace holds where the host's link leads: a link an earlier run planted to a
// directory outside, or nothing yet.
enum class WorkspaceLink { Planted, Missing };
std::ostream& operator<<(std::ostream& os, WorkspaceLink l) {
  return os << (l == WorkspaceLink::Planted ? "a planted link" : "nothing");
}
const std::vector<WorkspaceLink> kWorkspaceLinks{WorkspaceLink::Planted, WorkspaceLink::Missing};

}  // namespace

// A22-1: `protect: [BASE/host/dl/key]` where the host's `BASE/host/dl` is a dangling link
// to `WS/new` (or to `BASE/srv/new`, shown in the workspace as `WS/mnt/new` by the host's
// bind mount). Resolution spells a missing path from a dangling link, so the protected
// path lay outside every writable root and nothing was protected: the command made
// `new/key`, and the host read "evil" as `BASE/host/dl/key` (exit 0, root and nobody).
// Where the link leads is protected too now: the write fails, the host's name never holds
// what the sandbox wrote; the rest of the workspace stays writable.
BOOST_DATA_TEST_CASE(a_protected_path_named_through_a_dangling_host_link_is_protected,
                     bdata::make(kCallers) * bdata::make(kLinkInto), caller, into) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  const SrvBind bind = srv_bound_at_mnt(box);
  RunSpec spec;
  std::string made;  // where the command makes the file, in the workspace
  if (into == LinkInto::Workspace) {
    host_link(box, box.ws("new"), host + "/dl");
    made = "new";
  } else {
    host_link(box, bind.src + "/new", host + "/dl");
    spec.root_prefix = bind.prefix;
    made = "mnt/new";
  }
  spec.options = {"--policy",
                  box.write_policy("protect.yaml", policy_protecting(host + "/dl/key"))};
  const RunResult r = run_script(
      box, spec, "mkdir -p " + made + "; echo evil > " + made + "/key || echo refused; echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(host + "/dl/key").value_or("<missing>") != "evil\n", r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A22-2: `protect: [BASE/srv/cfg/key]` where `BASE/srv/cfg` is a regular file and the
// host's `mount --bind BASE/srv WS/mnt` shows it in the workspace (a FIFO there held before:
// R17-5 protects every FIFO in a writable root; pinned here too). A21C-3's lookup
// of a missing path's other names stopped at the deepest existing entry, which was no
// directory, and gave none: the command removed `mnt/cfg`, made the directory and wrote
// the host's `BASE/srv/cfg/key` (exit 0, root and nobody). The blocker's name in the
// workspace is protected now, as blocked_way protects one a writable root holds by name:
// it cannot be removed or written, and the key is never made.
BOOST_DATA_TEST_CASE(a_protected_path_blocked_by_a_file_in_a_host_bind_mount_is_protected,
                     bdata::make(kCallers) * bdata::make(kBlockers), caller, blocker) {
  Sandbox box(caller);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  if (blocker == Blocker::File)
    box.write_file(src + "/cfg", "blocker\n");
  else
    box.host_command({"/usr/bin/mkfifo", src + "/cfg"});
  const std::string before = snapshot(src);
  RunSpec spec;
  spec.root_prefix = bind.prefix;
  spec.options = {"--policy",
                  box.write_policy("protect.yaml", policy_protecting(src + "/cfg/key"))};
  const RunResult r = run_script(box, spec,
                                 "rm -f mnt/cfg || echo refused-rm; mkdir mnt/cfg; echo evil > "
                                 "mnt/cfg/key || echo refused; echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused-rm") != std::string::npos, r.describe());
  BOOST_TEST(!exists(src + "/cfg/key"), r.describe());
  BOOST_TEST(snapshot(src) == before, r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A22-3: A21C-2 for a deny root. `deny: [BASE/priv/secret]` where `BASE/priv` is root's
// 0700 and the host's `mount --bind BASE/priv/secret WS/mnt` shows it in the workspace,
// under narrowed read roots (with `/` readable, the watch of `BASE/priv` fails closed,
// exit 125). uid 65534's `lstat` fails with EACCES, so the deny root was taken for missing,
// its other names were never looked up, and the command read `mnt/k` (exit 0); with the
// workspace itself the bind, `k`. Root's lookup succeeds and masked it. Looked up in the
// mount table by name now: unreadable for both callers, the run works.
BOOST_DATA_TEST_CASE(a_deny_root_the_caller_cannot_see_bound_into_the_workspace_is_denied,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string priv = box.base() + "/priv";
  root_dir(priv, 0700);
  root_dir(priv + "/secret", 0755);
  root_file(priv + "/secret/k", "topsecret\n", 0644);
  box.make_dir(box.ws("mnt"));
  RunSpec spec;
  spec.root_prefix = host_bind_mount(priv + "/secret", box.ws("mnt"));
  spec.options = {"--policy", box.write_policy("deny.yaml",
                                               workspace_write_policy(kNarrowRead, "  deny: [\"" + priv +
                                                                                       "/secret\"]\n"))};
  expect_bound_deny_root_unread(box, spec);

  // The workspace itself the host's bind of the deny root: read by uid 65534's sandbox
  // before; refused now for both callers (A21B-5's verifier finding, exit 3).
  RunSpec itself = spec;
  itself.root_prefix = host_bind_mount(priv + "/secret", box.workspace());
  const RunResult w = run_script(box, itself, "cat k");
  BOOST_TEST(w.exit_code == 3, w.describe());
  BOOST_TEST(w.out.find("topsecret") == std::string::npos, w.describe());
  BOOST_TEST(w.out.find(kDoneMarker) == std::string::npos, w.describe());
}

// A22-4: A21C-4 for a `.git` pointer. The host's `mount --bind BASE/srv WS/mnt`; a run
// under the default policy planted `mnt/x -> WS/decoy` (decoy/gd a directory); the host
// then wrote `WS/.git` as a pointer, `gitdir: BASE/srv/x/gd` (a worktree's). The pointer's
// target was walked with the writable roots' own names as guards, so the planted link was
// followed and `decoy/gd` protected; the command replaced `mnt/x` by a directory whose
// `gd/hooks/pre-commit` the host's next `git commit` in the workspace runs (exit 0). Walked
// with every name the host's mounts give the workspace now: refused, exit 2.
BOOST_DATA_TEST_CASE(a_git_pointer_through_a_link_planted_via_a_host_bind_mount_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  box.make_dir(box.ws("decoy/gd/hooks"));
  plant(box, "ln -s '" + box.ws("decoy") + "' mnt/x", bind.prefix);
  box.write_file(box.ws(".git"), "gitdir: " + src + "/x/gd\n");

  RunSpec spec;
  spec.root_prefix = bind.prefix;
  const RunResult r = run_script(
      box, spec,
      "rm mnt/x; mkdir -p mnt/x/gd/hooks; echo evil > mnt/x/gd/hooks/pre-commit");
  expect_refused(r, 2, "crosses a symlink inside a writable root ('" + src + "/x')");
  BOOST_TEST(is_symlink(src + "/x"), r.describe());
  BOOST_TEST(!exists(src + "/x/gd/hooks/pre-commit"), r.describe());
  BOOST_TEST(!exists(box.ws("decoy/gd/hooks/pre-commit")), r.describe());
}

// A22-5: a git URL rewrite to a local path reached through a host link into the workspace:
// `url."BASE/host/h/".insteadOf = https://example.test/` in the workspace's `.git/config`,
// with the host's `BASE/host/h -> WS/l`. The base was canonicalized following every link,
// so `l`, a link an earlier run planted to `BASE/elsewhere`, made it a path outside every
// writable root; and with `l` missing, the base was spelled from the host's link. Either
// way the run went on (exit 0), and the command made `l/repo.git` a bare repository of its
// own, whose post-receive hook the host's `git push https://example.test/repo.git` ran.
// Walked with the guards and a dangling link's target now: refused, exit 2.
BOOST_DATA_TEST_CASE(a_git_url_rewrite_through_a_host_link_into_the_workspace_is_refused,
                     bdata::make(kCallers) * bdata::make(kWorkspaceLinks), caller, l) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  box.make_dir(box.base() + "/elsewhere");
  host_link(box, box.ws("l"), host + "/h");
  git_init(box);
  if (l == WorkspaceLink::Planted) {
    const RunResult first = box.sh("ln -s '" + box.base() + "/elsewhere' l");
    BOOST_TEST_REQUIRE(first.completed(), first.describe());
  }
  git_config(box, git_rewrite(host + "/h/"));
  const RunResult r = box.sh(
      "rm -f l; mkdir -p l/repo.git/hooks; echo evil > "
      "l/repo.git/hooks/post-receive");
  expect_refused(r, 2, "rewrites URLs to the local path '" + host + "/h/'");
  BOOST_TEST(!exists(box.ws("l/repo.git")), r.describe());
  BOOST_TEST(!exists(box.base() + "/elsewhere/repo.git"), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
