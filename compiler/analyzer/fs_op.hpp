#pragma once

#include <array>

namespace zpolicy::compiler {

// The filesystem operations the intent answers. Write changes an existing object;
// create brings a new directory entry into being; delete removes or renames one away.
// The first four are what both targets ask; Seatbelt names finer operations, which
// the rest stand for: its write of an object's data is Write and its change of the
// object's attributes (mode, owner, flags, times, xattrs) is Attributes; a hard link,
// an ioctl, mapping a file executable, and executing it.
enum class FsOp { Read, Write, Create, Delete, Attributes, Link, Ioctl, Map, Exec };

// The operations a bwrap mount table answers, and `explain --op` names.
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
    case FsOp::Attributes:
      return "attributes";
    case FsOp::Link:
      return "link";
    case FsOp::Ioctl:
      return "ioctl";
    case FsOp::Map:
      return "map";
    case FsOp::Exec:
      return "exec";
  }
  return "?";
}

}  // namespace zpolicy::compiler
