#pragma once

#include <array>

namespace zpolicy::compiler {

// The filesystem operations a probe asks about. Write changes an existing object;
// create brings a new directory entry into being; delete removes or renames one away.
enum class FsOp { Read, Write, Create, Delete };

inline constexpr std::array<FsOp, 4> kAllFsOps{FsOp::Read, FsOp::Write, FsOp::Create, FsOp::Delete};

inline const char* to_string(FsOp op) {
  switch (op) {
    case FsOp::Read:
      return "read";
    case FsOp::Write:
      return "write";
    case FsOp::Create:
      return "create";
    case FsOp::Delete:
      return "delete";
  }
  return "?";
}

}  // namespace zpolicy::compiler
