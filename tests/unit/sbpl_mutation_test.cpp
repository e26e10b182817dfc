#define BOOST_TEST_DYN_LINK
#include <boost/test/unit_test.hpp>

#include <functional>

#include "compiler/sbpl_evaluator.hpp"
#include "compiler/sbpl_verify.hpp"
#include "emitters/sbpl/profile.hpp"
#include "tests/unit/sbpl_fixtures.hpp"

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
void for_each_mutant(const std::vector<Sexpr>& forms,
                     const std::function<void(const std::string& what, const std::string&)>& visit) {
  // Deletion of each list node, top-level forms included. `path` addresses the node.
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

// True when the mutant allows some (probe, model) the original denies.
bool weakens(const ir::Resolved& r, const compiler::SbplProfile& original,
             const std::string& mutant_text, const compiler::SbplParams& params) {
  auto parsed = compiler::parse_sbpl(mutant_text);
  if (!std::holds_alternative<compiler::SbplProfile>(parsed)) return false;
  const auto& mutant = std::get<compiler::SbplProfile>(parsed);
  for (const auto& probe : compiler::sbpl_probes(r))
    for (const auto& m : compiler::all_sbpl_models())
      if (!compiler::decide(original, probe.operation, probe.target, params, m).allowed &&
          compiler::decide(mutant, probe.operation, probe.target, params, m).allowed)
        return true;
  return false;
}

void check_mutants(const std::string& name, const ir::Resolved& r) {
  auto profile = emitters::sbpl::emit(r);
  auto forms = std::get<std::vector<Sexpr>>(compiler::parse_sexprs(profile.text));
  auto original = std::get<compiler::SbplProfile>(compiler::parse_sbpl(profile.text));
  compiler::SbplParams params(profile.params.begin(), profile.params.end());
  BOOST_REQUIRE(compiler::verify_sbpl(r, render(forms), profile.params).empty());
  int total = 0, killed = 0, equivalent_or_stricter = 0;
  for_each_mutant(forms, [&](const std::string& what, const std::string& text) {
    ++total;
    if (!compiler::verify_sbpl(r, text, profile.params).empty()) {
      ++killed;
      return;
    }
    BOOST_TEST(!weakens(r, original, text, params), name << ": surviving mutant weakens a deny: " << what);
    ++equivalent_or_stricter;
  });
  BOOST_TEST_MESSAGE(name << ": " << killed << "/" << total << " mutants killed, "
                          << equivalent_or_stricter
                          << " survive without weakening any deny (redundant denials, "
                             "narrower platform allowances)");
  BOOST_TEST(total > 0);
  BOOST_TEST(killed > 0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_mutation)

BOOST_AUTO_TEST_CASE(default_portable) { check_mutants("default-portable", fx::default_portable()); }
BOOST_AUTO_TEST_CASE(read_only) { check_mutants("read-only", fx::read_only()); }
BOOST_AUTO_TEST_CASE(deny_roots_loopback) {
  check_mutants("deny-roots-loopback", fx::deny_roots_loopback());
}
BOOST_AUTO_TEST_CASE(partial_read_full_network) {
  check_mutants("partial-read-full-network", fx::partial_read_full_network());
}
BOOST_AUTO_TEST_CASE(nested_roots) { check_mutants("nested-roots", fx::nested_roots()); }

BOOST_AUTO_TEST_SUITE_END()
