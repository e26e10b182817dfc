#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "ir/diagnostic.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {

// What a 32-bit argument may carry in the upper half of its register: the kernel reads the
// lower half only, so a probe with this junk above its value must be refused as well.
inline constexpr uint64_t kUpperHalf = 0xffffffff00000000u;

// One call an invariant checked on the program itself requires it to refuse.
struct InvariantProbe {
  ir::Arch arch;
  const ir::SyscallInfo* call;  // in the ABI's table; nullptr when the ABI lacks it
  std::array<uint64_t, 6> args;
};

// What the findings of one invariant say besides the call: the policy line behind it
// and the refusal it expects.
struct InvariantFinding {
  ir::SourceLoc rule;
  std::string expected;
  // A finding for `call`, which the program lets through, with its trace.
  ir::Diagnostic let_through(std::span<const BpfInsn> prog, std::string call_text,
                             const SeccompData& call) const;
};

// Whether a return refuses the call: an action the IR names, other than allow.
bool refuses(uint32_t ret);

// Runs the probes in order. A finding for the first probe of each call (ABI and
// syscall) the program lets through: its other probes say the same. A call whose run read
// no argument answers every probe of that call alike, so once it is refused its other
// probes are not run. Probes of a syscall the ABI lacks are skipped.
std::vector<ir::Diagnostic> first_let_through(std::span<const BpfInsn> prog,
                                              const std::vector<InvariantProbe>& probes,
                                              const InvariantFinding& finding);

}  // namespace zpolicy::compiler
