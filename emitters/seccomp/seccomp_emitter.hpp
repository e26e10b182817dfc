#pragma once

#include <string>

#include "ir/syscall_policy.hpp"

namespace zpolicy::emitters::seccomp {

// The seccomp filter of a syscall policy as the raw `struct sock_filter` array in host
// byte order (what `bwrap --seccomp FD` loads). The program checks the arch, then walks
// a binary search tree over syscall-number intervals shaped by the compiled-in syscall
// frequencies; only calls with argument rules load arguments, so every unconditionally
// allowed call stays provable by the kernel's action cache.
std::string emit_bpf(const ir::SyscallPolicy& policy);

// The same program, one instruction per line with symbolic syscall names, for review
// and golden diffs. Deterministic: same policy, same bytes.
std::string emit_listing(const ir::SyscallPolicy& policy);

}  // namespace zpolicy::emitters::seccomp
