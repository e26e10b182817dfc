#include "compiler/lint/syscall_lint.hpp"

#include <cstdio>
#include <string>

#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

void lint_syscall_rules(const ir::SyscallSpec& spec, ir::Diagnostics& diags) {
  for (const auto& r : spec.rules) {
    const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, r.name);
    if (s == nullptr) {
      if (r.action.kind != ir::Action::Kind::Allow)
        diags.error(r.loc, "'" + r.name + "' is not an x86_64 syscall; this deny would match nothing");
      continue;
    }
    for (const auto& c : r.conditions) {
      const std::string arg = r.name + " argument " + std::to_string(c.index);
      if (c.index >= 6 || s->args[c.index] == ir::ArgWidth::None) {
        diags.error(r.loc, r.name + " has no argument " + std::to_string(c.index));
        continue;
      }
      if (s->args[c.index] == ir::ArgWidth::U32 &&
          ((c.value >> 32) != 0 ||
           (c.op == ir::CmpOp::MaskedEq && (c.mask >> 32) != 0 && c.mask != ~uint64_t{0})))
        diags.warning(r.loc, arg + " is 32-bit; the kernel ignores the high bits of " +
                                 hex(c.value) + ", so only its low 32 bits are compared");
      if (c.op == ir::CmpOp::MaskedEq && (c.value & ~c.mask) != 0)
        diags.warning(r.loc, arg + ": value " + hex(c.value) + " has bits outside mask " +
                                 hex(c.mask) + "; the condition never holds");
    }
  }
}

}  // namespace zpolicy::compiler
