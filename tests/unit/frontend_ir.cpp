// Invariants of the IR the frontend produces: path canonical form, containment, the mode
// order, and the rule that --mode may only narrow a policy's ceiling.
#include <boost/test/unit_test.hpp>
#include <random>

#include "compiler/resolve/resolve.hpp"
#include "ir/diagnostic.hpp"
#include "ir/mode.hpp"
#include "ir/path.hpp"
#include "support/parse.hpp"

using namespace zpolicy;
using ir::Mode;
using ir::PathRoot;
using ir::PolicyPath;

namespace {

PolicyPath path(std::string_view text, bool allow_relative = true) {
  ir::PathError why;
  auto p = ir::parse_policy_path(text, allow_relative, &why);
  BOOST_TEST_REQUIRE(p.has_value(), text << ": " << why.reason);
  return *p;
}

const Mode kModes[] = {Mode::ReadOnly, Mode::WorkspaceWrite, Mode::DangerFullAccess};

}  // namespace

BOOST_AUTO_TEST_SUITE(frontend_ir)

BOOST_AUTO_TEST_CASE(path_str_is_the_canonical_spelling) {
  const std::pair<const char*, const char*> cases[] = {
      {"/", "/"},
      {"/etc//ssl/./certs/", "/etc/ssl/certs"},
      {"~", "${HOME}"},
      {"~/.ssh", "${HOME}/.ssh"},
      {"${HOME}/", "${HOME}"},
      {"${WORKSPACE}", "${WORKSPACE}"},
      {"${TMPDIR}/a", "${TMPDIR}/a"},
      {"./.git", ".git"},
      {"data//agent-sessions/.", "data/agent-sessions"},
      {"/a/~b/c~", "/a/~b/c~"},
  };
  for (const auto& [text, canonical] : cases) BOOST_TEST(path(text).str() == canonical, text);
}

// parse(str(p)) == p for every path parse accepts: str() loses nothing, so a diagnostic or
// an artifact that prints a path names exactly the rule's path.
BOOST_AUTO_TEST_CASE(path_str_parse_round_trip) {
  const std::string alphabet = "ab./~${}WORKSPACEHOMETMPDIR_-";
  std::mt19937 rng(42);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text(1 + rng() % 24, ' ');
    for (auto& c : text) c = alphabet[rng() % alphabet.size()];
    if (rng() % 3 == 0)
      text = "${WORKSPACE}/" + text;
    else if (rng() % 3 == 0)
      text = "/" + text;
    auto p = ir::parse_policy_path(text, true, nullptr);
    if (!p) continue;
    ++accepted;
    auto again = ir::parse_policy_path(p->str(), true, nullptr);
    BOOST_TEST_REQUIRE(again.has_value(), text);
    BOOST_TEST((*again == *p), text << " -> " << p->str());
    for (const auto& c : p->components) {
      BOOST_TEST((c != "" && c != "." && c != ".."), text);
      BOOST_TEST(c.find('/') == std::string::npos, text);
    }
  }
  BOOST_TEST(accepted > 1000);
}

BOOST_AUTO_TEST_CASE(path_contains) {
  BOOST_TEST(path("/").contains(path("/etc/passwd")));
  BOOST_TEST(path("/a").contains(path("/a")));
  BOOST_TEST(path("/a").contains(path("/a/b/c")));
  BOOST_TEST(!path("/a").contains(path("/ab")));
  BOOST_TEST(!path("/a/b").contains(path("/a")));
  BOOST_TEST(path("${WORKSPACE}").contains(path("${WORKSPACE}/.git")));
  BOOST_TEST(!path("${WORKSPACE}").contains(path("${HOME}/x")));
  BOOST_TEST(!path("/").contains(path("${HOME}")));  // different anchors never compare
  BOOST_TEST(path("~").contains(path("${HOME}/.ssh")));
  BOOST_TEST(path("data").contains(path("data/agent-sessions")));
  BOOST_TEST(!path("data").contains(path("/data")));
}

BOOST_AUTO_TEST_CASE(path_join_appends_a_relative_path) {
  BOOST_TEST(path("${WORKSPACE}").join(path("data/agent-sessions")).str() ==
             "${WORKSPACE}/data/agent-sessions");
  BOOST_TEST(path("/").join(path(".git")).str() == "/.git");
  auto joined = path("/srv").join(path("a/b"));
  BOOST_TEST(path("/srv").contains(joined));
}

