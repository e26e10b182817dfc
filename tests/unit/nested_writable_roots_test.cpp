// Writable roots nested in one another, with protected paths and deny roots below the
// inner ones (issue 19; refused with exit 3 until 2026-12-06, docs/verify.md "Known
// limits"). Renaming a directory between two roots carries the inner root's mount, and
// every protected path below it, away; so the pins reach up to the outermost root, and
// the bwrap emitter binds each pin above a root before that root (a later recursive bind
// from the host would cover the inner root's mount). The kernel side is
// tests/kernel/nested_roots_test.cpp.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/analyzer/bwrap/verify_bwrap.hpp"
#include "compiler/pipeline.hpp"
#include "ir/path.hpp"
#include "support/parse.hpp"
#include "support/portable.hpp"

using namespace zpolicy;

namespace {

ir::Policy policy(const std::string& write, const std::string& protect,
                  const std::string& deny = "[]") {
  auto r = test::parse(
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n  write: " + write +
      "\n  protect: " + protect + "\n  deny: " + deny + "\n");
  BOOST_TEST_REQUIRE(r.errors == "");
  return *r.policy;
}

// The policies of the kernel test and more: two and three roots nested, protected paths
// and a deny root at each level, none below the inner root, sibling roots inside a root,
// a protected path in a sibling branch of an inner root, concrete paths.
std::vector<ir::Policy> nested_policies() {
  return {
      policy(R"(["${WORKSPACE}", "${WORKSPACE}/a/b"])", "[.env, .git]"),
      // Nothing protected below the inner root: its directory is pinned all the same (bwrap
      // looks the inner root's source up again on every run).
      policy(R"(["${WORKSPACE}", "${WORKSPACE}/a/b"])", "[]"),
      policy(R"(["${WORKSPACE}", "${WORKSPACE}/a/b", "${WORKSPACE}/a/b/c/d/e"])",
             "[.git, .env, data/agent-sessions]", R"(["${WORKSPACE}/a/b/c/secret"])"),
      policy(R"(["${WORKSPACE}", "${WORKSPACE}/a/b", "${WORKSPACE}/a/c"])",
             R"([.env, "${WORKSPACE}/a/d/.env"])"),
      policy(R"(["${WORKSPACE}", "${WORKSPACE}/x/y/z"])", R"(["${WORKSPACE}/x/w/.env"])"),
      policy("[/srv, /srv/app/data, /srv/app/data/cache/v1]", "[.env, keys/main]",
             "[/srv/app/data/private]"),
  };
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string text_of(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string all(const std::vector<ir::Diagnostic>& fs) {
  std::string out;
  for (const auto& f : fs) out += f.report() + "\n";
  return out;
}

// The index of the option `--bind PATH PATH` in an argv's lines.
size_t bind_at(const std::vector<std::string>& argv, const std::string& path) {
  for (size_t i = 0; i + 2 < argv.size(); ++i)
    if (argv[i] == "--bind" && argv[i + 1] == path && argv[i + 2] == path) return i;
  BOOST_FAIL("no --bind " + path);
  return 0;
}

std::string bwrap_args(const ir::Resolved& r) {
  for (const auto& a : compiler::emit_artifacts(r, compiler::Target::Linux))
    if (a.name == "bwrap.args") return a.content;
  BOOST_FAIL("no bwrap.args");
  return {};
}

// Both targets compile `p` with no error and verify it clean.
void compiles_clean(const ir::Policy& p) {
  for (const auto target : {compiler::Target::Linux, compiler::Target::Macos}) {
    ir::Diagnostics diags;
    const auto c = compiler::compile(p, target, ir::Mode::WorkspaceWrite, std::nullopt, diags);
    BOOST_TEST_REQUIRE(c.has_value(), diags.str());
    BOOST_TEST(!diags.has_errors(), diags.str());
    BOOST_TEST(c->findings.empty(), compiler::to_string(target) << "\n" << all(c->findings));
  }
}

bool has(const std::vector<ir::Diagnostic>& fs, const std::string& probe) {
  return std::any_of(fs.begin(), fs.end(), [&](const ir::Diagnostic& f) {
    return f.kind == "dropped-deny" && f.probe == probe;
  });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(nested_writable_roots)

BOOST_AUTO_TEST_CASE(pins_reach_from_the_outermost_writable_root) {
  const auto r = test::portable(nested_policies()[2], ir::Mode::WorkspaceWrite);
  std::set<std::string> pins;
  for (const auto& p : r.pin) pins.insert(p.path);
  // a, a/b/c and a/b/c/d lie between roots (a/b/c above the deny root too); the roots
  // are mount points already and are not pinned again.
  const std::set<std::string> expected = {"${WORKSPACE}/a",        "${WORKSPACE}/a/b/c",
                                          "${WORKSPACE}/a/b/c/d",  "${WORKSPACE}/data",
                                          "${WORKSPACE}/a/b/data", "${WORKSPACE}/a/b/c/d/e/data"};
  BOOST_TEST(pins == expected, boost::test_tools::per_element());

  const auto bare = test::portable(nested_policies()[1], ir::Mode::WorkspaceWrite);
  BOOST_TEST_REQUIRE(bare.pin.size() == 1u);
  BOOST_TEST(bare.pin[0].path == "${WORKSPACE}/a");
  BOOST_TEST(bare.pin[0].loc.str() == "p.yaml:5:27");
}

BOOST_AUTO_TEST_CASE(nested_roots_compile_and_verify_for_both_targets) {
  for (const auto& p : nested_policies()) compiles_clean(p);
}

// N20-2: a writable root, a protected path or another deny root strictly inside a deny
// root is not mounted (the deny wins, and bwrap cannot lay its read-only mask over mounts
// made below it first): both targets compile and verify clean, and nothing of the portable
// resolution lies below the deny root but the deny root itself.
BOOST_AUTO_TEST_CASE(what_lies_inside_a_deny_root_is_not_mounted) {
  const std::vector<ir::Policy> policies = {
      policy(R"(["${WORKSPACE}", "${WORKSPACE}/sec/out"])", "[.git]", R"(["${WORKSPACE}/sec"])"),
      policy(R"(["${WORKSPACE}", "${WORKSPACE}/sec/a/b/c"])", "[.env]", R"(["${WORKSPACE}/sec"])"),
      policy(R"(["${WORKSPACE}"])", "[.git, sec/inner]", R"(["${WORKSPACE}/sec"])"),
      policy(R"(["${WORKSPACE}"])", "[.git]", R"(["${WORKSPACE}/sec", "${WORKSPACE}/sec/inner"])"),
      // A21B-5: a writable root that is the deny root itself.
      policy(R"(["${WORKSPACE}", "${WORKSPACE}/sec"])", "[.git]", R"(["${WORKSPACE}/sec"])"),
  };
  for (const auto& p : policies) {
    const auto r = test::portable(p, ir::Mode::WorkspaceWrite);
    for (const auto* list : {&r.write, &r.protect, &r.pin, &r.deny})
      for (const auto& e : *list)
        BOOST_TEST((e.path == "${WORKSPACE}/sec" || !ir::path_within("${WORKSPACE}/sec", e.path)),
                   e.path);
    for (const auto& w : r.write) BOOST_TEST(w.path != "${WORKSPACE}/sec");
    BOOST_TEST(std::count_if(r.deny.begin(), r.deny.end(), [](const ir::ResolvedPath& d) {
                 return d.path == "${WORKSPACE}/sec";
               }) == 1);
    compiles_clean(p);
  }
}

BOOST_AUTO_TEST_CASE(each_pin_above_a_root_is_bound_before_it) {
  for (const auto& p : nested_policies()) {
    const auto r = test::portable(p, ir::Mode::WorkspaceWrite);
    const auto argv = lines_of(bwrap_args(r));
    size_t checked = 0;
    for (const auto& pin : r.pin)
      for (const auto& w : r.write)
        if (ir::path_within(pin.path, w.path) && pin.path != w.path) {
          BOOST_TEST(bind_at(argv, pin.path) < bind_at(argv, w.path), pin.path << " " << w.path);
          ++checked;
        }
    BOOST_TEST(checked > 0u);
  }
}

// The verifier does not take the emitter's word for the order: a pin bound after the inner
// root covers the root's mount with the host's directory (no mount point there), and a pin
// left out leaves the directory between the roots free to be renamed.
BOOST_AUTO_TEST_CASE(a_pin_bound_after_the_inner_root_or_left_out_is_refused) {
  const auto r = test::portable(nested_policies()[0], ir::Mode::WorkspaceWrite);
  const auto argv = lines_of(bwrap_args(r));
  const size_t pin = bind_at(argv, "${WORKSPACE}/a");
  BOOST_TEST_REQUIRE(compiler::verify_bwrap(r, text_of(argv)).empty());

  auto late = argv;
  const std::vector<std::string> moved(late.begin() + pin, late.begin() + pin + 3);
  late.erase(late.begin() + pin, late.begin() + pin + 3);
  const size_t root = bind_at(late, "${WORKSPACE}/a/b");
  late.insert(late.begin() + root + 3, moved.begin(), moved.end());
  const auto late_findings = compiler::verify_bwrap(r, text_of(late));
  BOOST_TEST(has(late_findings, "delete ${WORKSPACE}/a/b"), all(late_findings));

  auto missing = argv;
  missing.erase(missing.begin() + pin, missing.begin() + pin + 3);
  const auto missing_findings = compiler::verify_bwrap(r, text_of(missing));
  BOOST_TEST(has(missing_findings, "delete ${WORKSPACE}/a"), all(missing_findings));
}

BOOST_AUTO_TEST_SUITE_END()
