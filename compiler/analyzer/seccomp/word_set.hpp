#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace zpolicy::compiler {

// The values one 32-bit word of struct seccomp_data can take on a path of a filter: the
// conjunction of what the path's comparisons said about it. A range from jgt/jge, bits
// known from jeq (of the word, or of the word under an `and` mask) and from a jset not
// taken, and patterns ruled out by a jeq or jset the other way. Every comparison a
// classic BPF filter can make of a word with a constant is one of these, so the set is
// exact, not an approximation.
class WordSet {
 public:
  void make_empty() { contradiction_ = true; }
  void at_least(uint32_t v);
  void at_most(uint32_t v);
  // (w & mask) == value; a value with bits outside the mask empties the set.
  void bits(uint32_t mask, uint32_t value);
  // (w & mask) != value; a value with bits outside the mask rules nothing out.
  void not_bits(uint32_t mask, uint32_t value);

  // The words in this set and in `other`: a call on a path of each of two programs
  // (compiler/review/program_diff).
  void intersect(const WordSet& other);

  bool contains(uint32_t w) const;

  // What the set is made of, to say it in words (compiler/review/program_diff): the
  // range, the known bits, the patterns and the whole words ruled out.
  struct Pattern {
    uint32_t mask, value;
  };
  struct Parts {
    uint32_t lo, hi, known_mask, known_value;
    std::span<const Pattern> excluded;
    std::span<const uint32_t> excluded_values;
  };
  Parts parts() const { return {lo_, hi_, known_mask_, known_value_, excluded_, excluded_values_}; }

  // A member of the set, found by a search over the bits from the top that gives up
  // when it would take more than `budget` steps (shared by the caller's searches,
  // decremented here; a node of the search costs one step per excluded pattern other
  // than a whole word, plus one).
  struct Witness {
    enum class Kind { Found, Empty, Unknown } kind;
    uint32_t value = 0;
  };
  Witness witness(size_t& budget) const;

 private:
  uint32_t lo_ = 0, hi_ = UINT32_MAX;
  uint32_t known_mask_ = 0, known_value_ = 0;
  bool contradiction_ = false;
  std::vector<Pattern> excluded_;
  // Patterns of the whole word (a jeq not taken on an unmasked word), kept apart, sorted
  // and without repeats, so that a chain of thousands of them costs a binary search per
  // test, not a scan, and a copy of the set (at each fork of a path) stays one block.
  std::vector<uint32_t> excluded_values_;
  bool excludes_value(uint32_t w) const;
};

}  // namespace zpolicy::compiler
