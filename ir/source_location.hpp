#pragma once

#include <string>

namespace zpolicy::ir {

// Where a rule came from. Built-in rules carry file "<builtin>" so that every later
// diagnostic can still say which layer introduced them.
struct SourceLoc {
  std::string file;
  int line = 0;  // 1-based; 0 = no position (whole file or built-in)
  int col = 0;   // 1-based

  std::string str() const;  // "file:line:col", or "file" without a position
  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};

inline const char* kBuiltinFile = "<builtin>";

}  // namespace zpolicy::ir
