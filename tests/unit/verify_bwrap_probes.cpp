#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <set>

#include "compiler/analyzer/probes.hpp"
#include "verify_bwrap_fixture.hpp"

using namespace zpolicy;
using namespace zpolicy::compiler;

namespace {

SymbolicPath P(const char* s) { return *SymbolicPath::parse(s); }

struct Case {
  const char* path;
  FsOp op;
  Expect expect;
  int rule_line;  // 0: a built-in default; under no root, the policy's first read root
};

void check(Intent& intent, const Case& c) {
  auto e = intent.expect(P(c.path), c.op);
  BOOST_TEST_CONTEXT(c.path << " " << to_string(c.op) << ": " << e.reason) {
    BOOST_TEST((e.expect == c.expect));
    BOOST_TEST(e.rule.line == c.rule_line);
    BOOST_TEST(e.rule.file == (c.rule_line ? "policy.yaml" : "<builtin>"));
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_probes)

BOOST_AUTO_TEST_CASE(workspace_write_intent) {
  Intent intent(test::workspace_policy());
  const Case cases[] = {
      {"${WORKSPACE}/src/a.c", FsOp::Write, Expect::Allow, 5},
      {"${WORKSPACE}/src/a.c", FsOp::Create, Expect::Allow, 5},
      {"${WORKSPACE}/.git", FsOp::Read, Expect::Allow, 5},
      {"${WORKSPACE}/.git", FsOp::Write, Expect::Deny, 6},
      {"${WORKSPACE}/.git", FsOp::Create, Expect::Deny, 6},
      {"${WORKSPACE}/.git/config", FsOp::Delete, Expect::Deny, 6},
      {"${WORKSPACE}/.github", FsOp::Write, Expect::Allow, 5},
      {"${WORKSPACE}/.github", FsOp::Delete, Expect::Allow, 5},
      // Renaming the directory that holds a protected path would carry it away.
      {"${WORKSPACE}/data", FsOp::Delete, Expect::Deny, 6},
      {"${WORKSPACE}/data", FsOp::Write, Expect::Allow, 5},
      {"${WORKSPACE}/data/other", FsOp::Delete, Expect::Allow, 5},
      {"${WORKSPACE}", FsOp::Delete, Expect::Deny, 5},
      {"${HOME}/.ssh", FsOp::Read, Expect::DenyStrict, 7},
      {"${HOME}/.ssh/id_ed25519", FsOp::Create, Expect::DenyStrict, 7},
      {"${HOME}/.sshx", FsOp::Read, Expect::Allow, 4},
      {"${HOME}/.sshx", FsOp::Write, Expect::Deny, 4},
      {"${HOME}/.aws/credentials", FsOp::Write, Expect::DenyStrict, 7},
      {"/etc/passwd", FsOp::Read, Expect::Allow, 4},
      {"/etc/passwd", FsOp::Delete, Expect::Deny, 4},
      {"/tmp/x", FsOp::Read, Expect::Deny, 0},
      {"/tmp/x", FsOp::Create, Expect::Deny, 0},
      {"/", FsOp::Create, Expect::Deny, 4},
  };
  for (const auto& c : cases) check(intent, c);
}

BOOST_AUTO_TEST_CASE(prefix_siblings_are_not_inside) {
  auto policy = test::workspace_policy();
  policy.read = {test::at("/a/b", 2)};
  policy.write = {test::at("/w", 3)};
  policy.protect = {test::at("/w/a/b", 4)};
  policy.pin = {};
  policy.deny = {test::at("/w/s", 5)};
  Intent intent(policy);
  const Case cases[] = {
      {"/a/bc", FsOp::Read, Expect::Deny, 2},        {"/a/b/c", FsOp::Read, Expect::Allow, 2},
      {"/w/a/bc", FsOp::Write, Expect::Allow, 3},    {"/w/a/b/c", FsOp::Write, Expect::Deny, 4},
      {"/w/a", FsOp::Delete, Expect::Deny, 4},       {"/w/sx", FsOp::Read, Expect::Allow, 3},
      {"/w/s", FsOp::Delete, Expect::DenyStrict, 5},
  };
  for (const auto& c : cases) check(intent, c);
}

BOOST_AUTO_TEST_CASE(read_only_writes_nothing_and_danger_allows_everything) {
  auto policy = test::workspace_policy();
  policy.mode = ir::Mode::ReadOnly;
  Intent ro(policy);
  check(ro, {"${WORKSPACE}/src/a.c", FsOp::Write, Expect::Deny, 0});
  check(ro, {"${WORKSPACE}/src/a.c", FsOp::Read, Expect::Allow, 5});
  policy.mode = ir::Mode::DangerFullAccess;
  Intent danger(policy);
  check(danger, {"${HOME}/.ssh/id_ed25519", FsOp::Read, Expect::Allow, 0});
}

BOOST_AUTO_TEST_CASE(probe_set_covers_roots_their_neighbours_and_the_outside) {
  Intent intent(test::workspace_policy());
  auto probes = generate_probes(intent);
  auto has = [&](const char* path) {
    return std::any_of(probes.begin(), probes.end(),
                       [&](const Probe& p) { return p.path() == P(path); });
  };
  for (const char* p :
       {"/", "/zpolicy-probe", "${WORKSPACE}", "${WORKSPACE}/zpolicy-probe", "${WORKSPACE}/.git",
        "${WORKSPACE}/.gitx", "${WORKSPACE}/.git/zpolicy-probe", "${WORKSPACE}/data",
        "${WORKSPACE}/data/agent-sessionsx", "${HOME}/.ssh", "${HOME}/.ssh/zpolicy-probe/deeper",
        "${HOME}", "${HOME}/.sshx", "${HOME}/.aws", "/zpolicy-probe-outside", "/tmp/zpolicy-probe"})
    BOOST_TEST(has(p), p);
  std::set<SymbolicPath> unique;
  for (const auto& p : probes) BOOST_TEST(unique.insert(p.path()).second, p.path().str());
  auto git = std::find_if(probes.begin(), probes.end(),
                          [](const Probe& p) { return p.path() == P("${WORKSPACE}/.git"); });
  BOOST_TEST_REQUIRE((git != probes.end()));
  BOOST_TEST(git->role() == "protected path ${WORKSPACE}/.git");
  BOOST_TEST((git->at(FsOp::Delete) == Expect::Deny));
  BOOST_TEST(intent.expect(git->path(), FsOp::Delete).rule.str() == "policy.yaml:6:5");
}

BOOST_AUTO_TEST_CASE(unparsable_intent_paths_are_reported) {
  auto policy = test::workspace_policy();
  policy.deny.push_back(test::at("relative/path", 11));
  Intent intent(policy);
  BOOST_TEST_REQUIRE(intent.unparsable().size() == 1u);
  BOOST_TEST(intent.unparsable()[0].loc.line == 11);
}

BOOST_AUTO_TEST_SUITE_END()
