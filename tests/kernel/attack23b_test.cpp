#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 23b (docs/redteam-2026-12.md "Attack 23b"): the morning's fixes of session
// 23 attacked. A23B-1: patterns23 judged a host link that leads nowhere yet; one that leads
// to a file (a FIFO, a socket) in the workspace was followed, its target was no directory
// to walk, and the pattern named nothing there. The command replaced the file by a
// directory and made the name the host then reads through the link as denied or protected.
// A23B-2: a pattern's walk followed a host link through a link inside the workspace, which
// the command re-pointed. A23B-3: a protect walk never met a host link below a directory
// outside the roots. Each case runs as root and as uid 65534 and is judged from the
// host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack23b)

namespace {

std::string policy(const std::string& rules) {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
         "  write: [\"${WORKSPACE}\"]\n" +
         rules + "network: none\n";
}

// Where a deny pattern below the host's `BASE/srv` meets the host's `srv/x -> WS/file`.
enum class DenyAt {
  Star,      // `srv/*/secret`
  AnyDepth,  // `srv/**/secret`
  Prefix,    // `srv/x/*/secret`: the literal prefix is the link
  HostBind,  // `srv/*/secret`, `srv/x -> BASE/data/file`, the host's bind of data at WS/mnt
};
std::ostream& operator<<(std::ostream& os, DenyAt w) {
  switch (w) {
    case DenyAt::Star:
      return os << "a star";
    case DenyAt::AnyDepth:
      return os << "a double star";
    case DenyAt::Prefix:
      return os << "the literal prefix";
    case DenyAt::HostBind:
      return os << "a star, into a host bind mount of the workspace";
  }
  return os;
}
const std::vector<DenyAt> kDenyAts{DenyAt::Star, DenyAt::AnyDepth, DenyAt::Prefix,
                                   DenyAt::HostBind};

// Where a protect pattern below `${HOME}` (above no writable root) meets `~/x -> WS/file`.
enum class ProtectAt {
  Star,    // `${HOME}/*/.env`
  Prefix,  // `${HOME}/x/**/.env`: the literal prefix is the link, `~/x/.env` its zero depth
};
std::ostream& operator<<(std::ostream& os, ProtectAt w) {
  switch (w) {
    case ProtectAt::Star:
      return os << "a star";
    case ProtectAt::Prefix:
      return os << "a double star's literal prefix";
  }
  return os;
}
const std::vector<ProtectAt> kProtectAts{ProtectAt::Star, ProtectAt::Prefix};

}  // namespace

// A23B-1, deny: with the host's `BASE/srv/x -> WS/file` (a regular file), `deny:
// [BASE/srv/*/secret]` ran, and the command's `rm file; mkdir file; echo evil >
// file/secret` made what the host reads as the denied `BASE/srv/x/secret`. Refused now, as
// at a link dangling into the workspace: exit 2 at the pattern's line, nothing run, the
// workspace unchanged.
BOOST_DATA_TEST_CASE(a_deny_pattern_through_a_host_link_to_a_workspace_file_is_refused,
                     bdata::make(kCallers) * bdata::make(kDenyAts), caller, at) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv", data = box.base() + "/data";
  for (const auto& d : {srv, data, box.ws("mnt")}) box.make_dir(d);
  // The file the command replaces, as the workspace names it.
  const std::string file = at == DenyAt::HostBind ? "mnt/file" : "file";
  const std::string target = at == DenyAt::HostBind ? data + "/file" : box.ws("file");
  box.write_file(target, "plain\n");
  box.host_command({"/bin/ln", "-s", target, srv + "/x"});
  const std::string pattern = at == DenyAt::AnyDepth ? srv + "/**/secret"
                              : at == DenyAt::Prefix ? srv + "/x/*/secret"
                                                     : srv + "/*/secret";
  const std::string before = snapshot(box.workspace());
  RunSpec spec;
  if (at == DenyAt::HostBind) spec.root_prefix = host_bind_mount(data, box.ws("mnt"));
  spec.options = {"--policy",
                  box.write_policy("deny.yaml", policy("  deny: [\"" + pattern + "\"]\n"))};
  spec.command = {"/bin/sh", "-c",
                  "rm -f " + file + "; mkdir -p " + file + "/a && echo evil > " + file +
                      "/secret && echo evil > " + file + "/a/secret; echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("which is no directory and which the sandbox can replace by one") !=
                 std::string::npos,
             r.describe());
  BOOST_TEST(r.err.find("deny.yaml:6:") != std::string::npos, r.describe());
  BOOST_TEST(!exists(srv + "/x/secret"), r.describe());
  BOOST_TEST(!exists(srv + "/x/a/secret"), r.describe());
  BOOST_TEST(read_file(target).value_or("<none>") == "plain\n", r.describe());
  BOOST_TEST(snapshot(box.workspace()) == before, r.describe());
}

