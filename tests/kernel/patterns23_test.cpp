#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// `deny` and `protect` patterns through the host's own links (docs/patterns.md "A dangling
// host link"; red team attack 22c's notes): a pattern's `*`, literal or `**` that met a host
// link dangling into the workspace matched nothing ("dangling: nothing there to deny"), so
// the command made the name the host then reads through the link as denied or protected.
// Each case runs as root and as uid 65534 and is judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_patterns23)

namespace {

std::string policy(const std::string& rules) {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
         "  write: [\"${WORKSPACE}\"]\n" +
         rules + "network: none\n";
}

// How a deny pattern below the host's `BASE/srv` meets a link the kernel follows into a
// place the sandbox writes.
enum class DenyWay {
  Star,          // `srv/*/secret`, `srv/x -> WS/new`
  AnyDepth,      // `srv/**/secret`, the same link
  Prefix,        // `srv/x/*/secret`: the literal prefix is the link
  Chain,         // `srv/*/secret`, `srv/x -> BASE/hop/h -> WS/new`
  IntoDenyRoot,  // `srv/*/secret`, `srv/x -> WS/vault/new`, `WS/vault` a deny root
  IntoHostBind,  // `srv/*/secret`, `srv/x -> BASE/data/new`, the host's bind of data at WS/mnt
};
std::ostream& operator<<(std::ostream& os, DenyWay w) {
  switch (w) {
    case DenyWay::Star:
      return os << "a star at a link dangling into the workspace";
    case DenyWay::AnyDepth:
      return os << "a double star at a link dangling into the workspace";
    case DenyWay::Prefix:
      return os << "a literal prefix through a link dangling into the workspace";
    case DenyWay::Chain:
      return os << "a chain of dangling links into the workspace";
    case DenyWay::IntoDenyRoot:
      return os << "a link dangling into a deny root in the workspace";
    case DenyWay::IntoHostBind:
      return os << "a link dangling into a host bind mount in the workspace";
  }
  return os;
}
const std::vector<DenyWay> kDenyWays{DenyWay::Star,  DenyWay::AnyDepth,     DenyWay::Prefix,
                                     DenyWay::Chain, DenyWay::IntoDenyRoot, DenyWay::IntoHostBind};

// How a protect pattern below `${HOME}` (above no writable root: the workspace is beside
// it) meets a host link into the workspace.
enum class ProtectWay {
  Star,      // `${HOME}/*/.env`, `~/x -> WS/new` (dangling)
  Existing,  // `${HOME}/*/.env`, `~/x -> WS/sub` (an existing directory)
  Chain,     // `${HOME}/*/.env`, `~/x -> ~/hop -> WS/new`
  Prefix,    // `${HOME}/x/**/.env`: the literal prefix is the dangling link
  Matched,   // `${HOME}/*.pem`, `~/k.pem -> WS/new.pem` (the match is the link)
};
std::ostream& operator<<(std::ostream& os, ProtectWay w) {
  switch (w) {
    case ProtectWay::Star:
      return os << "a star at a link dangling into the workspace";
    case ProtectWay::Existing:
      return os << "a star at a link into the workspace";
    case ProtectWay::Chain:
      return os << "a star at a chain of dangling links into the workspace";
    case ProtectWay::Prefix:
      return os << "a double star's literal prefix through a dangling link";
    case ProtectWay::Matched:
      return os << "a match that is a link dangling into the workspace";
  }
  return os;
}
const std::vector<ProtectWay> kProtectWays{ProtectWay::Star, ProtectWay::Existing,
                                           ProtectWay::Chain, ProtectWay::Prefix,
                                           ProtectWay::Matched};

}  // namespace

