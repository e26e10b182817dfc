#pragma once

#include <array>
#include <cstddef>
#include <utility>

namespace zpolicy::compiler {

// The filesystem operations a probe asks about. Write changes an existing object;
// create brings a new directory entry into being; delete removes or renames one away.
enum class FsOp { Read, Write, Create, Delete };

inline constexpr std::array<FsOp, 4> kAllFsOps{FsOp::Read, FsOp::Write, FsOp::Create, FsOp::Delete};

namespace detail {
template <class F, size_t... K>
inline void each_fs_op(F& f, std::index_sequence<K...>) {
  (f(kAllFsOps[K]), ...);
}
template <class P, size_t... K>
inline bool every_fs_op(P& pred, std::index_sequence<K...>) {
  return (pred(kAllFsOps[K]) && ...);
}
}  // namespace detail

// `f(op)` for every operation, unrolled: in the verifiers' hot loops the compiler did not
// unroll a loop over kAllFsOps, and only with the operation a constant does an inlined
// callee drop the branches of the other three. Unrolled from kAllFsOps, so that a new
// operation cannot be left out.
template <class F>
inline void for_each_fs_op(F&& f) {
  detail::each_fs_op(f, std::make_index_sequence<kAllFsOps.size()>());
}

// Whether `pred(op)` holds for every operation, unrolled as for_each_fs_op() is and
// stopping at the first that fails.
template <class P>
inline bool all_fs_ops(P&& pred) {
  return detail::every_fs_op(pred, std::make_index_sequence<kAllFsOps.size()>());
}

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
