#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Attack 22d (docs/redteam-2026-12.md "Attack 22d (attack22d)"): attack 22c's fixes in
// compiler/resolve/resolve.cpp attacked with the real bwrap and kernel as root and as uid
// 65534. Each case is a finding's reproduction or a held attack, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack22d)

namespace {

// Where a missing deny root the caller cannot stat would be created: at its own name in the
// caller's directory `BASE/priv/data` (in root's 0700 `BASE/priv`) that the host binds at
// `WS/mnt`, or through the host's dangling link `BASE/host/dl -> BASE/priv/data/new`.
enum class UnseenWay { InHostBind, LinkIntoHostBind };
std::ostream& operator<<(std::ostream& os, UnseenWay w) {
  return os << (w == UnseenWay::InHostBind ? "in a host bind mount"
                                           : "dangling link into a host bind mount");
}
const std::vector<UnseenWay> kUnseenWays{UnseenWay::InHostBind, UnseenWay::LinkIntoHostBind};

}  // namespace

// Held: A22C-2/3's refusal skips a missing deny root the caller cannot stat ("its
// sandbox, the caller's uid, cannot make it"), and the guards keep a bind's source only
// where its identity compares, yet the caller's sandbox reaches the deny root's directory
// (the caller's `BASE/priv/data` in root's 0700 `BASE/priv`) through the host's bind at
// `WS/mnt`. Nothing is written there all the same: root's run is refused (A22C-2/3, exit 2);
// uid 65534's by-name case gets A22-3's name `mnt/secret` as a placeholder (`mkdir` finds
// it, the write is refused), and its link case fails closed
// (exit 125, "cannot watch"), nothing ran.
BOOST_DATA_TEST_CASE(a_missing_deny_root_the_caller_cannot_stat_in_a_host_bind_is_not_written,
                     bdata::make(kCallers) * bdata::make(kUnseenWays), caller, way) {
  Sandbox box(caller);
  const std::string priv = box.base() + "/priv";
  root_dir(priv, 0700);
  const std::string data = priv + "/data";
  root_dir(data, 0755);
  BOOST_TEST_REQUIRE(chown(data.c_str(), uid_of(caller), uid_of(caller)) == 0);
  box.make_dir(box.ws("mnt"));
  std::string denied = data + "/secret", made = "mnt/secret", victim = data + "/secret";
  if (way == UnseenWay::LinkIntoHostBind) {
    denied = host_dir(box) + "/dl";
    host_link(box, data + "/new", denied);
    made = "mnt/new";
    victim = data + "/new";
  }
  RunSpec spec;
  spec.root_prefix = host_bind_mount(data, box.ws("mnt"));
  spec.options = {"--policy", box.write_policy("deny.yaml",
                                               workspace_write_policy(
                                                   kNarrowRead, "  deny: [\"" + denied + "\"]\n"))};
  const RunResult r =
      run_script(box, spec, "mkdir " + made + "; echo evil > " + made + "/authorized_keys");
  BOOST_TEST(!exists(victim + "/authorized_keys"), r.describe());
  // uid 65534's by-name case has a placeholder there, which a run ending beside another
  // live run leaves (the known "placeholder left"): what the sandbox wrote is asserted.
  if (caller == Caller::Root || way == UnseenWay::LinkIntoHostBind)
    BOOST_TEST(!exists(victim), r.describe());
  if (caller == Caller::Root) {
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(r.err.find("deny root '" + denied +
                          "' does not exist, and the kernel would create") != std::string::npos,
               r.describe());
  } else if (way == UnseenWay::InHostBind) {
    BOOST_TEST(r.completed(), r.describe());
    BOOST_TEST(r.err.find("cannot create " + made + "/authorized_keys") != std::string::npos,
               r.describe());
  } else {
    expect_refused(r, 125, "cannot watch " + priv);
  }
}

// Held: A22C-1's mount-table names for a deny root whose name holds a space and a
// backslash (mountinfo escapes them as `\040` and `\134`): `deny: [BASE/priv/sec ret\040x]`
// in root's 0700 `BASE/priv`, its `sub` bound by the host at `WS/mnt`: `cat mnt/k` fails.
BOOST_DATA_TEST_CASE(a_part_of_an_unseeable_deny_root_with_escaped_characters_is_denied,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string priv = box.base() + "/priv";
  root_dir(priv, 0700);
  const std::string secret = priv + "/sec ret\\040x";
  root_dir(secret, 0755);
  root_dir(secret + "/sub", 0755);
  root_file(secret + "/sub/k", "topsecret\n", 0644);
  box.make_dir(box.ws("mnt"));
  RunSpec spec;
  spec.root_prefix = host_bind_mount(secret + "/sub", box.ws("mnt"));
  spec.options = {"--policy",
                  box.write_policy("deny.yaml", workspace_write_policy(
                                                    kNarrowRead, "  deny: ['" + secret + "']\n"))};
  expect_bound_deny_root_unread(box, spec);
}