// A deny pattern whose walk meets a host link dangling into the workspace (or a host bind
// mount there), at a `*`, a `**` or in its literal prefix, directly or through a chain:
// before, the run went on and its command made `new/secret` (`new/a/secret`), which the
// host then read as `BASE/srv/x/secret`, a denied name. Refused now, as a literal deny root
// spelled through the link is (A22C-2): exit 2, nothing run, nothing made. Also where the
// link leads into a deny root in the workspace (the sandbox could not write there; refused
// as the literal deny root is, fail-closed: docs/patterns.md).
BOOST_DATA_TEST_CASE(a_deny_pattern_through_a_host_link_dangling_into_the_workspace_is_refused,
                     bdata::make(kCallers) * bdata::make(kDenyWays), caller, way) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv", hop = box.base() + "/hop",
                    data = box.base() + "/data";
  for (const auto& d : {srv, hop, data}) box.make_dir(d);
  box.make_dir(box.ws("mnt"));
  box.make_dir(box.ws("vault"));
  box.write_file(box.ws("vault/k"), "kept\n");
  RunSpec spec;
  std::string pattern = srv + "/*/secret", target = box.ws("new"), extra;
  switch (way) {
    case DenyWay::Star:
      break;
    case DenyWay::AnyDepth:
      pattern = srv + "/**/secret";
      break;
    case DenyWay::Prefix:
      pattern = srv + "/x/*/secret";
      break;
    case DenyWay::Chain:
      box.host_command({"/bin/ln", "-s", box.ws("new"), hop + "/h"});
      target = hop + "/h";
      break;
    case DenyWay::IntoDenyRoot:
      target = box.ws("vault/new");
      extra = ", \"${WORKSPACE}/vault\"";
      break;
    case DenyWay::IntoHostBind:
      target = data + "/new";
      spec.root_prefix = host_bind_mount(data, box.ws("mnt"));
      break;
  }
  box.host_command({"/bin/ln", "-s", target, srv + "/x"});
  const std::string before = snapshot(box.workspace());
  spec.options = {"--policy", box.write_policy("deny.yaml", policy("  deny: [\"" + pattern + "\"" +
                                                                   extra + "]\n"))};
  spec.command = {"/bin/sh", "-c",
                  "for d in new vault/new mnt/new; do mkdir -p $d/a && echo evil > $d/secret && "
                  "echo evil > $d/a/secret; done; echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("' leads through a dangling symlink to '") != std::string::npos,
             r.describe());
  BOOST_TEST(r.err.find("deny.yaml:6:") != std::string::npos, r.describe());
  BOOST_TEST(!exists(srv + "/x/secret"), r.describe());
  BOOST_TEST(!exists(srv + "/x/a/secret"), r.describe());
  BOOST_TEST(!exists(data + "/new"), r.describe());
  BOOST_TEST(snapshot(box.workspace()) == before, r.describe());
}

// A protect pattern above no writable root, `${HOME}/*/.env` (or `*.pem`, or
// `${HOME}/x/**/.env`), whose walk meets the host's link into the workspace: before, it
// named nothing there (a link was never followed, a dangling one was nothing), and the
// command wrote `new/.env` (`sub/.env`, `new.pem`), which the host reads as `~/x/.env`
// (`~/k.pem`). Now an existing link is followed and a dangling one taken for the directory
// the sandbox could make: the name is protected where the kernel would create it (a
// placeholder, or `EROFS`), as a literal protected path through the link is (A22-1); the
// run goes on and the rest of the workspace stays writable.
BOOST_DATA_TEST_CASE(a_protect_pattern_through_a_host_link_into_the_workspace_is_protected,
                     bdata::make(kCallers) * bdata::make(kProtectWays), caller, way) {
  Sandbox box(caller);
  const std::string home = box.home();
  box.make_dir(box.ws("sub"));
  std::string pattern = "${HOME}/*/.env", link = home + "/x", target = box.ws("new"),
              written = "new/.env", host_name = home + "/x/.env";
  switch (way) {
    case ProtectWay::Star:
      break;
    case ProtectWay::Existing:
      target = box.ws("sub");
      written = "sub/.env";
      break;
    case ProtectWay::Chain:
      box.host_command({"/bin/ln", "-s", box.ws("new"), home + "/hop"});
      target = home + "/hop";
      break;
    case ProtectWay::Prefix:
      pattern = "${HOME}/x/**/.env";
      break;
    case ProtectWay::Matched:
      pattern = "${HOME}/*.pem";
      link = home + "/k.pem";
      target = box.ws("new.pem");
      written = "new.pem";
      host_name = link;
      break;
  }
  box.host_command({"/bin/ln", "-s", target, link});
  const std::string policy_file =
      box.write_policy("protect.yaml", policy("  protect: [.git, \"" + pattern + "\"]\n"));
  const RunResult r =
      box.sh("mkdir -p new; echo evil > " + written + " || echo refused; echo mine > other",
             {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(host_name).value_or("<none>") != "evil\n", r.describe());
  BOOST_TEST(read_file(box.ws(written)).value_or("<none>") != "evil\n", r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// What still runs: a deny pattern through an existing host link (denied at its target, as
// before: H17-6) beside a host link dangling elsewhere (nothing the sandbox can make), and a
// protect pattern at a host link dangling elsewhere. The command reads no denied file and
// writes the workspace.
BOOST_DATA_TEST_CASE(ordinary_host_links_still_run, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv";
  box.make_dir(srv + "/real");
  box.write_file(srv + "/real/secret", "topsecret\n");
  box.host_command({"/bin/ln", "-s", srv + "/real", srv + "/e"});
  box.host_command({"/bin/ln", "-s", box.base() + "/nowhere/new", srv + "/away"});
  box.host_command({"/bin/ln", "-s", box.base() + "/nowhere/new", box.home() + "/away"});
  const std::string policy_file = box.write_policy(
      "ordinary.yaml", policy("  protect: [.git, \"${HOME}/*/.env\"]\n  deny: [\"" + srv +
                              "/*/secret\", \"" + srv + "/**/key\"]\n"));
  const RunResult r = box.sh("cat " + srv + "/e/secret || echo unread; echo mine > other",
                             {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("topsecret") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("unread") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
