#pragma once

#include <chrono>
#include <string_view>
#include <variant>

namespace zpolicy::ir {

enum class DurationError {
  Malformed,   // not a number with one of the units
  OutOfRange,  // 0, or more than 7 days
};

// "500ms", "120s", "10m", "2h", or a bare number of seconds ("90"): the form of a
// policy's `process.timeout` and of `run --timeout`; more than 0, at most 7 days.
std::variant<std::chrono::milliseconds, DurationError> parse_duration(std::string_view text);

}  // namespace zpolicy::ir
