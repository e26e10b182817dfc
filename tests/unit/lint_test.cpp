// Policy lints (docs/lints.md): one policy per lint ID that trips exactly that lint, with
// its severity and location, and no lint at all on the golden policies.
#include "compiler/lint/policy_lint.hpp"

#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "golden_support.hpp"
#include "support/parse.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;

namespace {

const std::string kHead = "zpolicy: 1\nmode: workspace-write\n";

std::vector<compiler::Lint> lints_of(const std::string& text,
                                     const compiler::LintContext& ctx = {}) {
  auto parsed = test::parse(text);
  BOOST_REQUIRE_MESSAGE(parsed.policy, parsed.errors);
  return compiler::lint_policy(*parsed.policy, ctx);
}

// The only lint found is `id` at line:col with that severity.
void expect_one(const std::vector<compiler::Lint>& lints, const char* id, ir::Severity severity,
                int line, int col) {
  BOOST_REQUIRE_EQUAL(lints.size(), 1u);
  BOOST_TEST(lints[0].id == id);
  BOOST_TEST(ir::to_string(lints[0].severity) == ir::to_string(severity));
  BOOST_TEST(lints[0].loc.file == "p.yaml");
  BOOST_TEST(lints[0].loc.line == line);
  BOOST_TEST(lints[0].loc.col == col);
  BOOST_TEST(lints[0].str().ends_with(std::string(" [") + id + "]"), lints[0].str());
}

// Host facts with every anchor inside one temp directory.
struct Host {
  test::TempDir dir;
  compiler::HostFacts facts;
  Host() { facts = {dir.mkdir("ws"), dir.mkdir("home"), dir.mkdir("tmp"), dir.str()}; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(policy_lints)

BOOST_AUTO_TEST_CASE(zp001_protected_path_under_no_writable_root) {
  expect_one(lints_of(kHead +
                      "filesystem:\n  write: [\"${WORKSPACE}\"]\n  protect: [.git, /etc/passwd]\n"),
             "ZP001", ir::Severity::Warning, 5, 19);
}

BOOST_AUTO_TEST_CASE(zp001_not_for_a_protected_path_inside_a_writable_root) {
  BOOST_TEST(lints_of(kHead + "filesystem:\n  write: [/srv]\n  protect: [/srv/keys]\n").empty());
}

BOOST_AUTO_TEST_CASE(zp002_nested_writable_root) {
  expect_one(lints_of(kHead + "filesystem:\n  write: [\"${WORKSPACE}\", \"${WORKSPACE}/out\"]\n"),
             "ZP002", ir::Severity::Warning, 4, 27);
}

BOOST_AUTO_TEST_CASE(zp003_home_or_a_startup_file_writable) {
  expect_one(lints_of(kHead + "filesystem:\n  write: [\"${HOME}\"]\n"), "ZP003",
             ir::Severity::Error, 4, 11);
  expect_one(lints_of(kHead + "filesystem:\n  write: [\"~/.config/fish\"]\n"), "ZP003",
             ir::Severity::Error, 4, 11);
  BOOST_TEST(lints_of(kHead + "filesystem:\n  write: [\"~/.cache\"]\n").empty());
}

BOOST_AUTO_TEST_CASE(zp004_policy_file_in_a_writable_root) {
  Host h;
  const std::string policy_file = h.dir.write("ws/p.yaml", "");
  compiler::LintContext ctx{h.facts, policy_file, std::nullopt, std::nullopt};
  expect_one(lints_of(kHead + "filesystem:\n  write: [\"${WORKSPACE}\"]\n", ctx), "ZP004",
             ir::Severity::Error, 4, 11);
  // Portable (no host): the check is skipped.
  BOOST_TEST(lints_of(kHead + "filesystem:\n  write: [\"${WORKSPACE}\"]\n",
                      {std::nullopt, policy_file, std::nullopt, std::nullopt})
                 .empty());
}

BOOST_AUTO_TEST_CASE(zp005_zpolicy_binary_in_a_writable_root) {
  Host h;
  compiler::LintContext ctx{h.facts, std::nullopt, h.facts.tmpdir + "/bin/zpolicy", std::nullopt};
  expect_one(lints_of(kHead + "filesystem:\n  write: [\"${TMPDIR}\"]\n", ctx), "ZP005",
             ir::Severity::Error, 4, 11);
}

BOOST_AUTO_TEST_CASE(zp006_writable_root_is_a_symlink_out_of_itself) {
  Host h;
  h.dir.symlink(h.facts.home, "ws/out");
  compiler::LintContext ctx{h.facts, std::nullopt, std::nullopt, std::nullopt};
  expect_one(lints_of(kHead + "filesystem:\n  write: [\"${WORKSPACE}/out\"]\n", ctx), "ZP006",
             ir::Severity::Warning, 4, 11);
  BOOST_TEST(lints_of(kHead + "filesystem:\n  write: [\"${WORKSPACE}\"]\n", ctx).empty());
}

BOOST_AUTO_TEST_CASE(zp007_full_network_with_three_deny_roots) {
  const std::string fs =
      "filesystem:\n  write: [\"${WORKSPACE}\"]\n  deny: [\"~/.ssh\", \"~/.aws\"";
  expect_one(lints_of(kHead + fs + ", \"~/.gnupg\"]\nnetwork: full\n"), "ZP007",
             ir::Severity::Warning, 6, 10);
  BOOST_TEST(lints_of(kHead + fs + "]\nnetwork: full\n").empty());
  BOOST_TEST(lints_of(kHead + fs + ", \"~/.gnupg\"]\nnetwork: loopback\n").empty());
}

BOOST_AUTO_TEST_CASE(zp008_deny_root_inside_a_protected_path) {
  expect_one(
      lints_of(kHead + "filesystem:\n  write: [\"${WORKSPACE}\"]\n  protect: [.git]\n  deny: "
                       "[\"${WORKSPACE}/.git/hooks\"]\n"),
      "ZP008", ir::Severity::Warning, 6, 10);
}

BOOST_AUTO_TEST_CASE(zp009_filesystem_root_denied) {
  expect_one(lints_of("zpolicy: 1\nmode: read-only\nfilesystem:\n  deny: [\"/\"]\n"), "ZP009",
             ir::Severity::Error, 4, 10);
}

BOOST_AUTO_TEST_CASE(zp010_danger_full_access) {
  expect_one(lints_of("zpolicy: 1\nmode: danger-full-access\n"), "ZP010", ir::Severity::Warning, 2,
             7);
}

BOOST_AUTO_TEST_CASE(lints_are_sorted_by_location) {
  auto lints =
      lints_of(kHead +
               "filesystem:\n  write: [\"${WORKSPACE}\", \"${WORKSPACE}/out\", \"${HOME}\"]\n"
               "  protect: [/etc/passwd]\n");
  std::vector<std::string> got;
  for (const auto& l : lints)
    got.push_back(l.id + "@" + std::to_string(l.loc.line) + ":" + std::to_string(l.loc.col));
  BOOST_TEST(got == (std::vector<std::string>{"ZP002@4:27", "ZP003@4:47", "ZP001@5:13"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(no_lint_on_the_golden_policies) {
  for (const auto& f : test::golden_policy_files()) {
    auto lints = lints_of(test::slurp(f.string()));
    for (const auto& l : lints) BOOST_ERROR(f.filename().string() + ": " + l.str());
  }
}

BOOST_AUTO_TEST_SUITE_END()
