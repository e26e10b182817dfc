#include "compiler/syscall_decision.hpp"

#include <optional>

namespace zpolicy::compiler {

bool condition_holds(const ir::ArgCondition& c, ir::ArgWidth width, uint64_t arg) {
  const uint64_t bits = width == ir::ArgWidth::U32 ? 0xFFFFFFFFu : ~uint64_t{0};
  const uint64_t a = arg & bits;
  const uint64_t v = c.value & bits;
  switch (c.op) {
    case ir::CmpOp::Eq:
      return a == v;
    case ir::CmpOp::Ne:
      return a != v;
    case ir::CmpOp::Lt:
      return a < v;
    case ir::CmpOp::Le:
      return a <= v;
    case ir::CmpOp::Gt:
      return a > v;
    case ir::CmpOp::Ge:
      return a >= v;
    case ir::CmpOp::MaskedEq:
      return (a & c.mask & bits) == v;
  }
  return false;
}

ir::Action decide(const ir::SyscallPolicy& policy, const SyscallCall& call) {
  if (call.arch != ir::Arch::X86_64 || (call.nr & ir::kX32SyscallBit) != 0)
    return policy.foreign_abi_action;
  const ir::SyscallInfo* info = ir::find_syscall(ir::Arch::X86_64, call.nr);
  if (info == nullptr) return policy.unknown_number_action;
  std::optional<ir::Action> result;
  for (const auto& rule : policy.rules) {
    if (rule.name != info->name) continue;
    bool applies = true;
    for (const auto& c : rule.conditions) {
      const ir::ArgWidth w = c.index < 6 ? info->args[c.index] : ir::ArgWidth::U64;
      if (c.index >= 6 || !condition_holds(c, w, call.args[c.index])) {
        applies = false;
        break;
      }
    }
    if (applies && (!result || ir::more_restrictive(rule.action, *result))) result = rule.action;
  }
  return result.value_or(policy.default_action);
}

}  // namespace zpolicy::compiler
