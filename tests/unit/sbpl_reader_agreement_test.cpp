// parse_sbpl reads the emitted layout with read_emitted_profile and anything else with
// parse_sbpl_general. Two readers of one language in a verifier are safe only while they
// agree: whatever read_emitted_profile accepts, parse_sbpl_general must accept as the same
// profile. The texts are the golden profiles and seeded mutants of them, so that a change
// to either reader that makes them disagree fails here rather than in a verdict.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/analyzer/sbpl/sbpl_emitted_reader.hpp"
#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"

using namespace zpolicy;
using compiler::SbplFilter;
using compiler::SbplProfile;

namespace {

struct Golden {
  std::string name;  // "large.macos"
  std::string text;
};

std::vector<Golden> golden_profiles() {
  std::vector<Golden> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(ZPOLICY_SOURCE_DIR) + "/golden")) {
    const auto sb = e.path() / "profile.sb";
    if (e.path().extension() != ".macos" || !std::filesystem::exists(sb)) continue;
    std::ifstream in(sb, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    out.push_back({e.path().filename().string(), text.str()});
  }
  std::sort(out.begin(), out.end(),
            [](const Golden& a, const Golden& b) { return a.name < b.name; });
  return out;
}

std::string filter_difference(const SbplProfile& pa, const SbplFilter& a, const SbplProfile& pb,
                              const SbplFilter& b, const std::string& where);

// The first difference between the filter lists `a` of profile `pa` and `b` of `pb`, or
// "": element by element, each compared as a tree.
std::string list_difference(const SbplProfile& pa, std::span<const SbplFilter> a,
                            const SbplProfile& pb, std::span<const SbplFilter> b,
                            const std::string& where, const char* what) {
  if (a.size() != b.size())
    return where + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " " + what;
  for (size_t i = 0; i < a.size(); ++i) {
    auto d = filter_difference(pa, a[i], pb, b[i], where + "/" + std::to_string(i));
    if (!d.empty()) return d;
  }
  return "";
}

// The first difference between filter `a` of profile `pa` and `b` of `pb`, with their
// children, or "": the readers lay the children out in different orders, so the filters
// are compared as trees rather than by position.
std::string filter_difference(const SbplProfile& pa, const SbplFilter& a, const SbplProfile& pb,
                              const SbplFilter& b, const std::string& where) {
  if (a.kind != b.kind)
    return where + ": kind " + std::to_string(static_cast<int>(a.kind)) + " vs " +
           std::to_string(static_cast<int>(b.kind));
  if (a.value != b.value)
    return where + ": value \"" + std::string(a.value) + "\" vs \"" + std::string(b.value) + "\"";
  if (a.is_param != b.is_param) return where + ": is_param differs";
  return list_difference(pa, pa.children(a), pb, pb.children(b), where, "children");
}

// The first difference between the profiles as parse_sbpl's callers see them, or "".
std::string difference(const SbplProfile& a, const SbplProfile& b) {
  if (a.default_allow != b.default_allow) return "default differs";
  if (a.rules.size() != b.rules.size())
    return std::to_string(a.rules.size()) + " vs " + std::to_string(b.rules.size()) + " rules";
  for (size_t r = 0; r < a.rules.size(); ++r) {
    const auto& ra = a.rules[r];
    const auto& rb = b.rules[r];
    const std::string where = "rule " + std::to_string(r);
    if (ra.allow != rb.allow) return where + ": allow differs";
    if (ra.line != rb.line)
      return where + ": line " + std::to_string(ra.line) + " vs " + std::to_string(rb.line);
    if (ra.operations != rb.operations) return where + ": operations differ";
    if (ra.operation_bits != rb.operation_bits) return where + ": operation bits differ";
    auto d =
        list_difference(a, a.filters_of(ra), b, b.filters_of(rb), where + " filter", "filters");
    if (!d.empty()) return d;
  }
  return "";
}

