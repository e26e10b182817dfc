#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "ir/syscall_policy.hpp"

namespace zpolicy::compiler {

struct ListingMismatch {
  int line = 0;  // 1-based line of seccomp.txt
  std::string why;
};

// Whether `listing` (seccomp.txt) is the listing of `program` (seccomp.bpf), as
// reviewers read it in golden diffs: the header states the policy's default,
// unknown-number and foreign-ABI actions and the program's length; then one line per
// instruction, in order, whose instruction column is exactly the analyzer's own
// rendering of that instruction (mnemonic, constant, absolute jump targets). A comment
// that names what the instruction does must say it truly: the action of a return, the
// field of a load, the syscall of an `nr >= NAME(N)` bound. Other comment text (which
// rule a return belongs to) is free. Nothing may follow the last instruction.
std::optional<ListingMismatch> check_listing(std::string_view listing,
                                             std::span<const BpfInsn> program,
                                             const ir::SyscallPolicy& policy);

}  // namespace zpolicy::compiler
