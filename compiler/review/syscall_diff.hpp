#pragma once

#include <vector>

#include "compiler/review/difference.hpp"
#include "ir/syscall_policy.hpp"

namespace zpolicy::compiler::review {

// One policy's effective syscall filter, and the line of the answer it gives calls no
// rule names (the allow-list's default, or "<builtin>": a deny-list allows them).
struct SyscallSide {
  const ir::SyscallPolicy& policy;
  ir::SourceLoc default_loc;
};

// The filters' difference, call by call: every call either policy names is evaluated on
// both at argument values that take each side of every comparison either policy makes
// (each constant, its neighbours, and every combination of the bits a mask tests, up to
// 2^10), so two filters that answer alike there answer alike everywhere. Allowed versus
// refused is a difference, and so is kill versus errno; one errno for another is not.
std::vector<Difference> diff_syscalls(const SyscallSide& before, const SyscallSide& after);

}  // namespace zpolicy::compiler::review