std::vector<std::string> split(std::string_view words) {
  std::vector<std::string> out;
  for (size_t at = 0; at < words.size();) {
    const size_t end = std::min(words.find(' ', at), words.size());
    out.emplace_back(words.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// Words a mutant may put in place of another: the subset's keywords, near misses of
// them, and atoms of the other kinds, so that mutants both stay in the subset and leave
// it by a character.
const std::vector<std::string> kWords = split(
    "version 1 01 2 allow deny default literal subpath param require-all require-any "
    "require-not target same-sandbox sysctl-name sysctl-name-prefix global-name local remote "
    "ip file-read* file-write* file-write-create process-exec network* network-outbound signal "
    "mach-lookup \"/x\" \"x\" \"\" \"localhost:*\" \"*:443\" ( ) literals Allow allow* #\"x\" "
    "\"a\\b\"");

// What a mutant may write for a run of blanks, as a comment, and for a byte.
const std::vector<std::string> kBlanks = {"", " ", "  ", "\n", "\t", "\r", " \n  ", "\n\n", "\f"};
const std::vector<std::string> kComments = {";", "; note\n", ";(\n", "\n;\n", "; \"x\n", ";;)"};
// A NUL too: the readers' string scans stop at one.
const std::string kBytes = std::string("()\"; \n\t\r#\\abcdelmnoprstuvwxy-*_.019/:") + '\0';

// Where a mutant's words end: coarser than the readers' tokens, so that a word may be a
// string's contents or run into a neighbour.
bool is_break(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')' || c == ';' ||
         c == '"';
}

// The mutants of one text, from a fixed seed: std::mt19937_64's sequence is fixed by the
// standard, and only its raw output is used, so every platform sees the same mutants.
class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  std::string mutant(const std::string& original) {
    std::string t = original;
    for (uint64_t n = 1 + pick(3); n > 0; --n) mutate(t);
    return t;
  }

 private:
  uint64_t pick(uint64_t n) { return n ? rng_() % n : 0; }
  template <class T>
  const T& any(const std::vector<T>& v) {
    return v[pick(v.size())];
  }

  // [first, end) of the word or the single break character at `at`.
  static std::pair<size_t, size_t> token_at(const std::string& t, size_t at) {
    if (at >= t.size()) return {t.size(), t.size()};
    if (is_break(t[at])) return {at, at + 1};
    size_t first = at, end = at;
    while (first > 0 && !is_break(t[first - 1])) --first;
    while (end < t.size() && !is_break(t[end])) ++end;
    return {first, end};
  }
  // [first, end) of the line at `at`, with its newline.
  static std::pair<size_t, size_t> line_at(const std::string& t, size_t at) {
    const size_t nl = at == 0 ? std::string::npos : t.rfind('\n', at - 1);
    const size_t first = nl == std::string::npos ? 0 : nl + 1;
    const size_t end = t.find('\n', at);
    return {first, end == std::string::npos ? t.size() : end + 1};
  }

  // [first, end) of the list that opens at the first '(' from `at`, by counting
  // parentheses (those in strings and comments too, which only makes the mutant odder);
  // empty if there is none or it is never closed.
  static std::pair<size_t, size_t> form_at(const std::string& t, size_t at) {
    const size_t first = t.find('(', at);
    if (first == std::string::npos) return {t.size(), t.size()};
    int depth = 0;
    for (size_t i = first; i < t.size(); ++i) {
      depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
      if (depth == 0) return {first, i + 1};
    }
    return {t.size(), t.size()};
  }

  void mutate(std::string& t) {
    const size_t at = pick(t.size() + 1);
    const bool inside = at < t.size();
    switch (pick(16)) {
      case 0:
        if (inside) t.erase(at, 1);
        break;
      case 1:
        if (inside) t.insert(at, 1, t[at]);
        break;
      case 2:
        if (at + 1 < t.size()) std::swap(t[at], t[at + 1]);
        break;
      case 3:
        if (inside) t[at] = kBytes[pick(kBytes.size())];
        break;
      case 4: {
        const auto [first, end] = token_at(t, at);
        t.erase(first, end - first);
        break;
      }
      case 5: {
        const auto [first, end] = token_at(t, at);
        t.insert(end, (pick(2) ? " " : "") + t.substr(first, end - first));
        break;
      }
      case 6: {
        const auto [first, end] = token_at(t, at);
        size_t next = end;
        while (next < t.size() && (t[next] == ' ' || t[next] == '\n')) ++next;
        const auto [nfirst, nend] = token_at(t, next);
        if (nfirst == nend) break;
        const std::string a = t.substr(first, end - first), b = t.substr(nfirst, nend - nfirst);
        t.replace(nfirst, nend - nfirst, a);
        t.replace(first, end - first, b);
        break;
      }
      case 7: {
        size_t first = at;
        while (first < t.size() && !(t[first] == ' ' || t[first] == '\n' || t[first] == '\t'))
          ++first;
        size_t end = first;
        while (end < t.size() && (t[end] == ' ' || t[end] == '\n' || t[end] == '\t')) ++end;
        t.replace(first, end - first, any(kBlanks));
        break;
      }
      case 8:
        t.insert(at, any(kComments));
        break;
      case 9:
      case 10: {
        const auto [first, end] = token_at(t, at);
        t.replace(first, end - first, any(kWords));
        break;
      }
      case 11: {
        const auto [first, end] = line_at(t, at);
        if (pick(2))
          t.erase(first, end - first);
        else
          t.insert(end, t.substr(first, end - first));
        break;
      }
      case 12: {
        const auto [first, end] = line_at(t, at);
        if (end >= t.size()) break;
        const auto [nfirst, nend] = line_at(t, end);
        const std::string line = t.substr(first, end - first);
        t.insert(nend, line);
        t.erase(first, end - first);
        break;
      }
      case 13: {
        const auto [first, end] = form_at(t, at);
        t.erase(first, end - first);
        break;
      }
      case 14: {
        const auto [first, end] = form_at(t, at);
        t.insert(end, " " + t.substr(first, end - first));
        break;
      }
      case 15: {
        const auto [first, end] = form_at(t, at);
        size_t next = end;
        while (next < t.size() && (t[next] == ' ' || t[next] == '\n')) ++next;
        if (next >= t.size() || t[next] != '(') break;
        const auto [nfirst, nend] = form_at(t, next);
        if (nfirst == nend) break;
        const std::string a = t.substr(first, end - first), b = t.substr(nfirst, nend - nfirst);
        t.replace(nfirst, nend - nfirst, a);
        t.replace(first, end - first, b);
        break;
      }
    }
  }

  std::mt19937_64 rng_;
};

// Reads `text` both ways and returns how the emitted-layout reader goes wrong: accepts
// what the general one refuses, or reads it differently; "" when it does not. Whether
// each reader accepted goes to `fast` and `general`.
std::string disagreement(const std::string& text, bool& fast, bool& general) {
  SbplProfile quick;
  fast = compiler::read_emitted_profile(text, quick);
  const auto slow = compiler::parse_sbpl_general(text);
  general = std::holds_alternative<SbplProfile>(slow);
  if (!fast) return "";
  if (!general)
    return "read_emitted_profile accepts what parse_sbpl_general refuses: " +
           std::get<compiler::SbplError>(slow).str();
  const std::string d = difference(quick, std::get<SbplProfile>(slow));
  return d.empty() ? "" : "the readers disagree: " + d;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_reader_agreement, *boost::unit_test::label("mutation"))

// The emitted profiles take the fast path: were they to fall back, the agreement below
// would hold for texts parse_sbpl never reads that way.
BOOST_AUTO_TEST_CASE(golden_profiles_read_as_emitted) {
  const auto goldens = golden_profiles();
  BOOST_REQUIRE(!goldens.empty());
  for (const auto& g : goldens) {
    bool fast = false, general = false;
    const std::string d = disagreement(g.text, fast, general);
    BOOST_CHECK_MESSAGE(d.empty(), g.name << ": " << d);
    BOOST_CHECK_MESSAGE(fast, g.name << ": read_emitted_profile refuses the emitted profile");
    BOOST_CHECK_MESSAGE(general, g.name << ": parse_sbpl_general refuses the emitted profile");
  }
}

BOOST_AUTO_TEST_CASE(mutants_of_golden_profiles) {
  constexpr int kMutants = 3000;
  // A broken reader may fail thousands of mutants: the first few say how, and the
  // mutants, being seeded, come back by their number.
  constexpr int kShown = 3;
  const auto goldens = golden_profiles();
  BOOST_REQUIRE(!goldens.empty());
  for (size_t i = 0; i < goldens.size(); ++i) {
    const Golden& g = goldens[i];
    Mutator mutator(20261203 + i);
    int by_fast = 0, by_general = 0, wrong = 0;
    for (int k = 0; k < kMutants; ++k) {
      bool fast = false, general = false;
      const std::string text = mutator.mutant(g.text);
      const std::string d = disagreement(text, fast, general);
      by_fast += fast;
      by_general += general;
      if (!d.empty() && ++wrong <= kShown) BOOST_ERROR(g.name << " mutant " << k << ": " << d);
    }
    BOOST_TEST_MESSAGE(g.name << ": " << kMutants << " mutants, " << by_fast
                              << " accepted by read_emitted_profile, " << by_general
                              << " by parse_sbpl_general");
    BOOST_CHECK_MESSAGE(wrong == 0, g.name << ": " << wrong << " mutants read differently");
    // A fast reader that refused nearly everything would agree vacuously: a third to a
    // half of these mutants are still in the emitted layout.
    BOOST_CHECK_MESSAGE(by_fast >= kMutants / 10,
                        g.name << ": the fast reader accepted only " << by_fast << " mutants");
  }
}

BOOST_AUTO_TEST_SUITE_END()
