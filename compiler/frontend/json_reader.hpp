#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/source_location.hpp"

namespace zpolicy::compiler::json {

// A strict JSON document (RFC 8259) with the line and column of every value, so that an
// importer can point at the offending token. Duplicate object keys are an error: a
// silently shadowed key is a silently dropped rule.
struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::string text;  // a string's content, or a number's literal spelling
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;  // in document order
  int line = 0, col = 0;

  const Value* find(std::string_view key) const;
  // An unsigned integer literal that fits in 64 bits.
  std::optional<uint64_t> as_u64() const;
  const char* kind_name() const;
};

struct ParseError {
  int line = 0, col = 0;
  std::string message;
};

std::optional<Value> parse(std::string_view text, ParseError* error);

}  // namespace zpolicy::compiler::json
