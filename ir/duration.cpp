#include "ir/duration.hpp"

#include <charconv>
#include <cstdint>

namespace zpolicy::ir {

std::variant<std::chrono::milliseconds, DurationError> parse_duration(std::string_view s) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  std::string_view unit(ptr, static_cast<size_t>(s.data() + s.size() - ptr));
  uint64_t ms_per = unit == "ms"                   ? 1
                    : unit == "s" || unit.empty() ? 1000
                    : unit == "m"                 ? 60000
                    : unit == "h"                 ? 3600000
                                                  : 0;
  constexpr uint64_t kMaxMs = 7ull * 24 * 3600 * 1000;
  if (ec != std::errc() || ptr == s.data() || ms_per == 0) return DurationError::Malformed;
  if (v == 0 || v > kMaxMs / ms_per) return DurationError::OutOfRange;
  return std::chrono::milliseconds(v * ms_per);
}

}  // namespace zpolicy::ir
