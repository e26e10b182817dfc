#define BOOST_TEST_DYN_LINK
#include "compiler/path_index.hpp"

#include <boost/test/unit_test.hpp>
#include <random>

using namespace zpolicy::compiler;

namespace {

SymbolicPath P(const char* s) { return *SymbolicPath::parse(s); }

// Paths over a small alphabet, so that keys, probes and their prefixes collide often:
// names that share a prefix ("a" vs "ab"), symbolic roots, "/" itself.
SymbolicPath random_path(std::mt19937& rng) {
  static const char* const kAnchors[] = {"", "", "", "${HOME}", "${WORKSPACE}"};
  static const char* const kNames[] = {"a", "ab", "b", ".git", ".github", "a.b"};
  SymbolicPath p;
  p.anchor = kAnchors[rng() % 5];
  for (unsigned n = rng() % 5; n > 0; --n) p.components.emplace_back(kNames[rng() % 6]);
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(path_index)

BOOST_AUTO_TEST_CASE(finds_the_deepest_and_every_containing_key) {
  PathIndex<int> index;
  index.insert(P("/"), 0);
  index.insert(P("/a"), 1);
  index.insert(P("/a/b/c"), 2);
  index.insert(P("${HOME}"), 3);
  index.insert(P("/a"), 9);  // the first value stays
  BOOST_TEST(*index.deepest_containing(P("/a/b/c/d")) == 2);
  BOOST_TEST(*index.deepest_containing(P("/a/b")) == 1);
  BOOST_TEST(*index.deepest_containing(P("/ab")) == 0);  // a name prefix is no ancestor
  BOOST_TEST(*index.deepest_containing(P("${HOME}/x")) == 3);
  BOOST_TEST(*index.deepest_containing(P("${WORKSPACE}/x")) == 0);  // "/" holds it
  auto all = index.containing(P("/a/b/c"));
  BOOST_TEST_REQUIRE(all.size() == 3u);
  BOOST_TEST((*all[0] == 2 && *all[1] == 1 && *all[2] == 0));
  index.erase(P("/a/b/c"));
  BOOST_TEST(*index.deepest_containing(P("/a/b/c")) == 1);
  BOOST_TEST(index.find(P("/a/b")) == nullptr);
}

// Against the definition: a key contains a path when SymbolicPath::contains says so.
BOOST_AUTO_TEST_CASE(agrees_with_a_scan_of_every_key) {
  std::mt19937 rng(20261202);
  for (int round = 0; round < 200; ++round) {
    PathIndex<size_t> index;
    std::vector<SymbolicPath> keys;
    for (int k = 0; k < 12; ++k) {
      SymbolicPath p = random_path(rng);
      if (index.find(p)) continue;
      index.insert(p, keys.size());
      keys.push_back(p);
    }
    for (int q = 0; q < 30; ++q) {
      const SymbolicPath p = random_path(rng);
      std::vector<size_t> want;  // deepest first
      for (size_t k = 0; k < keys.size(); ++k)
        if (keys[k].contains(p)) want.push_back(k);
      auto depth = [&](size_t k) { return keys[k].components.size() + !keys[k].anchor.empty(); };
      std::sort(want.begin(), want.end(), [&](size_t x, size_t y) { return depth(x) > depth(y); });
      std::vector<size_t> got;
      for (const size_t* v : index.containing(p)) got.push_back(*v);
      BOOST_TEST(got == want, p.str());
      const size_t* deepest = index.deepest_containing(p);
      BOOST_TEST((deepest != nullptr) == !want.empty(), p.str());
      if (deepest && !want.empty()) BOOST_TEST(*deepest == want.front(), p.str());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