// A23B-1, protect: with the host's `~/x -> WS/file`, `protect: [${HOME}/*/.env]` (or
// `${HOME}/x/**/.env`) named nothing there, and the command replaced `file` by a directory
// holding `.env`, which the host reads as `~/x/.env`. Now the name is protected where the
// kernel would create it, as the literal `~/x/.env` is: `file` stays the file it was; the
// run goes on and the rest of the workspace stays writable.
BOOST_DATA_TEST_CASE(a_protect_pattern_through_a_host_link_to_a_workspace_file_protects_it,
                     bdata::make(kCallers) * bdata::make(kProtectAts), caller, at) {
  Sandbox box(caller);
  box.write_file(box.ws("file"), "plain\n");
  box.host_command({"/bin/ln", "-s", box.ws("file"), box.home() + "/x"});
  const std::string pattern = at == ProtectAt::Star ? "${HOME}/*/.env" : "${HOME}/x/**/.env";
  const std::string policy_file =
      box.write_policy("protect.yaml", policy("  protect: [.git, \"" + pattern + "\"]\n"));
  const RunResult r = box.sh(
      "rm -f file; mkdir -p file && echo evil > file/.env || echo refused; echo mine > other",
      {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.home() + "/x/.env").value_or("<none>") != "evil\n", r.describe());
  BOOST_TEST(read_file(box.ws("file")).value_or("<none>") == "plain\n", r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A23B-2: a pattern's walk followed a host link with realpath(3), through a link inside the
// workspace (an earlier run's `WS/l -> BASE/data/d`) that the literal path refuses: with the
// host's `BASE/srv/x -> WS/l`, `deny: [BASE/srv/*/secret]` denied `BASE/data/d/secret` and
// ran (as did `protect: [${HOME}/*/.env]` with `~/x -> WS/l`), and the command re-pointed `l`
// at `new` and wrote `new/secret` (`new/.env`), which the host read as `BASE/srv/x/secret`
// (`~/x/.env`). Refused now, as the literal path is: exit 2 at the pattern's line, nothing
// run, the link as it was.
BOOST_DATA_TEST_CASE(a_pattern_through_a_host_link_to_a_workspace_link_is_refused,
                     bdata::make(kCallers) * bdata::make({false, true}), caller, deny) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv", data = box.base() + "/data";
  for (const auto& d : {srv, data, data + "/d"}) box.make_dir(d);
  box.write_file(data + "/d/secret", "topsecret\n");
  box.host_command({"/bin/ln", "-s", data + "/d", box.ws("l")});
  const std::string link = deny ? srv + "/x" : box.home() + "/x", name = deny ? "secret" : ".env";
  box.host_command({"/bin/ln", "-s", box.ws("l"), link});
  const std::string rules =
      deny ? "  deny: [\"" + srv + "/*/secret\"]\n" : "  protect: [.git, \"${HOME}/*/.env\"]\n";
  const std::string before = snapshot(box.workspace());
  RunSpec spec;
  spec.options = {"--policy", box.write_policy("link.yaml", policy(rules))};
  spec.command = {"/bin/sh", "-c",
                  "rm -f l; mkdir new && ln -s \"$PWD/new\" l && echo evil > new/" + name +
                      "; echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  expect_refused(r, 2, "leads through the symlink '" + box.ws("l") + "' inside a writable root");
  BOOST_TEST(r.err.find("link.yaml:6:") != std::string::npos, r.describe());
  BOOST_TEST(read_file(link + "/" + name).value_or("<none>") != "evil\n", r.describe());
  BOOST_TEST(!exists(box.ws("new")), r.describe());
  BOOST_TEST(snapshot(box.workspace()) == before, r.describe());
}

// A23B-3: a protect walk never entered a host directory outside and not above every writable
// root, so a host link below one was never met: `protect: [${HOME}/*/*/.env]` with the
// host's `~/a/y -> WS/sub` (`~/a` a directory), or `~/x -> BASE/opt/d` and `BASE/opt/d/y ->
// WS/sub`, left `WS/sub/.env` writable, and the command wrote what the host reads as
// `~/a/y/.env` (`~/x/y/.env`). Now such a directory is entered where the rest of the pattern
// has no `**`: `sub/.env` is protected (a placeholder), the rest of the workspace writable;
// a directory of the caller's there that cannot be listed (mode 000) refuses nothing.
BOOST_DATA_TEST_CASE(a_protect_pattern_meets_host_links_below_a_directory_outside_the_roots,
                     bdata::make(kCallers) * bdata::make({false, true}), caller, through_link) {
  Sandbox box(caller);
  box.make_dir(box.ws("sub"));
  std::string host_name = box.home() + "/a/y/.env";
  if (through_link) {
    const std::string opt = box.base() + "/opt";
    for (const auto& d : {opt, opt + "/d"}) box.make_dir(d);
    box.host_command({"/bin/ln", "-s", box.ws("sub"), opt + "/d/y"});
    box.host_command({"/bin/ln", "-s", opt + "/d", box.home() + "/x"});
    host_name = box.home() + "/x/y/.env";
  } else {
    box.make_dir(box.home() + "/a");
    box.host_command({"/bin/ln", "-s", box.ws("sub"), box.home() + "/a/y"});
  }
  // One the walk cannot list is passed by, not refused: the sandbox cannot write there.
  box.make_dir(box.home() + "/p/q");
  box.host_command({"/bin/chmod", "000", box.home() + "/p"});
  const std::string policy_file =
      box.write_policy("nested.yaml", policy("  protect: [.git, \"${HOME}/*/*/.env\"]\n"));
  const RunResult r =
      box.sh("echo evil > sub/.env || echo refused; echo mine > other", {"--policy", policy_file});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(host_name).value_or("<none>") != "evil\n", r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
