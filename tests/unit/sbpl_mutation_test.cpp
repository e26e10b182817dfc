#include <boost/test/unit_test.hpp>

#include "golden_support.hpp"
#include <functional>

#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "emitters/sbpl/profile.hpp"
#include "tests/unit/sbpl_fixtures.hpp"
#include "tests/unit/support/mutant_dump.hpp"

// Every single deletion of a form, swap of two neighbouring rules, or flip of a deny into
// an allow in an emitted profile must either be caught by verify_sbpl, or leave every
// denial of the original profile in place on every probe under every model.
using namespace zpolicy;
namespace fx = zpolicy::test::sbpl;

namespace {

using compiler::Sexpr;

std::string render(const std::vector<Sexpr>& forms) {
  std::string out;
  for (const auto& f : forms) out += compiler::print_sexpr(f) + "\n";
  return out;
}

// Calls `visit` with the text of each mutant of `forms`.
void for_each_mutant(
    const std::vector<Sexpr>& forms,
    const std::function<void(const std::string& what, const std::string&)>& visit) {
  // Deletion of each list node, top-level forms included; `where` addresses the node.
  std::function<void(std::vector<Sexpr>&, std::vector<Sexpr>&, const std::string&)> walk;
  std::vector<Sexpr> copy = forms;
  walk = [&](std::vector<Sexpr>& siblings, std::vector<Sexpr>& root, const std::string& where) {
    for (size_t i = 0; i < siblings.size(); ++i) {
      if (siblings[i].kind != Sexpr::Kind::List) continue;
      Sexpr saved = siblings[i];
      siblings.erase(siblings.begin() + static_cast<long>(i));
      visit("delete " + compiler::print_sexpr(saved) + " at " + where, render(root));
      siblings.insert(siblings.begin() + static_cast<long>(i), saved);
      walk(siblings[i].items, root, where + "/" + std::to_string(i));
    }
  };
  walk(copy, copy, "");
  for (size_t i = 0; i + 1 < forms.size(); ++i) {
    std::vector<Sexpr> swapped = forms;
    std::swap(swapped[i], swapped[i + 1]);
    visit("swap forms " + std::to_string(i) + " and " + std::to_string(i + 1), render(swapped));
  }
  for (size_t i = 0; i < forms.size(); ++i) {
    if (forms[i].items.empty() || forms[i].items[0].atom != "deny") continue;
    std::vector<Sexpr> flipped = forms;
    flipped[i].items[0].atom = "allow";
    visit("flip " + compiler::print_sexpr(forms[i]), render(flipped));
  }
}

enum class Effect { Weakens, Stricter, Equivalent };

// How the mutant's answers compare with the original's on every probe under every model.
Effect effect(const std::vector<compiler::SbplProbe>& probes, const compiler::SbplProfile& original,
              const std::string& mutant_text, const compiler::SbplParams& params) {
  auto parsed = compiler::parse_sbpl(mutant_text);
  BOOST_REQUIRE(parsed);
  const auto mutant = compiler::bind_params(*parsed, params);
  bool differs = false;
  for (const auto& probe : probes) {
    auto before =
        compiler::decide_all_models(original, probe.operation, probe.target, params, false);
    auto after = compiler::decide_all_models(mutant, probe.operation, probe.target, params, false);
    for (size_t i = 0; i < before.size(); ++i) {
      if (!before[i].allowed && after[i].allowed) return Effect::Weakens;
      differs = differs || before[i].allowed != after[i].allowed;
    }
  }
  return differs ? Effect::Stricter : Effect::Equivalent;
}

// The second net as an oracle (docs/verify.md, "The SBPL proof"): verify_sbpl asks the
// policy's own family probes (children, grandchildren, prefix siblings, ancestors of
// protected paths, paths outside every root) only of a profile the region probes find
// wrong, because the regions answer for every path those name. So a mutant it accepts
// must be right on every probe of sbpl_probes(), which holds them all; one it is wrong on
// is a hole in the region proof. Right: no model allows what the policy denies or denies
// what it requires, and where it asks neither, the precedences agree under each subpath
// reading.
void require_right_on_every_probe(const std::string& what,
                                  const std::vector<compiler::SbplProbe>& probes,
                                  const std::string& mutant_text,
                                  const compiler::SbplParams& params) {
  const auto mutant = compiler::bind_params(*compiler::parse_sbpl(mutant_text), params);
  const auto& models = compiler::all_sbpl_models();
  for (const auto& probe : probes) {
    const auto answers =
        compiler::decide_all_models(mutant, probe.operation, probe.target, params, false);
    bool right = true;
    for (size_t m = 0; m < answers.size(); ++m) {
      // The first model that reads subpaths as model m does.
      size_t first = 0;
      while (models[first].subpath_self != models[m].subpath_self) ++first;
      right = right && (probe.intent == compiler::Expect::Either
                            ? answers[m].allowed == answers[first].allowed
                            : answers[m].allowed == (probe.intent == compiler::Expect::Allow));
    }
    if (!right)
      BOOST_ERROR("accepted " << what << " answers " << probe.operation << " " << probe.target
                              << " wrongly: a path the region proof does not cover");
  }
}

void check_mutants(const std::string& name, const ir::Resolved& r) {
  auto profile = emitters::sbpl::emit(r);
  auto forms = *compiler::parse_sexprs(profile.text);
  compiler::SbplParams params(profile.params.begin(), profile.params.end());
  const compiler::SbplParamList params_list = test::sbpl::views(profile.params);
  auto original = compiler::bind_params(
      *compiler::parse_sbpl(profile.text), params);
  BOOST_REQUIRE(compiler::verify_sbpl(r, render(forms), params_list).empty());
  const auto probes = compiler::sbpl_probes(r);
  int total = 0, killed = 0, stricter = 0, equivalent = 0;
  for_each_mutant(forms, [&](const std::string& what, const std::string& text) {
    ++total;
    const auto findings = compiler::verify_sbpl(r, text, params_list);
    test::dump_mutant("sbpl " + name, what, test::finding_texts(findings));
    if (!findings.empty()) {
      ++killed;
      return;
    }
    require_right_on_every_probe(name + ": " + what, probes, text, params);
    switch (effect(probes, original, text, params)) {
      case Effect::Weakens:
        BOOST_ERROR(name << ": a surviving mutant weakens a deny: " << what);
        break;
      case Effect::Stricter:
        ++stricter;
        break;
      case Effect::Equivalent:
        ++equivalent;
        break;
    }
  });
  BOOST_TEST_MESSAGE(name << ": " << killed << "/" << total << " mutants killed; of the "
                          << total - killed << " survivors none weakens a deny: " << equivalent
                          << " change no answer on any probe (the redundant final denials, "
                             "platform allowances no probe exercises), "
                          << stricter << " only deny more");
  BOOST_TEST(killed > 0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_mutation, *boost::unit_test::label("mutation"))

BOOST_AUTO_TEST_CASE(default_portable) {
  check_mutants("default-portable", fx::default_portable());
}
BOOST_AUTO_TEST_CASE(read_only) { check_mutants("read-only", fx::read_only()); }
BOOST_AUTO_TEST_CASE(deny_roots_loopback) {
  check_mutants("deny-roots-loopback", fx::deny_roots_loopback());
}
BOOST_AUTO_TEST_CASE(partial_read_full_network) {
  check_mutants("partial-read-full-network", fx::partial_read_full_network());
}
BOOST_AUTO_TEST_CASE(nested_roots) { check_mutants("nested-roots", fx::nested_roots()); }
// The profiles the golden policies really compile to.
BOOST_AUTO_TEST_CASE(golden_policies) {
  for (const auto& g : test::golden_compiles(compiler::Target::Macos))
    check_mutants("golden " + g.name, g.compiled.resolved);
}

BOOST_AUTO_TEST_SUITE_END()
