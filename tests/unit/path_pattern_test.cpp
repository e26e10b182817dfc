// Patterns in `protect` and `deny`: the typed value the frontend makes of them, what a
// component matches, and every malformed form refused at its file:line:col. A '*', '?'
// or '[' is never taken literally (a glob that silently names nothing is a lost rule).
#include "ir/path_pattern.hpp"

#include <boost/test/unit_test.hpp>

#include "compiler/lint/policy_lint.hpp"
#include "support/parse.hpp"

using namespace zpolicy;
using Kind = ir::PatternComponent::Kind;

namespace {

const std::string kHead = "zpolicy: 1\nmode: workspace-write\nfilesystem:\n";

ir::PathPattern pattern(const std::string& text, bool relative = true) {
  ir::PathError why;
  auto p = ir::parse_path_pattern(text, relative, &why);
  BOOST_TEST_REQUIRE(p.has_value(), why.reason);
  return *p;
}

void expect_errors(const std::string& text, const std::string& expected) {
  auto r = test::parse(text);
  BOOST_TEST(!r.policy.has_value());
  BOOST_TEST(r.errors == expected);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(path_patterns)

BOOST_AUTO_TEST_CASE(components_are_typed) {
  auto p = pattern("**/.git");
  BOOST_TEST(p.is_relative());
  BOOST_TEST_REQUIRE(p.components.size() == 2u);
  BOOST_TEST((p.components[0].kind == Kind::AnyDepth));
  BOOST_TEST((p.components[1].kind == Kind::Literal));
  BOOST_TEST(p.has_any_depth());
  BOOST_TEST(p.literal_prefix().components.empty());

  auto q = pattern("${WORKSPACE}/packages/*/.env", false);
  BOOST_TEST((q.root == ir::PathRoot::Workspace));
  BOOST_TEST(q.str() == "${WORKSPACE}/packages/*/.env");
  BOOST_TEST(q.literal_prefix().str() == "${WORKSPACE}/packages");
  BOOST_TEST((q.components[1].kind == Kind::Wildcard));
  BOOST_TEST(!q.has_any_depth());

  auto home = pattern("~/.config/*/token", false);
  BOOST_TEST(home.str() == "${HOME}/.config/*/token");
  BOOST_TEST(pattern("./a//*.pem/").str() == "a/*.pem");
  BOOST_TEST(pattern("**/.git").below(*ir::parse_policy_path("${TMPDIR}", false, nullptr)).str() ==
             "${TMPDIR}/**/.git");
}

BOOST_AUTO_TEST_CASE(a_wildcard_matches_within_one_name) {
  auto c = [](const std::string& text) { return pattern(text).components.back(); };
  BOOST_TEST(c("*").matches(".git"));
  BOOST_TEST(c("*.env").matches(".env"));
  BOOST_TEST(c("*.env").matches("prod.env"));
  BOOST_TEST(!c("*.env").matches("prod.env.bak"));
  BOOST_TEST(c("a*b*c").matches("abc"));
  BOOST_TEST(c("a*b*c").matches("axxbyyc"));
  BOOST_TEST(!c("a*b*c").matches("acb"));
  BOOST_TEST(!c("a*b*c").matches("ab"));
  BOOST_TEST(!c("ab*ba").matches("aba"));  // the pieces may not overlap
  BOOST_TEST(c("ab*ba").matches("abba"));
  BOOST_TEST(c("*b*").matches("b"));
  BOOST_TEST(!c("*b*").matches("a"));
  BOOST_TEST(c("*.git").str() == "*.git");
}

BOOST_AUTO_TEST_CASE(patterns_land_in_their_own_lists) {
  auto r = test::parse(kHead +
                       "  protect: [.git, \"**/.git\", \"packages/*/.env\"]\n"
                       "  deny: [\"~/.ssh\", \"${WORKSPACE}/**/*.pem\"]\n");
  BOOST_TEST_REQUIRE(r.errors == "");
  BOOST_TEST(r.policy->protect.size() == 1u);
  BOOST_TEST_REQUIRE(r.policy->protect_patterns.size() == 2u);
  BOOST_TEST(r.policy->protect_patterns[0].value.str() == "**/.git");
  BOOST_TEST(r.policy->protect_patterns[0].loc.str() == "p.yaml:4:19");
  BOOST_TEST(r.policy->protect_patterns[1].value.str() == "packages/*/.env");
  BOOST_TEST(r.policy->deny.size() == 1u);
  BOOST_TEST_REQUIRE(r.policy->deny_patterns.size() == 1u);
  BOOST_TEST(r.policy->deny_patterns[0].value.str() == "${WORKSPACE}/**/*.pem");
  BOOST_TEST(r.policy->deny_patterns[0].loc.str() == "p.yaml:5:20");
}

BOOST_AUTO_TEST_CASE(every_malformed_pattern_is_refused_where_it_is_written) {
  const std::string why_star = "': '**' must be a whole component ('**/NAME'), not part of '";
  struct Case {
    std::string entry, message;
  };
  const std::vector<Case> cases = {
      {"\"a**b\"", "pattern 'a**b" + why_star + "a**b'"},
      {"\"**x\"", "pattern '**x" + why_star + "**x'"},
      {"\"x**/y\"", "pattern 'x**/y" + why_star + "x**'"},
      {"\"***/y\"", "pattern '***/y" + why_star + "***'"},
      {"\"a/?\"", "pattern 'a/?': '?' is not supported (only '*' and '**')"},
      {"\"file?.txt\"", "pattern 'file?.txt': '?' is not supported (only '*' and '**')"},
      {"\"[ab]/.env\"",
       "pattern '[ab]/.env': '[' (character classes) is not supported (only '*' and '**')"},
      {"\"x[\"", "pattern 'x[': '[' (character classes) is not supported (only '*' and '**')"},
      {"\"a\\\\*b\"", "pattern 'a\\*b': '\\' (escapes) is not supported in a pattern"},
      {"\"**\"",
       "pattern '**': '**' cannot end a pattern (everything below a directory is protected by "
       "naming the directory itself)"},
      {"\"src/**\"",
       "pattern 'src/**': '**' cannot end a pattern (everything below a directory is protected "
       "by naming the directory itself)"},
      {"\"**/**/.git\"", "pattern '**/**/.git': '**/**' is redundant; write '**' once"},
      {"\"*/../x\"", "'..' is not allowed in a path"},
      {"\"${WORK*}/x\"",
       "unknown variable '${WORK*}' (known: ${WORKSPACE}, ${HOME}, ${TMPDIR}, ~)"},
      {"\"a/${HOME}/*\"", "a variable may only start a path"},
  };
  for (const auto& c : cases)
    expect_errors(kHead + "  protect: [.env, " + c.entry + "]\n",
                  "p.yaml:4:19: error: in 'protect': " + c.message + "\n");
  // deny entries: the same forms, and a relative pattern (deny roots are absolute).
  expect_errors(kHead + "  deny: [\"/srv/a**b\"]\n",
                "p.yaml:4:10: error: in 'deny': pattern '/srv/a**b" + why_star + "a**b'\n");
  expect_errors(kHead + "  deny: [\"**/.env\"]\n",
                "p.yaml:4:10: error: in 'deny': relative path '**/.env'; an absolute path or a "
                "variable is required\n");
  // Block style: the column of the entry itself.
  expect_errors(kHead + "  protect:\n    - .git\n    - 'a/[x]'\n",
                "p.yaml:6:7: error: in 'protect': pattern 'a/[x]': '[' (character classes) is "
                "not supported (only '*' and '**')\n");
}

BOOST_AUTO_TEST_CASE(no_glob_character_is_taken_literally_elsewhere) {
  expect_errors(kHead + "  read: [\"/opt/*\"]\n",
                "p.yaml:4:10: error: in 'read': '/opt/*' is a pattern; patterns are allowed only "
                "in 'protect' and 'deny'\n");
  expect_errors(kHead + "  write: [\"${WORKSPACE}/b?ild\"]\n",
                "p.yaml:4:11: error: in 'write': '${WORKSPACE}/b?ild' is a pattern; patterns are "
                "allowed only in 'protect' and 'deny'\n");
  expect_errors(kHead + "  read: [\"/srv/[abc]\"]\n",
                "p.yaml:4:10: error: in 'read': '/srv/[abc]' is a pattern; patterns are allowed "
                "only in 'protect' and 'deny'\n");
}

BOOST_AUTO_TEST_CASE(a_pattern_listed_twice_is_an_error) {
  expect_errors(kHead + "  protect: [\"**/.git\", \"./**//.git\"]\n",
                "p.yaml:4:24: error: '**/.git' is listed twice in 'protect'\n");
}

BOOST_AUTO_TEST_CASE(lint_a_pattern_under_no_writable_root) {
  auto lints = [](const std::string& fs) {
    auto r = test::parse(kHead + fs);
    BOOST_TEST_REQUIRE(r.errors == "");
    std::string out;
    for (const auto& l : compiler::lint_policy(*r.policy, {})) out += l.str() + "\n";
    return out;
  };
  BOOST_TEST(lints("  protect: [\"/etc/*/x\", \"${WORKSPACE}/packages/*/.env\", \"**/.git\"]\n") ==
             "p.yaml:4:13: warning: protected pattern '/etc/*/x' can match nothing under a "
             "writable root; it is read-only anyway [ZP001]\n");
  // A prefix above the writable root reaches into it: no finding.
  BOOST_TEST(lints("  write: [\"/srv/ws\"]\n  protect: [\"/srv/*/.git\", \"/**/.env\"]\n") == "");
}

BOOST_AUTO_TEST_SUITE_END()