BOOST_AUTO_TEST_CASE(path_rejections) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty path"},
      {"/a/../b", "'..' is not allowed in a path"},
      {"${PWD}/x", "unknown variable '${PWD}' (known: ${WORKSPACE}, ${HOME}, ${TMPDIR}, ~)"},
      {"$HOME/x", "'$HOME/x': shell variables are not expanded in a policy; the variables are "
                  "${WORKSPACE}, ${HOME}, ${TMPDIR} and ~"},
      {"$PWD", "'$PWD': shell variables are not expanded in a policy; the variables are "
               "${WORKSPACE}, ${HOME}, ${TMPDIR} and ~"},
      {"/a/${HOME}", "a variable may only start a path"},
      {"${HOME", "unterminated variable in '${HOME'"},
      {"${TMPDIR}x", "a variable must be followed by '/' or end the path"},
      {"~bob", "'~user' paths are not supported; use ~/ or ${HOME}"},
      {"./", "relative path names nothing"},
  };
  for (const auto& [text, reason] : cases) {
    ir::PathError why;
    BOOST_TEST(!ir::parse_policy_path(text, true, &why).has_value(), text);
    BOOST_TEST(why.reason == reason, text);
  }
  ir::PathError why;
  BOOST_TEST(!ir::parse_policy_path(std::string("/a\0b", 4), true, &why).has_value());
  BOOST_TEST(why.reason == "path contains a NUL byte");
  BOOST_TEST(!ir::parse_policy_path("/a\rb", true, &why).has_value());
  BOOST_TEST(why.reason == "path contains a newline");
  BOOST_TEST(!ir::parse_policy_path(".git", false, &why).has_value());
  BOOST_TEST(why.reason == "relative path '.git'; an absolute path or a variable is required");
  BOOST_TEST(!ir::parse_policy_path(".git", false, nullptr).has_value());  // no error sink needed
}

BOOST_AUTO_TEST_CASE(modes_are_ordered) {
  BOOST_TEST((Mode::ReadOnly < Mode::WorkspaceWrite));
  BOOST_TEST((Mode::WorkspaceWrite < Mode::DangerFullAccess));
  for (Mode requested : kModes)
    for (Mode ceiling : kModes)
      BOOST_TEST(ir::narrower_or_equal(requested, ceiling) == (requested <= ceiling),
                 ir::to_string(requested) << " vs " << ir::to_string(ceiling));
  BOOST_TEST(ir::is_confined(Mode::ReadOnly));
  BOOST_TEST(ir::is_confined(Mode::WorkspaceWrite));
  BOOST_TEST(!ir::is_confined(Mode::DangerFullAccess));
}

BOOST_AUTO_TEST_CASE(enum_spellings_round_trip) {
  for (Mode m : kModes) BOOST_TEST((ir::parse_mode(ir::to_string(m)) == m));
  BOOST_TEST((ir::parse_mode("read_only") == Mode::ReadOnly));
  BOOST_TEST((ir::parse_mode("workspace_write") == Mode::WorkspaceWrite));
  BOOST_TEST((ir::parse_mode("danger_full_access") == Mode::DangerFullAccess));
  for (const char* bad : {"", "Read-Only", "read only", "readonly", "read-only "})
    BOOST_TEST(!ir::parse_mode(bad).has_value(), bad);
  for (auto n : {ir::Network::None, ir::Network::Loopback, ir::Network::Full})
    BOOST_TEST((ir::parse_network(ir::to_string(n)) == n));
  for (auto u : {ir::Unavailable::Deny, ir::Unavailable::RunUnconfined})
    BOOST_TEST((ir::parse_unavailable(ir::to_string(u)) == u));
  BOOST_TEST(!ir::parse_network("None").has_value());
  BOOST_TEST(!ir::parse_unavailable("run_unconfined").has_value());
}

BOOST_AUTO_TEST_CASE(effective_mode_narrows_and_never_widens) {
  auto policy = test::parse("zpolicy: 1\nmode: workspace-write\n").policy.value();
  ir::Diagnostics diags;
  BOOST_TEST((compiler::effective_mode(policy, std::nullopt, diags) == Mode::WorkspaceWrite));
  BOOST_TEST(
      (compiler::effective_mode(policy, Mode::WorkspaceWrite, diags) == Mode::WorkspaceWrite));
  BOOST_TEST((compiler::effective_mode(policy, Mode::ReadOnly, diags) == Mode::ReadOnly));
  BOOST_TEST(diags.str() == "");
  BOOST_TEST(!compiler::effective_mode(policy, Mode::DangerFullAccess, diags).has_value());
  BOOST_TEST(diags.str() ==
             "p.yaml:2:7: error: --mode danger-full-access is wider than the policy's ceiling "
             "'workspace-write'; --mode may only narrow it\n");

  auto ro = test::parse("zpolicy: 1\nmode: read_only\n").policy.value();
  ir::Diagnostics ro_diags;
  BOOST_TEST(!compiler::effective_mode(ro, Mode::WorkspaceWrite, ro_diags).has_value());
  BOOST_TEST(ro_diags.str() ==
             "p.yaml:2:7: error: --mode workspace-write is wider than the policy's ceiling "
             "'read-only'; --mode may only narrow it\n");
}

BOOST_AUTO_TEST_CASE(diagnostics_shape) {
  ir::Diagnostics d;
  d.warning({"p.yaml", 3, 5}, "overlapping roots");
  BOOST_TEST(!d.has_errors());
  d.error({"p.yaml"}, "whole-file problem");
  BOOST_TEST(d.has_errors());
  BOOST_TEST(d.str() ==
             "p.yaml:3:5: warning: overlapping roots\np.yaml: error: whole-file problem\n");
  BOOST_TEST((ir::SourceLoc{ir::kBuiltinFile}.str() == "<builtin>"));
}

BOOST_AUTO_TEST_SUITE_END()
