#pragma once

#include <optional>
#include <utility>

#include "ir/diagnostic.hpp"

namespace zpolicy::ir {

// What a step that reads untrusted input returns: what it made, or the located reason it
// made nothing (docs/decisions.md "One result type, one error convention"). Read like an
// optional: `if (!r) ... r.error()`, else `*r`.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Diagnostic error) : error_(std::move(error)) {}

  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  // Why there is no value; meaningful only then.
  const Diagnostic& error() const { return error_; }

 private:
  std::optional<T> value_;
  Diagnostic error_;
};

// The error of a Result: at `loc` (the artifact and its line, or the artifact alone when
// the message names the instruction).
inline Diagnostic error_at(SourceLoc loc, std::string message) {
  return {"", Severity::Error, std::move(loc), std::move(message)};
}

}  // namespace zpolicy::ir
