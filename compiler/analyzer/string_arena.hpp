#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace zpolicy::compiler {

// Copies of strings in blocks that never move, so that every view handed out stays
// valid for the arena's life however many strings come after it, at the price of one
// allocation per block instead of one per string.
class StringArena {
 public:
  StringArena() = default;
  StringArena(const StringArena&) = delete;
  StringArena& operator=(const StringArena&) = delete;

  std::string_view store(std::string_view s) {
    const std::span<char> copy = store_writable(s);
    return {copy.data(), copy.size()};
  }

  // A copy of `s` that the caller may still change, as long as the arena lives.
  std::span<char> store_writable(std::string_view s) {
    if (s.empty()) return {};
    if (s.size() > free_) {
      // A string longer than a block gets a block of its own.
      const size_t size = std::max(kBlockSize, s.size());
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
      next_ = blocks_.back().get();
      free_ = size;
    }
    char* at = next_;
    std::memcpy(at, s.data(), s.size());
    next_ += s.size();
    free_ -= s.size();
    return {at, s.size()};
  }

 private:
  static constexpr size_t kBlockSize = 4096;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;
  size_t free_ = 0;
};

}  // namespace zpolicy::compiler
