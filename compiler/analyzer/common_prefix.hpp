#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace zpolicy::compiler {

// The length of the longest common prefix of `a` and `b`, compared a word at a time: the
// verifiers walk paths in sorted order, and consecutive ones share most of their length.
inline size_t common_prefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  for (; i + sizeof(uint64_t) <= n; i += sizeof(uint64_t)) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, sizeof x);
    std::memcpy(&y, b.data() + i, sizeof y);
    if (x == y) continue;
    // The first differing byte in memory order is the lowest one on a little-endian host.
    const uint64_t d = x ^ y;
    return i + static_cast<size_t>(std::endian::native == std::endian::little
                                       ? std::countr_zero(d)
                                       : std::countl_zero(d)) /
                   8;
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace zpolicy::compiler
