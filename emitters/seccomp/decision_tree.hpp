#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace zpolicy::emitters::seccomp {

// The binary search tree over consecutive syscall-number intervals that minimises the
// expected number of comparisons, sum(weight[i] * depth[i]) (an optimal alphabetic
// tree: the intervals keep their order, each inner node is one `jge`).
struct AlphabeticTree {
  // For the range of intervals i..j (i < j), split(i, j) = r: the left subtree holds
  // i..r, the right one r+1..j, and the node compares the number with interval r+1's
  // lower bound. Among equally cheap splits it is the smallest r.
  uint32_t split(size_t i, size_t j) const { return splits[i * n + j]; }
  size_t n = 0;
  std::vector<uint32_t> splits;  // row-major n x n; only i < j is meaningful
  uint64_t cost = 0;
};

AlphabeticTree optimal_alphabetic_tree(std::span<const uint64_t> weights);

}  // namespace zpolicy::emitters::seccomp
