// A portable profile proven with each symbolic root bound inside each other one
// (docs/verify.md, "Nested symbolic roots", issue 19): a grant that only a nesting can
// reach (a write in ${HOME}/x that lands on a protected path when ${WORKSPACE} lies
// there) is a finding, the emitted profiles are proven for every nesting, and the places
// are grouped so that golden/large's 605 places below ${HOME} are a few proofs.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "compiler/analyzer/sbpl/sbpl_decided_trees.hpp"
#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "compiler/analyzer/sbpl/sbpl_nested_places.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "golden_support.hpp"

using namespace zpolicy;
using compiler::SbplBindings;

namespace {

struct Golden {
  ir::Resolved policy;
  std::string profile, params;
};

std::vector<Golden> goldens() {
  std::vector<Golden> out;
  for (auto& g : test::golden_compiles(compiler::Target::Macos))
    out.push_back({g.compiled.resolved, g.artifact("profile.sb"), g.artifact("params.txt")});
  return out;
}

Golden golden(const std::string& name) {
  for (auto& g : test::golden_compiles(compiler::Target::Macos))
    if (g.name == name)
      return {g.compiled.resolved, g.artifact("profile.sb"), g.artifact("params.txt")};
  BOOST_FAIL("no golden " + name);
  return {};
}

std::vector<ir::Diagnostic> verify(const Golden& g, const std::string& profile,
                                   const std::string& params, SbplBindings bindings) {
  auto list = compiler::parse_params_text(params);
  BOOST_REQUIRE_MESSAGE(list, list.error().message);
  return compiler::verify_sbpl(g.policy, profile, *list, bindings);
}

std::string all(const std::vector<ir::Diagnostic>& fs) {
  std::string out;
  for (const auto& f : fs) out += f.report() + "\n";
  return out;
}

// The findings of `profile`, whose grant only a nesting of roots reaches: none with each
// root bound alone, and a dropped deny first with every nesting.
std::vector<ir::Diagnostic> dropped_only_when_nested(const Golden& g, const std::string& profile,
                                                     const std::string& params) {
  BOOST_TEST(verify(g, profile, params, SbplBindings::EachRootAlone).empty());
  auto fs = verify(g, profile, params, SbplBindings::EveryNesting);
  BOOST_TEST_REQUIRE(!fs.empty());
  BOOST_TEST((fs.front().kind == "dropped-deny"), all(fs));
  return fs;
}

// The value of parameter `name` in `params`.
std::string value_of(const std::string& params, const std::string& name) {
  const auto at = params.find(name + "=");
  BOOST_REQUIRE(at == 0 || (at != std::string::npos && params[at - 1] == '\n'));
  const auto start = at + name.size() + 1;
  return params.substr(start, params.find('\n', start) - start);
}

// The profile with a last rule that lets write `${OUTER}/x` where it meets `protected`, a
// parameter of another root: nothing when the roots are apart (no path is both), a write
// of a protected path when that root is bound below `${OUTER}/x`.
std::string nesting_grant(const std::string& profile, const std::string& protected_param) {
  return profile +
         "(allow file-write* (require-all (subpath (param \"ZP_NEST_X\")) (subpath (param \"" +
         protected_param + "\"))))\n";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_nested_roots)

// golden/large, whose 313 proofs cost half a second at -O2 (several under ASan), is proved
// in the mutation tier (sbpl_nested_roots_mutants), which CI runs optimised.
BOOST_AUTO_TEST_CASE(the_emitted_profiles_hold_for_every_nesting) {
  size_t proved = 0;
  for (const auto& g : test::golden_compiles(compiler::Target::Macos)) {
    if (g.name == "large") continue;
    const Golden small{g.compiled.resolved, g.artifact("profile.sb"), g.artifact("params.txt")};
    const auto fs = verify(small, small.profile, small.params, SbplBindings::EveryNesting);
    BOOST_TEST(fs.empty(), g.name << "\n" << all(fs));
    ++proved;
  }
  BOOST_TEST(proved >= 5u);
}

// The case of the brief: a write in ${HOME}/x that only a ${WORKSPACE} bound there
// reaches. Portable reading and single bindings find nothing; a nesting does.
BOOST_AUTO_TEST_CASE(a_write_only_a_nesting_reaches_is_a_finding) {
  const Golden g = golden("deny-roots");
  const std::string profile = nesting_grant(g.profile, "PROTECTED_WORKSPACE_GIT");
  const std::string params = g.params + "ZP_NEST_X=${HOME}/x\n";
  const auto fs = dropped_only_when_nested(g, profile, params);
  const std::string text = all(fs);
  BOOST_TEST(text.find("with ${WORKSPACE} bound to ${HOME}") != std::string::npos, text);
  BOOST_TEST(text.find("/.git") != std::string::npos, text);
  BOOST_TEST(text.find("PROTECTED_WORKSPACE_GIT") != std::string::npos, text);
}

// Before 2026-12-05 the emitter pinned only the directories it saw inside a writable root:
// with ${HOME} bound inside ${TMPDIR}, nothing kept ${HOME} from being renamed away with
// the deny roots in it. That profile is refused now; the emitted one pins ${HOME}.
BOOST_AUTO_TEST_CASE(a_root_that_carries_deny_roots_must_stay_in_place) {
  const Golden g = golden("deny-roots");
  BOOST_TEST_REQUIRE(value_of(g.params, "PROTECTED_ANCESTOR_HOME") == "${HOME}");
  std::string profile, line;
  for (std::istringstream in(g.profile); std::getline(in, line);)
    if (line.find("\"PROTECTED_ANCESTOR_HOME\"") == std::string::npos) profile += line + "\n";
  BOOST_TEST_REQUIRE(profile.size() < g.profile.size());
  BOOST_TEST(verify(g, profile, g.params, SbplBindings::EachRootAlone).empty());
  const auto fs = verify(g, profile, g.params, SbplBindings::EveryNesting);
  const std::string text = all(fs);
  BOOST_TEST_REQUIRE(!fs.empty());
  const bool inside_a_writable_root =
      text.find("with ${HOME} bound to ${TMPDIR}") != std::string::npos ||
      text.find("with ${HOME} bound to ${WORKSPACE}") != std::string::npos;
  BOOST_TEST(inside_a_writable_root, text);
  BOOST_TEST(text.find("carry deny root ${") != std::string::npos, text);
}

// golden/large names 605 places below ${HOME}; those the profile and the policy cannot
// tell apart (the twenty tool caches, their protected entries) are one proof each.
// Only the pairs are sought (one step): the chains of three cost four times more and
// add nothing to what is counted here.
BOOST_AUTO_TEST_CASE(places_that_nothing_tells_apart_are_one_proof) {
  const Golden g = golden("large");
  const auto list = compiler::parse_params_text(g.params);
  BOOST_TEST_REQUIRE(list.has_value(), list.error().message);
  const compiler::SbplParams values(list->begin(), list->end());
  const auto profile = compiler::bind_params(*compiler::parse_sbpl(g.profile), values);
  const auto result =
      compiler::nested_chains(g.policy, profile, {"${HOME}", "${TMPDIR}", "${WORKSPACE}"}, {},
                              profile.filters.size() + values.size(), 1);
  BOOST_TEST_REQUIRE(result.has_value());
  const auto* chains = &*result;
  size_t places = 0, proofs = 0;
  for (const auto& c : *chains) {
    BOOST_TEST_REQUIRE(!c.steps.empty());
    const auto& b = c.steps.front();
    if (c.steps.size() == 1 && b.root == "${WORKSPACE}" && b.inside == "${HOME}") {
      places += b.stands_for;
      ++proofs;
      BOOST_TEST((b.place == b.inside || b.place.starts_with(b.inside + "/")), b.place);
    }
  }
  BOOST_TEST(places >= 605u);
  BOOST_TEST(proofs <= 32u);
  BOOST_TEST(chains->size() <= compiler::kMaxNestedProofs);
}

// The child of a place that nothing names (`P/zp-bind`, else `P/zp-bind-1`, ...) stands
// for every such child. With `${HOME}/zp-bind-1` and `${HOME}/zp-bind/.git` named (and
// `${HOME}/zp-bind` not), the search looked at the first named path at or after
// `${HOME}/zp-bind` only, `${HOME}/zp-bind-1` ('-' sorts before '/'), and took
// `${HOME}/zp-bind` for such a child though a named path lies below it: a rule that writes
// the workspace's `.git` at every place but the named ones was proved nowhere it grants,
// and verify accepted it (exit 0), though with ${WORKSPACE} at ${HOME}/proj it drops the
// deny (found by shrink18). Now the fresh child is `${HOME}/zp-bind-2`.
BOOST_AUTO_TEST_CASE(a_name_sorting_between_a_child_and_its_subtree_hides_no_place) {
  const Golden g = golden("default");
  const std::string params = g.params +
                             "ZP_H=${HOME}\nZP_HG=${HOME}/.git\nZP_BG=${HOME}/zp-bind/.git\n"
                             "ZP_B1=${HOME}/zp-bind-1\n";
  const std::string profile =
      g.profile +
      "(allow file-write* (require-all (subpath (param \"ZP_H\")) (require-not (literal (param "
      "\"ZP_H\"))) (literal (param \"PROTECTED_WORKSPACE_GIT\")) (require-not (literal (param "
      "\"ZP_HG\"))) (require-not (subpath (param \"ZP_HG\"))) (require-not (literal (param "
      "\"ZP_BG\"))) (require-not (subpath (param \"ZP_BG\"))) (require-not (subpath (param "
      "\"ZP_B1\")))))\n";
  const auto fs = dropped_only_when_nested(g, profile, params);
  const std::string text = all(fs);
  BOOST_TEST(text.find("with ${WORKSPACE} bound to ${HOME}/zp-bind-2 inside ${HOME}") !=
                 std::string::npos,
             text);
}

// A hostile profile whose every path under ${HOME} is told apart from the others (each
// its own rule) is refused past the bound rather than proved place by place.
BOOST_AUTO_TEST_CASE(more_kinds_of_place_than_the_bound_are_refused) {
  const Golden g = golden("deny-roots");
  std::string profile = g.profile, params = g.params;
  for (int k = 0; k < 80; ++k) {
    const std::string name = "ZP_NEST_" + std::to_string(k);
    params += name + "=${HOME}/d" + std::to_string(k) + "\n";
    profile += "(deny file-write* (literal (param \"" + name + "\")))\n";
  }
  const auto fs = verify(g, profile, params, SbplBindings::EveryNesting);
  BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
  BOOST_TEST((fs.front().kind == "malformed-artifact"));
  BOOST_TEST(fs.front().expected.find("kinds of place") != std::string::npos, all(fs));
}

// Few classes, but each proof binds a big profile again: refused past the work bound,
// in a fraction of issue 19's 2 s (docs/verify.md, "Nested symbolic roots").
BOOST_AUTO_TEST_CASE(more_binding_work_than_the_bound_is_refused) {
  const Golden g = golden("default");
  std::string profile = g.profile, params = g.params;
  for (int k = 0; k < 27; ++k) {
    params += "ZP_H" + std::to_string(k) + "=${HOME}/d" + std::to_string(k) + "\n";
    profile += "(allow file-read* (literal (param \"ZP_H" + std::to_string(k) + "\")))\n";
    params += "ZP_W" + std::to_string(k) + "=${WORKSPACE}/.git/w" + std::to_string(k) + "\n";
    profile += "(deny file-write-mode (literal (param \"ZP_W" + std::to_string(k) + "\")))\n";
  }
  profile += "(allow file-read*";
  for (int i = 0; i < 14000; ++i) {
    params += "P" + std::to_string(i) + "=${HOME}/pad/p" + std::to_string(i) + "\n";
    profile += " (literal (param \"P" + std::to_string(i) + "\"))";
  }
  profile += ")\n";
  BOOST_TEST(verify(g, profile, params, SbplBindings::EachRootAlone).empty());
  const auto fs = verify(g, profile, params, SbplBindings::EveryNesting);
  BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
  BOOST_TEST((fs.front().kind == "malformed-artifact"));
  BOOST_TEST(fs.front().expected.find("filters and parameters bound") != std::string::npos,
             all(fs));
}

BOOST_AUTO_TEST_SUITE_END()

// Three or more symbolic roots nested in one chain (docs/verify.md, "Nested symbolic
// roots"): a rule whose filters are true only where every root of a chain holds the path
// is a finding, whichever way its filters are combined, though no pair of roots makes it
// true. Each is a small golden profile plus one rule (about 0.03 s at -O2 each, the
// unit tier runs under ASan): golden/large, whose proofs cost ten times more, is proved in
// the mutation tier (sbpl_nested_roots_mutants/golden_large_holds_for_every_nesting).
BOOST_AUTO_TEST_SUITE(sbpl_nested_chains)

// The reproduction of 2026-12-05, found on golden/large; golden/deny-roots has the same
// roots and parameters: with ${WORKSPACE} = ~/.ssh and ${TMPDIR} below it, the rule grants
// writing in the deny root. Before chains were proved: no finding.
BOOST_AUTO_TEST_CASE(a_write_only_three_nested_roots_reach_is_a_finding) {
  const Golden g = golden("deny-roots");
  const std::string profile =
      g.profile +
      "(allow file-write* (require-all (subpath (param \"WRITABLE_ROOT_TMPDIR\")) (subpath "
      "(param \"WRITABLE_ROOT_WORKSPACE\")) (subpath (param \"DENY_ROOT_HOME_SSH\"))))\n";
  const auto fs = dropped_only_when_nested(g, profile, g.params);
  const std::string text = all(fs);
  BOOST_TEST(text.find("deny root ${HOME}/.ssh") != std::string::npos, text);
  // The trace names the whole chain: each root, where it is bound and inside which.
  for (const char* root : {"${TMPDIR} bound to ${HOME}", "${WORKSPACE} bound to ${HOME}"})
    BOOST_TEST(text.find(root) != std::string::npos, root << "\n" << text);
}

// The same rule spelled with require-not and require-any (De Morgan): true where the
// three subpaths are.
BOOST_AUTO_TEST_CASE(a_chain_reached_through_require_not_and_require_any_is_a_finding) {
  const Golden g = golden("deny-roots");
  const std::string profile =
      g.profile +
      "(allow file-write* (require-all (subpath (param \"WRITABLE_ROOT_TMPDIR\")) (require-not "
      "(require-any (require-not (subpath (param \"WRITABLE_ROOT_WORKSPACE\"))) (require-not "
      "(subpath (param \"DENY_ROOT_HOME_SSH\")))))))\n";
  dropped_only_when_nested(g, profile, g.params);
}

// Three roots bound to one directory: the literal of each is true only there. With
// ${TMPDIR} = ${WORKSPACE} = ${HOME}, removing ${HOME} carries its deny roots away.
BOOST_AUTO_TEST_CASE(three_roots_bound_to_one_directory_are_proved) {
  const Golden g = golden("deny-roots");
  const std::string profile =
      g.profile +
      "(allow file-write* (require-all (literal (param \"WRITABLE_ROOT_TMPDIR\")) (literal "
      "(param \"WRITABLE_ROOT_WORKSPACE\")) (literal (param \"PROTECTED_ANCESTOR_HOME\"))))\n";
  BOOST_TEST(verify(g, profile, g.params, SbplBindings::EachRootAlone).empty());
  const auto fs = verify(g, profile, g.params, SbplBindings::EveryNesting);
  BOOST_TEST_REQUIRE(!fs.empty());
  const bool removable = std::any_of(fs.begin(), fs.end(), [](const ir::Diagnostic& f) {
    return f.kind == "dropped-deny" && f.probe == "file-write-unlink ${HOME}" &&
           f.expected.find("would carry") != std::string::npos;
  });
  BOOST_TEST(removable, all(fs));
}

// Roots that only the parameters name: with ${WORKSPACE}, four roots in one chain, and
// the rule is true only where all four hold a path (in ${WORKSPACE}/.git when the other
// three are bound there, in any order).
BOOST_AUTO_TEST_CASE(a_chain_of_four_roots_is_proved) {
  const Golden g = golden("loopback");
  const std::string profile =
      g.profile +
      "(allow file-write* (require-all (subpath (param \"ZP_A\")) (subpath (param \"ZP_B\")) "
      "(subpath (param \"ZP_C\")) (subpath (param \"PROTECTED_WORKSPACE_GIT\"))))\n";
  const std::string params = g.params + "ZP_A=${A}\nZP_B=${B}\nZP_C=${C}\n";
  const auto fs = dropped_only_when_nested(g, profile, params);
  const std::string text = all(fs);
  BOOST_TEST(text.find("/.git") != std::string::npos, text);
  // The binding is a chain of all four: three of them bound, inside the fourth.
  const std::string binding = fs.front().trace.front();
  size_t bound = 0;
  for (const char* root : {"${A} bound", "${B} bound", "${C} bound", "${WORKSPACE} bound"})
    bound += binding.find(root) != std::string::npos;
  BOOST_TEST(bound == 3u, binding);
}

// A chain under a concrete place (session 10): the rule is true only where /Users,
// ${HOME} and ${WORKSPACE}/.git all hold the path, so on every Mac that keeps the
// workspace in the home directory (${HOME} = /Users/u, ${WORKSPACE} = /Users/u/src/app)
// it lets the protected .git be written. Each root bound alone to /Users leaves the other
// opaque, and a chain left symbolic is below no concrete path: before chains were bound
// under the profile's concrete places, no proof made the three filters true together.
BOOST_AUTO_TEST_CASE(a_chain_under_a_concrete_place_is_proved) {
  const Golden g = golden("deny-roots");
  const std::string profile =
      g.profile +
      "(allow file-write* (require-all (subpath \"/Users\") (subpath (param "
      "\"PROTECTED_ANCESTOR_HOME\")) (subpath (param \"PROTECTED_WORKSPACE_GIT\"))))\n";
  const auto fs = dropped_only_when_nested(g, profile, g.params);
  const std::string text = all(fs);
  BOOST_TEST(fs.front().probe.find("/.git") != std::string::npos, text);
  // The binding names the concrete place of the chain's first root, then the chain.
  const std::string binding = fs.front().trace.front();
  BOOST_TEST(binding.find("${HOME} bound to /Users") != std::string::npos, binding);
  BOOST_TEST(binding.find("${WORKSPACE} bound to /Users") != std::string::npos, binding);
}

// Issue 19's own reproduction, (allow file-read* (subpath "/Users")), reads ~/.ssh on
// every Mac. Before session 10 it was accepted whenever the policy named a concrete path
// below /Users (here a read root): the policy's paths and their ancestors were no places
// for a root, so ${HOME} was never bound below /Users. `zpolicy verify` binds the roots
// there too; the emitted profile still verifies.
BOOST_AUTO_TEST_CASE(a_place_the_policy_names_is_a_place_for_a_root) {
  Golden g = golden("deny-roots");
  BOOST_TEST_REQUIRE(!g.policy.read.empty());
  g.policy.read.push_back(g.policy.read.front());
  g.policy.read.back().path = "/Users/Shared/tools";
  const auto clean = verify(g, g.profile, g.params, SbplBindings::EveryNesting);
  BOOST_TEST(clean.empty(), all(clean));
  const std::string profile = g.profile + "(allow file-read* (subpath \"/Users\"))\n";
  const auto fs = dropped_only_when_nested(g, profile, g.params);
  const std::string text = all(fs);
  BOOST_TEST(fs.front().expected.find("deny root /Users/") != std::string::npos, text);
  BOOST_TEST(fs.front().trace.front().find("with ${HOME} bound to /Users") != std::string::npos,
             text);
}

// The places of the policy's own paths are bounded apart from the others (32): with 11
// concrete read roots that the profile names too (a harmless read of each), the default
// policy has 34 places (each root, a child, /opt/tK, /opt), more than the 32 of the
// others, proved (one symbolic root: 34 proofs); with 22, 67, past the 64 that zpolicy
// verify proves, and the profile is refused rather than left unproven there.
BOOST_AUTO_TEST_CASE(the_policy_places_are_bounded_and_refused_past_it) {
  for (const int roots : {11, 22}) {
    Golden g = golden("default");
    std::string profile = g.profile;
    for (int k = 0; k < roots; ++k) {
      g.policy.read.push_back(g.policy.read.front());
      g.policy.read.back().path = "/opt/t" + std::to_string(k) + "/tools";
      profile += "(allow file-read* (literal \"" + g.policy.read.back().path + "\"))\n";
    }
    BOOST_TEST(verify(g, profile, g.params, SbplBindings::EachRootAlone).empty());
    const auto fs = verify(g, profile, g.params, SbplBindings::EveryNesting);
    if (roots == 11) {
      BOOST_TEST(fs.empty(), all(fs));
      continue;
    }
    BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
    BOOST_TEST((fs.front().kind == "malformed-artifact"));
    BOOST_TEST(fs.front().actual.find("for 67 places") != std::string::npos, all(fs));
  }
}

// A pair under a place the policy names (session 12): golden/deny-roots denies
// /etc/shadow, so /etc and /etc/shadow are the policy's places, which chains were never
// bound under. The rule is true only where /etc, ${HOME} and ${WORKSPACE}/.git all hold
// a path: with ${HOME} bound to /etc and ${WORKSPACE} inside it, it lets the protected
// .git be written. Accepted at 130aaab (zpolicy verify exit 0).
BOOST_AUTO_TEST_CASE(a_pair_under_a_place_the_policy_names_is_proved) {
  const Golden g = golden("deny-roots");
  const std::string profile =
      g.profile +
      "(allow file-write* (require-all (subpath \"/etc\") (subpath (param "
      "\"PROTECTED_ANCESTOR_HOME\")) (subpath (param \"PROTECTED_WORKSPACE_GIT\"))))\n";
  const auto fs = dropped_only_when_nested(g, profile, g.params);
  const std::string text = all(fs);
  BOOST_TEST(fs.front().probe.find("/etc/.git") != std::string::npos, text);
  // The policy line (the protect list) and the rule the profile allows it by.
  BOOST_TEST(fs.front().loc.line == 7, text);
  BOOST_TEST(text.find("allowed by rule 19 (profile.sb line") != std::string::npos, text);
  const std::string binding = fs.front().trace.front();
  BOOST_TEST(binding.find("${HOME} bound to /etc, ${WORKSPACE} bound to /etc inside ${HOME}") !=
                 std::string::npos,
             binding);
}

// The same pair where it happens on a Mac: the policy reads a path below /Users, so
// /Users is one of its places, and ${HOME} = /Users/u with the workspace inside it lets
// the protected .git be written. Accepted at 130aaab (exit 0).
BOOST_AUTO_TEST_CASE(a_pair_under_users_when_the_policy_names_a_path_there_is_proved) {
  Golden g = golden("deny-roots");
  g.policy.read.push_back(g.policy.read.front());
  g.policy.read.back().path = "/Users/Shared/tools";
  const std::string profile =
      g.profile +
      "(allow file-write* (require-all (subpath \"/Users\") (subpath (param "
      "\"PROTECTED_ANCESTOR_HOME\")) (subpath (param \"PROTECTED_WORKSPACE_GIT\"))))\n";
  const auto fs = verify(g, profile, g.params, SbplBindings::EveryNesting);
  BOOST_TEST_REQUIRE(!fs.empty());
  const std::string text = all(fs);
  BOOST_TEST((fs.front().kind == "dropped-deny"), text);
  BOOST_TEST(fs.front().probe.find("/Users/.git") != std::string::npos, text);
  BOOST_TEST(fs.front().trace.front().find("${HOME} bound to /Users, ${WORKSPACE} bound to "
                                           "/Users inside ${HOME}") != std::string::npos,
             text);
}

// Chains of three and four roots under a place the policy names (session 13). Each rule is
// true only where a concrete place of the policy and three or four roots all hold a path;
// pairs under those places (session 12) left the third root opaque, so every one of them
// was accepted at 25ff4d2 (zpolicy verify exit 0): /etc above the deny root /etc/shadow,
// the deny root itself (a literal of a root), and /private/var above a read root the policy
// adds, with four roots two of which only the parameters name.
BOOST_AUTO_TEST_CASE(chains_of_three_and_four_under_a_place_the_policy_names_are_proved) {
  struct Member {
    const char* golden;
    const char* policy_read;  // a concrete read root added to the policy, or null
    std::string rule, params;
    int line;           // the policy line that decides (its index in the deny-roots lists)
    const char* probe;  // below the place of the chain
  };
  const std::string ws_git = "(subpath (param \"PROTECTED_WORKSPACE_GIT\"))";
  const Member members[] = {
      // Issue 19's session-12 reproduction: writes in ~/.ssh with ${HOME} under /etc.
      {"deny-roots", nullptr,
       "(allow file-write* (require-all (subpath \"/etc\") (subpath (param "
       "\"WRITABLE_ROOT_TMPDIR\")) (subpath (param \"WRITABLE_ROOT_WORKSPACE\")) (subpath "
       "(param \"DENY_ROOT_HOME_SSH\"))))",
       "", 8, "/etc/"},
      // Reads of ${HOME} itself (a literal) where it lies in the deny root /etc/shadow.
      {"deny-roots", nullptr,
       "(allow file-read* (require-all (subpath \"/etc/shadow\") (subpath (param "
       "\"WRITABLE_ROOT_WORKSPACE\")) (subpath (param \"WRITABLE_ROOT_TMPDIR\")) (literal "
       "(param \"PROTECTED_ANCESTOR_HOME\"))))",
       "", 8, "/etc/shadow"},
      // A write of the protected .git (a literal) under /private/var, which the policy
      // names only through a read root below it.
      {"deny-roots", "/private/var/zp-data",
       "(allow file-write* (require-all (subpath \"/private/var\") (subpath (param "
       "\"PROTECTED_ANCESTOR_HOME\")) (subpath (param \"WRITABLE_ROOT_TMPDIR\")) (literal "
       "(param \"PROTECTED_WORKSPACE_GIT\"))))",
       "", 7, "/private/var/"},
      // Four roots: ${A}, ${B} and ${C} only the parameters name, and ${WORKSPACE}.
      {"loopback", "/private/var/zp-data",
       "(allow file-write* (require-all (subpath \"/private/var\") (subpath (param \"ZP_A\")) "
       "(subpath (param \"ZP_B\")) (subpath (param \"ZP_C\")) " +
           ws_git + "))",
       "ZP_A=${A}\nZP_B=${B}\nZP_C=${C}\n", 6, "/private/var/"},
  };
  for (const Member& m : members) {
    Golden g = golden(m.golden);
    if (m.policy_read) {
      // "/" (what the profiles grant) and the concrete root, whose place is the policy's.
      ir::ResolvedPath read = g.policy.write.front();
      read.path = "/";
      g.policy.read = {read, read};
      g.policy.read.back().path = m.policy_read;
    }
    const std::string profile = g.profile + m.rule + "\n";
    const std::string params = g.params + m.params;
    const auto fs = verify(g, profile, params, SbplBindings::EveryNesting);
    BOOST_TEST_REQUIRE(!fs.empty(), m.rule);
    const std::string text = all(fs);
    BOOST_TEST((fs.front().kind == "dropped-deny"), text);
    BOOST_TEST(fs.front().probe.find(m.probe) != std::string::npos, text);
    BOOST_TEST(fs.front().loc.line == m.line, text);
    // The rule the profile allows it by, the last one.
    BOOST_TEST(text.find("(profile.sb line " +
                         std::to_string(std::count(profile.begin(), profile.end(), '\n')) + ")") !=
                   std::string::npos,
               text);
  }
}

// A tree the rules decide alone (session 13): below the deny root /etc/shadow every rule of
// golden/deny-roots that can match a path operation denies (the allows all require the
// path outside /etc/shadow), but mapping, which one unconditional rule allows; above it,
// at /etc, the write rule may match where the roots lie, and nothing is decided.
BOOST_AUTO_TEST_CASE(the_rules_decide_the_tree_of_a_deny_root_alone) {
  const Golden g = golden("deny-roots");
  const auto list = compiler::parse_params_text(g.params);
  BOOST_REQUIRE_MESSAGE(list, list.error().message);
  const compiler::SbplParams values(list->begin(), list->end());
  auto parsed = compiler::parse_sbpl(g.profile);
  BOOST_REQUIRE(parsed);
  const auto bound = compiler::bind_params(*parsed, values);
  const std::vector<std::string_view> ops = {"file-read-data", "file-write-create", "process-exec",
                                             "file-map-executable"};
  for (const char* top : {"/etc/shadow", "/etc/shadow/zp-bind"}) {
    const auto answers = compiler::tree_answers(bound, top, ops);
    BOOST_TEST_REQUIRE(answers.size() == 4u);
    for (size_t k = 0; k < 3; ++k) BOOST_TEST((answers[k] && !*answers[k]), top << " " << ops[k]);
    BOOST_TEST((answers[3] && *answers[3]), top);
  }
  const auto at_etc = compiler::tree_answers(bound, "/etc", ops);
  BOOST_TEST(!at_etc[1].has_value());
  // A rule more that may allow a write below the deny root, where three roots meet.
  auto edited = compiler::parse_sbpl(g.profile +
                                     "(allow file-write* (require-all (subpath \"/etc\") (subpath "
                                     "(param \"WRITABLE_ROOT_TMPDIR\"))))\n");
  BOOST_REQUIRE(edited);
  const auto edited_bound = compiler::bind_params(*edited, values);
  BOOST_TEST(!compiler::tree_answers(edited_bound, "/etc/shadow", ops)[1].has_value());
}

// The one-root bindings of the pipeline's verify (compile, check) are bounded by their
// work as zpolicy verify's are (session 12): ten harmless reads of /opt/tK/tools make 31
// places (each path, a child, /opt/tK, /opt), within the 32 places; with deny-roots' three
// roots and a rule of 11 300 literals, 31 x 3 proofs bind some 1.06 M filters and
// parameters, past 2^20, and the profile is refused before any of them. Before, it was
// proved (93 proofs of the whole profile), unbounded in the profile's size.
BOOST_AUTO_TEST_CASE(the_pipelines_one_root_bindings_are_bounded_by_their_work) {
  const Golden g = golden("deny-roots");
  std::string profile = g.profile;
  for (int k = 0; k < 10; ++k)
    profile += "(allow file-read* (literal \"/opt/t" + std::to_string(k) + "/tools\"))\n";
  profile += "(allow file-read* (require-any";
  for (int k = 0; k < 11300; ++k) profile += " (literal (param \"ZP_P\"))";
  profile += "))\n";
  const std::string params = g.params + "ZP_P=${WORKSPACE}/p\n";
  const auto fs = verify(g, profile, params, SbplBindings::EachRootAlone);
  BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
  BOOST_TEST((fs.front().kind == "malformed-artifact"));
  BOOST_TEST(fs.front().loc.file == "profile.sb", all(fs));
  BOOST_TEST(fs.front().actual.find("for 31 places and 3 roots") != std::string::npos, all(fs));
  BOOST_TEST(
      fs.front().expected.find("at most 1048576 filters and parameters") != std::string::npos,
      all(fs));
}

BOOST_AUTO_TEST_SUITE_END()

// Nesting-only grants in every golden profile with two symbolic roots or more: for each
// ordered pair of its roots and the first protected path or deny root of the bound one,
// a write in OUTER/x where it meets that path. Each is a finding only with the nestings
// (either root inside the other: with `outer` bound inside the protected path, OUTER/x
// is in it too).
BOOST_AUTO_TEST_SUITE(sbpl_nested_roots_mutants, *boost::unit_test::label("mutation"))

BOOST_AUTO_TEST_CASE(golden_large_holds_for_every_nesting) {
  const Golden g = golden("large");
  const auto fs = verify(g, g.profile, g.params, SbplBindings::EveryNesting);
  BOOST_TEST(fs.empty(), all(fs));
}

BOOST_AUTO_TEST_CASE(each_nesting_only_grant_of_a_golden_is_a_finding) {
  size_t mutants = 0;
  for (const auto& g : goldens()) {
    std::vector<std::pair<std::string, std::string>> params;  // name, value
    const auto list = compiler::parse_params_text(g.params);
    BOOST_TEST_REQUIRE(list.has_value(), list.error().message);
    for (const auto& [name, value] : *list) params.emplace_back(name, value);
    std::vector<std::string> roots;
    for (const auto& [name, value] : params)
      if (value.starts_with("${")) roots.push_back(value.substr(0, value.find('}') + 1));
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    for (const auto& outer : roots)
      for (const auto& root : roots) {
        if (root == outer) continue;
        const auto guarded = std::find_if(params.begin(), params.end(), [&](const auto& p) {
          return (p.first.starts_with("PROTECTED_") || p.first.starts_with("DENY_ROOT_")) &&
                 !p.first.starts_with("PROTECTED_ANCESTOR_") && p.second.starts_with(root + "/");
        });
        if (guarded == params.end()) continue;
        ++mutants;
        const std::string profile = nesting_grant(g.profile, guarded->first);
        const std::string with_x = g.params + "ZP_NEST_X=" + outer + "/x\n";
        const std::string what = root + " inside " + outer + ", " + guarded->first;
        BOOST_TEST(verify(g, profile, with_x, SbplBindings::EachRootAlone).empty(), what);
        const auto fs = verify(g, profile, with_x, SbplBindings::EveryNesting);
        BOOST_TEST(!fs.empty(), what);
        // Found with `root` below `outer`, or with `outer` bound inside `root` where the
        // write in `outer`/x lands in the protected path itself.
        const std::string text = all(fs);
        const bool nested = text.find("with " + root + " bound to " + outer) != std::string::npos ||
                            text.find("with " + outer + " bound to " + root) != std::string::npos;
        BOOST_TEST(nested, what << "\n" << text);
      }
  }
  BOOST_TEST(mutants >= 12u);
}

BOOST_AUTO_TEST_SUITE_END()
