#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "ir/result.hpp"
#include "ir/syscall_policy.hpp"

namespace zpolicy::compiler {

// Whether `listing` (seccomp.txt) is the listing of `program` (seccomp.bpf), as
// reviewers read it in golden diffs: the header states the policy's default,
// unknown-number and foreign-ABI actions and the program's length; then one line per
// instruction, in order, indented by two spaces, each preceded by the labels (`NAME:`
// lines) that jumps reach it by. An instruction says exactly what the program holds:
// read back (a jump target is a label defined before a later instruction or `next`, a
// constant a number or the name of one, ir/syscall_constants.hpp or a syscall's), it is
// the analyzer's own rendering of that instruction. A comment that names what the
// instruction does must say it truly: the action of a return, the field of a load, the
// syscall of an `nr >= NAME(N)` bound. A label, a return's comment after its action or
// the first word of another comment that names a syscall or a number names exactly the
// numbers that reach its instruction (number_reach.hpp), as one range. Other comment
// text is free. Nothing may follow the last instruction.
// The first line that says otherwise, located at its line of seccomp.txt, if any.
std::optional<ir::Diagnostic> check_listing(std::string_view listing,
                                            std::span<const BpfInsn> program,
                                            const ir::SyscallPolicy& policy);

struct ListingLine {
  int line = 0;           // 1-based
  std::string_view text;  // as written, without the indent
};

// The line of `listing` that lists instruction `index`, counted as check_listing reads it
// (after the `#` header, each line that is not a label is the next instruction), for
// pointing a reviewer at it; nullopt if the listing has fewer.
std::optional<ListingLine> listing_line(std::string_view listing, size_t index);

}  // namespace zpolicy::compiler
