#include "runner/host_name_watch.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "support/temp_dir.hpp"

// Which host names a run watches for replacement (red team R7-C1): the pure half of
// runner/host_name_watch.hpp. The kernel half is tests/kernel/host_replacement_test.cpp.
namespace zpolicy::runner {
namespace {

using compiler::ExpectedObject;
using Kind = ExpectedObject::Kind;

ExpectedObject bound(const std::string& source, const std::string& dest, bool read_only) {
  ExpectedObject o;
  o.kind = Kind::Bind;
  o.source = source;
  o.dest = dest;
  o.read_only = read_only;
  return o;
}

ExpectedObject mount(Kind kind, const std::string& dest) {
  ExpectedObject o;
  o.kind = kind;
  o.dest = dest;
  return o;
}

std::vector<std::string> rendered(const std::vector<WatchedName>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(n.directory + " : " + n.name + " -> " + n.protects);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(host_name_watch)

// The default policy's shape, the workspace under /tmp (a tmpfs in the sandbox).
BOOST_AUTO_TEST_CASE(protections_masks_and_the_pins_above_them_are_watched) {
  const std::string ws = "/tmp/w";
  const std::vector<ExpectedObject> setup = {
      bound("/", "/", true),
      mount(Kind::Dev, "/dev"),
      mount(Kind::Tmpfs, "/tmp"),
      bound(ws, ws, false),
      bound(ws + "/data", ws + "/data", false),
      bound(ws + "/.git", ws + "/.git", true),
      bound(ws + "/data/agent-sessions", ws + "/data/agent-sessions", true),
      mount(Kind::Tmpfs, "/run/zpolicy"),
      bound("/dev/null", "/root/.aws/credentials", true),
  };
  const std::vector<std::string> expected = {
      "/ : dev -> /dev",
      "/ : tmp -> /tmp",
      ws + " : .git -> " + ws + "/.git",
      ws + "/data : agent-sessions -> " + ws + "/data/agent-sessions",
      ws + " : data -> " + ws + "/data",
      "/ : run -> /run/zpolicy",
      "/run : zpolicy -> /run/zpolicy",
      "/ : root -> /root/.aws/credentials",
      "/root : .aws -> /root/.aws/credentials",
      "/root/.aws : credentials -> /root/.aws/credentials",
  };
  BOOST_TEST(rendered(watched_names(setup)) == expected, boost::test_tools::per_element());
}

// A workspace under the read-only root: the host's new object at the workspace's own name
// would be read-only, so the names above the workspace are not watched, only those of
// what is mounted inside it.
BOOST_AUTO_TEST_CASE(names_above_a_writable_root_under_a_read_only_bind_are_not_watched) {
  const std::vector<ExpectedObject> setup = {
      bound("/", "/", true),
      bound("/srv/w", "/srv/w", false),
      bound("/srv/w/.env", "/srv/w/.env", true),
      bound("/srv/w/build", "/srv/w/build", false),
  };
  const std::vector<std::string> expected = {"/srv/w : .env -> /srv/w/.env"};
  BOOST_TEST(rendered(watched_names(setup)) == expected, boost::test_tools::per_element());
}

// Nothing below a tmpfs is a host name, and a mount hidden by a later one is not in the
// setup at all: only what bwrap resolves in a host bind counts.
BOOST_AUTO_TEST_CASE(names_inside_a_tmpfs_are_not_watched) {
  const std::vector<ExpectedObject> setup = {
      mount(Kind::Tmpfs, "/"),
      mount(Kind::Tmpfs, "/home/u/.ssh"),
      bound("/work", "/work", false),
      mount(Kind::Tmpfs, "/work/cache"),
  };
  const std::vector<std::string> expected = {"/work : cache -> /work/cache"};
  BOOST_TEST(rendered(watched_names(setup)) == expected, boost::test_tools::per_element());
}

// A deny root created between missing_deny_names() and its watch raised no event: start()
// looks once more with the watch in place, and refuses the run.
BOOST_AUTO_TEST_CASE(a_name_watched_for_its_creation_that_exists_already_refuses_the_run) {
  zpolicy::test::TempDir scratch;
  const std::string dir = scratch.str();
  const WatchedName aws{dir, ".aws", dir + "/.aws", true};
  std::string why;
  {
    HostNameWatch missing;
    BOOST_TEST(missing.start({aws}, why), why);
  }
  BOOST_REQUIRE(mkdir((dir + "/.aws").c_str(), 0700) == 0);
  HostNameWatch appeared;
  BOOST_TEST(!appeared.start({aws}, why));
  BOOST_TEST(why.find("deny root '" + dir + "/.aws' was created on the host") != std::string::npos,
             why);
}

// Every deny root whose way a run watches is listed once for the looks after the watch is in
// place (the plan's missing_deny_roots): the one below a file, which no "created" watch
// names, and the second of two whose way is one and the same, whose watches name the first.
BOOST_AUTO_TEST_CASE(every_missing_deny_root_outside_the_writable_roots_is_listed_once) {
  zpolicy::test::TempDir scratch;
  const std::string dir = scratch.str();
  scratch.write("file", "a file\n");
  auto at = [](const std::string& path, ir::HostKind kind) {
    ir::ResolvedPath p;
    p.path = path;
    p.kind = kind;
    return p;
  };
  ir::Resolved r;
  r.private_tmp = false;  // the scratch directory may lie in /tmp
  r.read = {at("/", ir::HostKind::Directory)};
  r.write = {at(dir + "/ws", ir::HostKind::Directory)};
  r.deny = {
      at(dir + "/file/aws", ir::HostKind::Missing),  at(dir + "/gone/a", ir::HostKind::Missing),
      at(dir + "/gone/b", ir::HostKind::Missing),    at(dir + "/gone/a", ir::HostKind::Missing),
      at(dir + "/ws/secret", ir::HostKind::Missing),  // a placeholder and a mask
      at(dir + "/file", ir::HostKind::File)};         // masked
  const std::vector<std::string> expected{dir + "/file/aws", dir + "/gone/a", dir + "/gone/b"};
  BOOST_TEST(missing_deny_roots(r) == expected, boost::test_tools::per_element());
  std::string appeared;
  std::vector<std::string> named;
  for (const auto& w : missing_deny_names(r, appeared))
    if (std::find(named.begin(), named.end(), w.protects) == named.end())
      named.push_back(w.protects);
  BOOST_TEST(appeared.empty());
  // What the watches alone would tell an executor: neither of the last two.
  BOOST_TEST((std::find(named.begin(), named.end(), dir + "/gone/b") == named.end()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::runner
