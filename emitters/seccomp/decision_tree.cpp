#include "emitters/seccomp/decision_tree.hpp"

#include <limits>

namespace zpolicy::emitters::seccomp {

AlphabeticTree optimal_alphabetic_tree(std::span<const uint64_t> weights) {
  const size_t n = weights.size();
  AlphabeticTree t;
  if (n == 0) return t;
  std::vector<uint64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weights[i];
  std::vector<std::vector<uint64_t>> cost(n, std::vector<uint64_t>(n, 0));
  t.split.assign(n, std::vector<uint32_t>(n, 0));
  // Cubic dynamic programme: a few hundred intervals at most, so exactness is cheap.
  for (size_t len = 2; len <= n; ++len) {
    for (size_t i = 0; i + len <= n; ++i) {
      const size_t j = i + len - 1;
      uint64_t best = std::numeric_limits<uint64_t>::max();
      uint32_t best_r = static_cast<uint32_t>(i);
      for (size_t r = i; r < j; ++r) {
        const uint64_t c = cost[i][r] + cost[r + 1][j];
        if (c < best) {
          best = c;
          best_r = static_cast<uint32_t>(r);
        }
      }
      cost[i][j] = best + (prefix[j + 1] - prefix[i]);
      t.split[i][j] = best_r;
    }
  }
  t.cost = cost[0][n - 1];
  return t;
}

}  // namespace zpolicy::emitters::seccomp
