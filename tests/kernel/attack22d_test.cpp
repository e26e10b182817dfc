#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// Attack 22d (docs/redteam-2026-12.md "Attack 22d (attack22d)"): attack 22c's fixes in
// compiler/resolve/resolve.cpp attacked with the real bwrap and kernel as root and as uid
// 65534. Each case is a finding's reproduction or a held attack, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack22d)

namespace {

std::string policy(const std::string& read, const std::string& rules) {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: " + read +
         "\n  write: [\"${WORKSPACE}\"]\n" + rules + "network: none\n";
}

const std::string kNarrowRead = "[/usr, /bin, /lib, /lib64, /etc, \"${WORKSPACE}\"]";

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
  BOOST_TEST_REQUIRE(mkdir(priv.c_str(), 0700) == 0);
  const std::string data = priv + "/data";
  BOOST_TEST_REQUIRE(mkdir(data.c_str(), 0755) == 0);
  BOOST_TEST_REQUIRE(chown(data.c_str(), uid_of(caller), uid_of(caller)) == 0);
  box.make_dir(box.ws("mnt"));
  std::string denied = data + "/secret", made = "mnt/secret", victim = data + "/secret";
  if (way == UnseenWay::LinkIntoHostBind) {
    box.make_dir(box.base() + "/host");
    denied = box.base() + "/host/dl";
    box.host_command({"/bin/ln", "-s", data + "/new", denied});
    made = "mnt/new";
    victim = data + "/new";
  }
  RunSpec spec;
  spec.root_prefix = host_bind_mount(data, box.ws("mnt"));
  spec.options = {
      "--policy",
      box.write_policy("deny.yaml", policy(kNarrowRead, "  deny: [\"" + denied + "\"]\n"))};
  spec.command = {
      "/bin/sh", "-c",
      "mkdir " + made + "; echo evil > " + made + "/authorized_keys; echo '" + kDoneMarker + "'"};
  const RunResult r = box.run(spec);
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
    BOOST_TEST(r.exit_code == 125, r.describe());
    BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
    BOOST_TEST(r.err.find("cannot watch " + priv) != std::string::npos, r.describe());
  }
}

// Held: A22C-1's mount-table names for a deny root whose name holds a space and a
// backslash (mountinfo escapes them as `\040` and `\134`): `deny: [BASE/priv/sec ret\040x]`
// in root's 0700 `BASE/priv`, its `sub` bound by the host at `WS/mnt`: `cat mnt/k` fails.
BOOST_DATA_TEST_CASE(a_part_of_an_unseeable_deny_root_with_escaped_characters_is_denied,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string priv = box.base() + "/priv";
  BOOST_TEST_REQUIRE(mkdir(priv.c_str(), 0700) == 0);
  const std::string secret = priv + "/sec ret\\040x";
  BOOST_TEST_REQUIRE(mkdir(secret.c_str(), 0755) == 0);
  BOOST_TEST_REQUIRE(mkdir((secret + "/sub").c_str(), 0755) == 0);
  { std::ofstream(secret + "/sub/k") << "topsecret\n"; }
  BOOST_TEST_REQUIRE(chmod((secret + "/sub/k").c_str(), 0644) == 0);
  box.make_dir(box.ws("mnt"));
  RunSpec spec;
  spec.root_prefix = host_bind_mount(secret + "/sub", box.ws("mnt"));
  spec.options = {
      "--policy",
      box.write_policy("deny.yaml", policy(kNarrowRead, "  deny: ['" + secret + "']\n"))};
  spec.command = {
      "/bin/sh", "-c",
      "cat mnt/k || echo refused; echo mine > other; echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("topsecret") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// Held: A22C-2/3's refusal is not a false one for an ordinary user: a missing `~/.aws` in
// a home that is no writable root (nor bound into one) runs, and stays missing.
BOOST_DATA_TEST_CASE(a_missing_deny_root_in_a_home_that_is_not_writable_still_runs,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string home = box.base() + "/home";
  box.make_dir(home);
  RunSpec spec;
  spec.options = {
      "--policy",
      box.write_policy("deny.yaml", policy("[\"/\"]", "  deny: [\"" + home + "/.aws\", \"" + home +
                                                          "/.ssh/id_ed25519\"]\n"))};
  spec.command = {"/bin/sh", "-c", "echo mine > other; echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
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
  const std::string host = box.base() + "/host";
  box.make_dir(host);
  const std::string src = box.base() + "/srv";
  box.make_dir(src);
  box.make_dir(box.ws("mnt"));
  RunSpec spec;
  std::string made = "l";
  if (through_bind) {
    box.host_command({"/bin/ln", "-s", src + "/l", host + "/h"});
    spec.root_prefix = host_bind_mount(src, box.ws("mnt"));
    made = "mnt/l";
  } else {
    box.host_command({"/bin/ln", "-s", box.ws("l"), host + "/h"});
  }
  box.host_command({"/usr/bin/git", "init", "-q", box.workspace()});
  box.write_file(box.ws(".git/config"),
                 "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n"
                 "\turl = " +
                     host + "/h/repo.git\n");
  spec.command = {"/bin/sh", "-c",
                  "mkdir " + made + " && git init -q --bare " + made + "/repo.git && echo evil > " +
                      made + "/repo.git/hooks/post-receive; echo '" + kDoneMarker + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("names the repository '" + host + "/h/repo.git/.git', which does not " +
                        "exist, and the kernel would create it") != std::string::npos,
             r.describe());
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
  const std::string host = box.base() + "/host";
  box.make_dir(host);
  box.host_command({"/bin/ln", "-s", box.ws("l"), host + "/h"});
  box.host_command({"/usr/bin/git", "init", "-q", box.workspace()});
  const bool encoded = tail.find('%') != std::string::npos;
  box.write_file(box.ws(".git/config"),
                 "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[url \"" +
                     std::string(encoded ? "file://" : "") + host + "/" + tail +
                     "\"]\n\tinsteadOf = https://example.test/\n");
  const RunResult r =
      box.sh("mkdir l; git init -q --bare l/repo.git; git init -q --bare h/repo.git");
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("rewrites URLs to the local path") != std::string::npos, r.describe());
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
  box.host_command({"/bin/ln", "-s", box.ws("real"), box.ws("x")});
  const std::string adm = box.base() + "/adm/wt";
  box.make_dir(adm);
  box.write_file(adm + "/HEAD", "ref: refs/heads/master\n");
  const std::string ws_name = box.workspace().substr(box.workspace().rfind('/') + 1);
  box.write_file(adm + "/commondir", (spelling == "relative" ? "../../" + ws_name + "/x/.git"
                                                             : box.workspace() + "/" + spelling) +
                                         "\n");
  box.write_file(adm + "/gitdir", box.ws(".git") + "\n");
  box.write_file(box.ws(".git"), "gitdir: " + adm + "\n");
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
