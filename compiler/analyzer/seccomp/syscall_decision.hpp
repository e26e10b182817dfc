#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ir/syscall_policy.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {

// One call as the kernel hands it to a seccomp filter.
struct SyscallCall {
  ir::Arch arch = ir::Arch::X86_64;
  uint32_t nr = 0;  // as in seccomp_data.nr (x32 numbers carry ir::kX32SyscallBit)
  std::array<uint64_t, 6> args{};
};

// The IR's intent for one call: the reference every seccomp artifact is checked against.
// * i386 and x32 calls (any number with the x32 bit, whatever the arch) answer
//   foreign_abi_action; the policy is written for the x86_64 ABI only.
// * An x86_64 number the table does not know answers unknown_number_action (ENOSYS).
// * Otherwise the most restrictive rule of that name whose conditions all hold decides,
//   or default_action when none does. A condition on an argument of width U32 compares
//   the low 32 bits of the argument, value and mask, as the kernel truncates it;
//   U64 (and an index past the arity) compares all 64 bits, unsigned.
ir::Action decide(const ir::SyscallPolicy& policy, const SyscallCall& call);

// The same decision, with the policy's rules indexed by x86_64 number once, for callers
// that ask about every number (the verifier asks thousands of times per artifact).
class SyscallIntent {
 public:
  explicit SyscallIntent(const ir::SyscallPolicy& policy);
  ir::Action decide(const SyscallCall& call) const;
  // What decide answers for every i386 and x32 call, whatever its number and arguments.
  ir::Action foreign_abi_action() const { return policy_.foreign_abi_action; }
  // Whether the decision for this x86_64 number depends on the call's arguments: some
  // rule naming it has a condition.
  bool reads_arguments(uint32_t nr) const {
    return nr < conditional_.size() && conditional_[nr];
  }
  // The rules naming this x86_64 number, and what applies when none does.
  std::span<const ir::SyscallRule* const> rules_for(uint32_t nr) const {
    if (nr >= by_nr_.size()) return {};
    return by_nr_[nr];
  }
  const ir::SyscallPolicy& policy() const { return policy_; }

 private:
  const ir::SyscallPolicy& policy_;
  std::vector<std::vector<const ir::SyscallRule*>> by_nr_;
  std::vector<bool> conditional_;
  // The answer for each x86_64 number below the table's end whose rules read no
  // argument (a known number without conditions, or an unknown one); none for the
  // others, which decide() works out per call.
  std::vector<std::optional<ir::Action>> fixed_;
};

bool condition_holds(const ir::ArgCondition& c, ir::ArgWidth width, uint64_t arg);

}  // namespace zpolicy::compiler
