#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analyzer/seccomp/syscall_decision.hpp"
#include "ir/syscall_policy.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {

// One probe on which a seccomp artifact disagrees with the IR.
struct SeccompFinding {
  uint32_t audit_arch = 0;
  SyscallCall call;
  ir::Action intended;
  std::optional<ir::Action> actual;  // nullopt: a return value the IR has no word for
  uint32_t ret = 0;                  // the program's return value, whatever it selects
  uint64_t instruction_pointer = 0;
  std::vector<uint32_t> trace;       // the instructions the interpreter executed
  // The artifact answers less restrictively than the IR: a deny would be dropped.
  bool dropped_deny() const;
  std::string str() const;
};

struct SeccompVerification {
  // Non-empty when the bytes are no program the kernel would load (naming the
  // instruction and the loader's rule).
  std::string program_error;
  // Non-empty when the program does something the path proof cannot follow exactly
  // (naming the instruction), or makes the probe sweep run past its bound: refused
  // rather than accepted unproven.
  std::string unprovable;
  size_t paths = 0;   // paths of the program the proof followed
  size_t probes = 0;  // calls the probe sweep ran
  size_t mismatches = 0;
  std::vector<SeccompFinding> findings;  // the first mismatch of each call, up to 100
  bool ok() const { return program_error.empty() && unprovable.empty() && mismatches == 0; }
};

// Checks a seccomp program against the IR, never trusting the emitter, in three steps:
// * the kernel loader's rules (bpf_loader_rules.hpp): a program it would refuse is an
//   error naming the instruction;
// * the proof over every path (seccomp_path_proof.hpp): every call, whatever its arch,
//   number, instruction pointer and arguments, gets the policy's action, exactly;
// * as a second, independent net, probes with the interpreter: every audited ABI
//   (x86_64, x32 through the x32 bit, i386, and a foreign arch), every number 0..1023,
//   the boundaries of the number space, and for each x86_64 syscall with argument
//   rules the values around each condition, their high-word variants and pairs of them.
//   The program runs once per number with zero arguments; only where that path loads
//   an argument does it run again on the other vectors (plus all-ones and every
//   compared value in every argument), since a path that loads none answers the same
//   for all of them.
SeccompVerification verify_seccomp(const ir::SyscallPolicy& policy, std::string_view bpf);

// The argument vectors probed for one x86_64 syscall.
std::vector<std::array<uint64_t, 6>> probe_arguments(const ir::SyscallPolicy& policy,
                                                     const ir::SyscallInfo& info);

}  // namespace zpolicy::compiler