// Held: A22C-2/3's refusal is not a false one for an ordinary user: a missing `~/.aws` in
// a home that is no writable root (nor bound into one) runs, and stays missing.
BOOST_DATA_TEST_CASE(a_missing_deny_root_in_a_home_that_is_not_writable_still_runs,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string home = box.base() + "/home";
  box.make_dir(home);
  RunSpec spec;
  spec.options = {"--policy",
                  box.write_policy("deny.yaml",
                                   workspace_write_policy("[\"/\"]", "  deny: [\"" + home +
                                                                          "/.aws\", \"" + home +
                                                                          "/.ssh/id_ed25519\"]\n"))};
  const RunResult r = run_script(box, spec, "echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
  BOOST_TEST(!exists(home + "/.aws"), r.describe());
}

// A22D-1: A22-5 for a remote URL that is no rewrite's base. `remote.origin.url =
// BASE/host/h/repo.git` in the workspace's `.git/config`, with the host's dangling
// `BASE/host/h -> WS/l` (or `-> BASE/srv/l`, the host binding `BASE/srv` at `WS/mnt`): the
// walk spells the repository from the link, outside every writable root, so nothing was
// protected; the command made `l/repo.git` (`mnt/l/repo.git`), a bare repository with a
// post-receive hook, and the host's `git push origin` ran it (exit 0; checked by hand: it
// wrote "PWNED"). Refused now: exit 2, nothing made.
BOOST_DATA_TEST_CASE(a_remote_url_through_a_dangling_host_link_into_a_writable_root_is_refused,
                     bdata::make(kCallers) * bdata::make(std::vector<bool>{false, true}), caller,
                     through_bind) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  const SrvBind bind = srv_bound_at_mnt(box);
  const std::string& src = bind.src;
  RunSpec spec;
  std::string made = "l";
  if (through_bind) {
    host_link(box, src + "/l", host + "/h");
    spec.root_prefix = bind.prefix;
    made = "mnt/l";
  } else {
    host_link(box, box.ws("l"), host + "/h");
  }
  git_workspace(box, git_remote(host + "/h/repo.git"));
  const RunResult r = run_script(box, spec,
                                 "mkdir " + made + " && git init -q --bare " + made +
                                     "/repo.git && echo evil > " + made + "/repo.git/hooks/post-receive");
  expect_refused(r, 2,
                 "names the repository '" + host + "/h/repo.git/.git', which does not " +
                     "exist, and the kernel would create it");
  BOOST_TEST(!exists(box.ws("l")), r.describe());
  BOOST_TEST(!exists(src + "/l"), r.describe());
}

// Held: A22C-6's refusal of a URL rewrite base through the host's dangling link
// `BASE/host/h -> WS/l` in other spellings: `./`, `//`, a trailing `/.`, `h` or `/../`
// percent-encoded in a `file://` URL (git's url_decode, which zpolicy's git_url mirrors),
// `./` before the `..`. Each refused, exit 2, nothing made.
BOOST_DATA_TEST_CASE(
    a_git_url_rewrite_base_through_a_dangling_host_link_is_refused_in_every_spelling,
    bdata::make(kCallers) * bdata::make(std::vector<std::string>{"h/./", "/h/", "h/.", "%68/",
                                                                 "h%2F..%2Fh/", "./h/../h/"}),
    caller, tail) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  host_link(box, box.ws("l"), host + "/h");
  const bool encoded = tail.find('%') != std::string::npos;
  git_workspace(box, git_rewrite(std::string(encoded ? "file://" : "") + host + "/" + tail));
  const RunResult r =
      box.sh("mkdir l; git init -q --bare l/repo.git; git init -q --bare h/repo.git");
  expect_refused(r, 2, "rewrites URLs to the local path");
  BOOST_TEST(!exists(box.ws("l")), r.describe());
  BOOST_TEST(!exists(box.ws("h")), r.describe());
}

// Held: A22C-7's walk of a linked worktree's `commondir` with the guards, for a relative
// `commondir` (`../../ws/x/.git`, from the host's `BASE/adm/wt`) and for `./`, `//` and
// `real/../x` spellings of `WS/x/.git`, `x` a link planted to `WS/real`: each refused,
// exit 2, the link unchanged.
BOOST_DATA_TEST_CASE(a_commondir_through_a_planted_link_is_refused_in_every_spelling,
                     bdata::make(kCallers) *
                         bdata::make(std::vector<std::string>{"relative", "x/./.git", "/x/.git",
                                                              "real/../x/.git"}),
                     caller, spelling) {
  Sandbox box(caller);
  box.host_command({"/usr/bin/git", "init", "-q", box.ws("real")});
  host_link(box, box.ws("real"), box.ws("x"));
  const std::string ws_name = box.workspace().substr(box.workspace().rfind('/') + 1);
  const std::string adm =
      linked_worktree(box, spelling == "relative" ? "../../" + ws_name + "/x/.git"
                                                  : box.workspace() + "/" + spelling);
  const RunResult r = box.sh("rm x && ln -s '" + box.ws("evil") + "' x");
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(
      r.err.find("common git directory named by '" + adm + "/commondir'") != std::string::npos,
      r.describe());
  char target[4096] = {};
  BOOST_TEST(readlink(box.ws("x").c_str(), target, sizeof target - 1) > 0, r.describe());
  BOOST_TEST(std::string(target) == box.ws("real"), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
