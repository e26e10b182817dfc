#include "compiler/analyzer/seccomp/syscall_decision.hpp"

#include <optional>
#include <span>

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

namespace {

// Among `rules` (those naming the call), the most restrictive one whose conditions all
// hold, or the policy default.
ir::Action strictest(const ir::SyscallPolicy& policy, const ir::SyscallInfo& info,
                     const SyscallCall& call, std::span<const ir::SyscallRule* const> rules) {
  std::optional<ir::Action> result;
  for (const ir::SyscallRule* r : rules) {
    const ir::SyscallRule& rule = *r;
    bool applies = true;
    for (const auto& c : rule.conditions) {
      const ir::ArgWidth w = c.index < 6 ? info.args[c.index] : ir::ArgWidth::U64;
      if (c.index >= 6 || !condition_holds(c, w, call.args[c.index])) {
        applies = false;
        break;
      }
    }
    if (applies && (!result || ir::more_restrictive(rule.action, *result))) result = rule.action;
  }
  return result.value_or(policy.default_action);
}

}  // namespace

ir::Action decide(const ir::SyscallPolicy& policy, const SyscallCall& call) {
  return SyscallIntent(policy).decide(call);
}

SyscallIntent::SyscallIntent(const ir::SyscallPolicy& policy) : policy_(policy) {
  for (const auto& rule : policy.rules)
    if (const ir::SyscallInfo* info = ir::find_syscall(ir::Arch::X86_64, rule.name)) {
      if (info->nr >= by_nr_.size()) {
        by_nr_.resize(info->nr + 1);
        conditional_.resize(info->nr + 1);
      }
      by_nr_[info->nr].push_back(&rule);
      if (!rule.conditions.empty()) conditional_[info->nr] = true;
    }
  // A hole of the table answers unknown_number_action, a number no condition reads its
  // rules' answer, whatever the arguments.
  fixed_.assign(ir::max_syscall_number(ir::Arch::X86_64) + 1, policy.unknown_number_action);
  for (const ir::SyscallInfo& s : ir::syscall_table(ir::Arch::X86_64))
    fixed_[s.nr] = reads_arguments(s.nr) ? std::nullopt
                                         : std::optional(strictest(policy, s, {}, rules_for(s.nr)));
}

ir::Action SyscallIntent::decide(const SyscallCall& call) const {
  // Two tests: as one, they became one 8-byte load of arch and nr, which waits for the
  // caller's two 4-byte stores of the call it has just made to reach memory.
  if (call.arch != ir::Arch::X86_64) return policy_.foreign_abi_action;
  if ((call.nr & ir::kX32SyscallBit) != 0) return policy_.foreign_abi_action;
  if (call.nr < fixed_.size() && fixed_[call.nr]) return *fixed_[call.nr];
  const ir::SyscallInfo* info = ir::find_syscall(ir::Arch::X86_64, call.nr);
  if (info == nullptr) return policy_.unknown_number_action;
  return strictest(policy_, *info, call, rules_for(info->nr));
}

}  // namespace zpolicy::compiler
