// The word sets of the seccomp path proof (word_set.hpp): exact membership, witnesses,
// and a search budget that bounds the work of a search however many patterns a hostile
// program piles onto one word (issue 19 §2).
#include "compiler/analyzer/seccomp/word_set.hpp"

#include <boost/test/unit_test.hpp>

using zpolicy::compiler::WordSet;
using Kind = WordSet::Witness::Kind;

BOOST_AUTO_TEST_SUITE(seccomp_word_set)

BOOST_AUTO_TEST_CASE(a_chain_of_excluded_words_leaves_the_next_word) {
  // `jeq #i` not taken for i = 0..2046, as a linear filter writes them, in any order.
  WordSet s;
  for (uint32_t i = 2047; i-- > 0;) s.not_bits(UINT32_MAX, i);
  s.not_bits(UINT32_MAX, 7);  // again
  for (uint32_t i : {0u, 7u, 2046u}) BOOST_TEST(!s.contains(i), i);
  BOOST_TEST(s.contains(2047u));
  size_t budget = 10'000'000;
  const auto w = s.witness(budget);
  BOOST_TEST((w.kind == Kind::Found && s.contains(w.value)), w.value);
  s.at_most(2046);
  budget = 10'000'000;
  BOOST_TEST((s.witness(budget).kind == Kind::Empty));
}

// A word on a path of each of two programs: exactly the words both sets hold.
BOOST_AUTO_TEST_CASE(an_intersection_holds_what_both_sets_hold) {
  WordSet a, b;
  a.at_least(10);
  a.not_bits(UINT32_MAX, 12);
  a.not_bits(0x1, 1);  // even
  b.at_most(20);
  b.bits(0x4, 0x4);
  b.not_bits(UINT32_MAX, 14);
  WordSet both = a;
  both.intersect(b);
  for (uint32_t w = 0; w < 40; ++w)
    BOOST_TEST(both.contains(w) == (a.contains(w) && b.contains(w)), w);
  b.bits(0x4, 0);  // contradicts its own known bit: empty, and so is the intersection
  both = a;
  both.intersect(b);
  size_t budget = 1000;
  BOOST_TEST((both.witness(budget).kind == Kind::Empty));
}

BOOST_AUTO_TEST_CASE(whole_words_and_masked_patterns_combine) {
  WordSet s;
  s.not_bits(0xff, 0);  // the low byte is not 0
  s.not_bits(UINT32_MAX, 1);
  s.not_bits(UINT32_MAX, 2);
  BOOST_TEST(!s.contains(0x100));
  BOOST_TEST(!s.contains(1));
  BOOST_TEST(s.contains(3));
  size_t budget = 1000;
  const auto w = s.witness(budget);
  BOOST_TEST((w.kind == Kind::Found && w.value == 3u), w.value);
}

BOOST_AUTO_TEST_CASE(a_search_pays_for_every_pattern_it_tests) {
  // 850 patterns that never match: one node of the search tests all of them, so a budget
  // smaller than that gives up at once instead of running the node.
  WordSet s;
  s.bits(1u << 31, 0);
  for (uint32_t j = 0; j < 850; ++j) s.not_bits((1u << 31) | (j << 2) | 1, (1u << 31) | (j << 2) | 1);
  size_t budget = 850;
  BOOST_TEST((s.witness(budget).kind == Kind::Unknown));
  BOOST_TEST(budget == 0u);
  budget = 851;
  const auto w = s.witness(budget);
  BOOST_TEST((w.kind == Kind::Found && w.value == 0u), w.value);
  BOOST_TEST(budget == 0u);
}

BOOST_AUTO_TEST_CASE(an_empty_set_that_takes_a_long_search_runs_out_of_budget) {
  // Bits 2..31 in pairs, each pair with one of its four values excluded, then all four
  // values of bits 0..1: empty, but found so only at the bottom of each branch.
  WordSet s;
  for (unsigned k = 2; k < 32; k += 2) s.not_bits(3u << k, 1u << k);
  for (uint32_t v = 0; v < 4; ++v) s.not_bits(3, v);
  size_t budget = 1'000'000;
  BOOST_TEST((s.witness(budget).kind == Kind::Unknown));
  BOOST_TEST(budget == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
