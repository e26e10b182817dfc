#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace zpolicy::emitters::seccomp {

// The binary search tree over consecutive syscall-number intervals that minimises the
// expected number of comparisons, sum(weight[i] * depth[i]) (an optimal alphabetic
// tree: the intervals keep their order, each inner node is one `jge`).
struct AlphabeticTree {
  // For the range of intervals i..j (i < j), split[i][j] = r: the left subtree holds
  // i..r, the right one r+1..j, and the node compares the number with interval r+1's
  // lower bound.
  std::vector<std::vector<uint32_t>> split;
  uint64_t cost = 0;
};

AlphabeticTree optimal_alphabetic_tree(std::span<const uint64_t> weights);

}  // namespace zpolicy::emitters::seccomp
