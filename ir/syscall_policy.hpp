#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/source_location.hpp"

namespace zpolicy::ir {

// What a filter answers for one call. Ordered by restrictiveness (see more_restrictive).
struct Action {
  enum class Kind { Allow, Errno, Kill };
  Kind kind = Kind::Allow;
  uint16_t errno_value = 0;  // only for Errno

  static Action allow() { return {Kind::Allow, 0}; }
  static Action errno_(uint16_t e) { return {Kind::Errno, e}; }
  static Action kill() { return {Kind::Kill, 0}; }
  std::string str() const;  // "allow", "errno(1)", "kill"
  friend bool operator==(const Action&, const Action&) = default;
};

// Kill > Errno > Allow; between two errnos the lower value wins so the result does not
// depend on rule order.
bool more_restrictive(const Action& a, const Action& b);

enum class CmpOp { Eq, Ne, Lt, Le, Gt, Ge, MaskedEq };
const char* to_string(CmpOp op);

// One comparison on one argument: (arg[index] & mask) == value for MaskedEq, otherwise
// arg[index] OP value. The comparison width comes from the syscall table (an `int`
// argument is compared on its low 32 bits, as the kernel truncates it).
struct ArgCondition {
  unsigned index = 0;
  CmpOp op = CmpOp::Eq;
  uint64_t value = 0;
  uint64_t mask = ~uint64_t{0};
  friend bool operator==(const ArgCondition&, const ArgCondition&) = default;
};

// A rule applies to a syscall when all its conditions hold. Among all rules that apply
// to a call, the most restrictive action wins; if none applies the policy default does.
// This makes the meaning independent of rule order, so no allow can shadow a deny.
struct SyscallRule {
  std::string name;
  Action action;
  std::vector<ArgCondition> conditions;
  SourceLoc loc;
};

// The effective syscall policy handed to the seccomp emitter (baseline + policy).
struct SyscallPolicy {
  Action default_action = Action::allow();
  std::vector<SyscallRule> rules;
  // Numbers above the highest syscall the table knows: ENOSYS, so libc falls back.
  Action unknown_number_action = Action::errno_(38);
  // Calls made through the x32 ABI or the i386 ABI (int 0x80) and any foreign arch.
  Action foreign_abi_action = Action::kill();
};

}  // namespace zpolicy::ir
