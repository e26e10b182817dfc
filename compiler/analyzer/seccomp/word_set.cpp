#include "compiler/analyzer/seccomp/word_set.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <iterator>
#include <optional>

namespace zpolicy::compiler {

void WordSet::at_least(uint32_t v) { lo_ = std::max(lo_, v); }
void WordSet::at_most(uint32_t v) { hi_ = std::min(hi_, v); }

void WordSet::bits(uint32_t mask, uint32_t value) {
  if ((value & ~mask) != 0 || ((known_value_ ^ value) & known_mask_ & mask) != 0) {
    contradiction_ = true;
    return;
  }
  known_mask_ |= mask;
  known_value_ |= value;
}

void WordSet::not_bits(uint32_t mask, uint32_t value) {
  if ((value & ~mask) != 0) return;
  if (mask == 0) {  // w & 0 is 0, always equal to 0
    contradiction_ = true;
    return;
  }
  if (mask != UINT32_MAX) {
    excluded_.push_back({mask, value});
    return;
  }
  const auto at = std::lower_bound(excluded_values_.begin(), excluded_values_.end(), value);
  if (at == excluded_values_.end() || *at != value) excluded_values_.insert(at, value);
}

void WordSet::intersect(const WordSet& other) {
  if (other.contradiction_) contradiction_ = true;
  at_least(other.lo_);
  at_most(other.hi_);
  bits(other.known_mask_, other.known_value_);
  excluded_.insert(excluded_.end(), other.excluded_.begin(), other.excluded_.end());
  // One merge of the sorted lists, not an insertion each: a filter's fall-through path
  // excludes every number of its chain, and it meets every path of the other program.
  std::vector<uint32_t> values;
  values.reserve(excluded_values_.size() + other.excluded_values_.size());
  std::set_union(excluded_values_.begin(), excluded_values_.end(),
                 other.excluded_values_.begin(), other.excluded_values_.end(),
                 std::back_inserter(values));
  excluded_values_ = std::move(values);
}

bool WordSet::excludes_value(uint32_t w) const {
  return std::binary_search(excluded_values_.begin(), excluded_values_.end(), w);
}

bool WordSet::contains(uint32_t w) const {
  if (contradiction_ || w < lo_ || w > hi_ || (w & known_mask_) != known_value_) return false;
  if (excludes_value(w)) return false;
  return std::none_of(excluded_.begin(), excluded_.end(),
                      [w](const Pattern& p) { return (w & p.mask) == p.value; });
}

namespace {

// The smallest x >= lo with (x & fixed) == value, if any (value has no bit outside fixed).
std::optional<uint32_t> smallest_at_least(uint32_t lo, uint32_t fixed, uint32_t value) {
  const uint32_t differ = fixed & (value ^ lo);
  if (differ == 0) return lo;
  // The highest fixed bit where lo and the pattern differ decides. (`b << 1` is 0 for the
  // top bit, so `above` is then empty.)
  const uint32_t b = std::bit_floor(differ);
  const uint32_t above = ~((b << 1) - 1);
  if (value & b)  // the pattern is above lo from here: lo's bits above, the pattern below
    return (lo & above) | b | (value & (b - 1));
  // The pattern is below lo here: raise the lowest free bit above that lo has clear.
  const uint32_t free = above & ~fixed & ~lo;
  if (free == 0) return std::nullopt;
  const uint32_t u = free & (0u - free);
  return (lo & ~((u << 1) - 1)) | u | (value & (u - 1));
}

}  // namespace

// Depth-first over the bits the excluded patterns test (and no known bit fixes), high bit
// first, on an explicit stack. A node fixes some of them; its members are the words with
// those bits and the known bits. It is cut when an excluded pattern lies wholly in its
// fixed bits and matches, or when none of its members is in [lo, hi] (the smallest member
// at or above lo is computed exactly). Its smallest member in range is tried first, so a
// set with few exclusions answers after a handful of nodes, and bits no pattern tests are
// never branched on.
WordSet::Witness WordSet::witness(size_t& budget) const {
  if (contradiction_ || lo_ > hi_) return {Witness::Kind::Empty};
  if (excluded_.empty() && excluded_values_.empty() && budget > 0) {
    // No exclusion (most words of most paths): the search's first node, at its cost of
    // one step, is the whole search, since it has no bit to branch on.
    --budget;
    const auto v = smallest_at_least(lo_, known_mask_, known_value_);
    if (!v || *v > hi_ || !contains(*v)) return {Witness::Kind::Empty};
    return {Witness::Kind::Found, *v};
  }
  uint32_t relevant = excluded_values_.empty() ? 0 : UINT32_MAX;
  for (const Pattern& p : excluded_) relevant |= p.mask;
  relevant &= ~known_mask_;
  struct Node {
    uint32_t decided, value;
  };
  // A node replaced by its two children decides one more bit, so the stack holds at most
  // one waiting sibling per bit plus the two newest: 33 nodes, never the heap.
  std::array<Node, 33> stack;
  size_t depth = 0;
  stack[depth++] = {0, 0};
  // A node tests every excluded pattern (and looks its value up among the excluded
  // words), so it costs one step per pattern, plus one: the budget then bounds the time
  // a search takes, however many patterns a program piles up.
  const size_t node_cost = 1 + excluded_.size();
  while (depth > 0) {
    if (budget < node_cost) {
      budget = 0;
      return {Witness::Kind::Unknown};
    }
    budget -= node_cost;
    const Node n = stack[--depth];
    const uint32_t fixed = n.decided | known_mask_;
    const uint32_t value = n.value | known_value_;
    const bool cut =
        (fixed == UINT32_MAX && excludes_value(value)) ||
        std::any_of(excluded_.begin(), excluded_.end(), [&](const Pattern& p) {
          return (p.mask & ~fixed) == 0 && (value & p.mask) == p.value;
        });
    if (cut) continue;
    const auto v = smallest_at_least(lo_, fixed, value);
    if (!v || *v > hi_) continue;
    if (contains(*v)) return {Witness::Kind::Found, *v};
    const uint32_t open = relevant & ~n.decided;
    if (open == 0) continue;
    const uint32_t bit = uint32_t{1} << (31 - std::countl_zero(open));
    stack[depth++] = {n.decided | bit, n.value | bit};
    stack[depth++] = {n.decided | bit, n.value};
  }
  return {Witness::Kind::Empty};
}

}  // namespace zpolicy::compiler
