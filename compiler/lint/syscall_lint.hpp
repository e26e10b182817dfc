#pragma once

#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// Findings on a policy's `syscalls:` rules, located at the rule's SourceLoc:
// * a deny rule naming a call x86_64 does not have is an error: the deny would silently
//   match nothing (in an allow-list such names are normal, e.g. an OCI profile's 32-bit
//   calls, and are not reported);
// * a condition on an argument the call does not have is an error (index >= 6, or past
//   its arity);
// * a condition on a 32-bit argument whose value or mask has high bits is a warning: the
//   kernel truncates the argument, so only the low 32 bits are compared;
// * a masked comparison whose value has bits outside its mask is a warning: it never
//   matches.
void lint_syscall_rules(const ir::SyscallSpec& spec, ir::Diagnostics& diags);

}  // namespace zpolicy::compiler
