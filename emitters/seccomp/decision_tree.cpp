#include "emitters/seccomp/decision_tree.hpp"

#include <limits>

namespace zpolicy::emitters::seccomp {

AlphabeticTree optimal_alphabetic_tree(std::span<const uint64_t> weights) {
  const size_t n = weights.size();
  AlphabeticTree t;
  t.n = n;
  if (n == 0) return t;
  std::vector<uint64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weights[i];
  std::vector<uint64_t> cost(n * n, 0);
  t.splits.assign(n * n, 0);
  auto at = [n](size_t i, size_t j) { return i * n + j; };
  // Knuth's bound: the weight of a range is a sum, so it satisfies the quadrangle
  // inequality, and the smallest optimal split of i..j lies between those of i..j-1 and
  // i+1..j (Yao 1980, applied to the mirrored sequence for the smallest rather than the
  // largest split). That makes the search quadratic instead of cubic, choosing exactly
  // the split the full search would (tests/unit/seccomp_emitter_test.cpp compares both).
  for (size_t len = 2; len <= n; ++len) {
    for (size_t i = 0; i + len <= n; ++i) {
      const size_t j = i + len - 1;
      const size_t lo = len == 2 ? i : t.splits[at(i, j - 1)];
      const size_t hi = len == 2 ? i : t.splits[at(i + 1, j)];
      uint64_t best = std::numeric_limits<uint64_t>::max();
      uint32_t best_r = static_cast<uint32_t>(lo);
      for (size_t r = lo; r <= hi; ++r) {
        const uint64_t c = cost[at(i, r)] + cost[at(r + 1, j)];
        if (c < best) {
          best = c;
          best_r = static_cast<uint32_t>(r);
        }
      }
      cost[at(i, j)] = best + (prefix[j + 1] - prefix[i]);
      t.splits[at(i, j)] = best_r;
    }
  }
  t.cost = cost[at(0, n - 1)];
  return t;
}

}  // namespace zpolicy::emitters::seccomp
