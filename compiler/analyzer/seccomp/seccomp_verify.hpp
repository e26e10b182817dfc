#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "compiler/analyzer/seccomp/syscall_decision.hpp"
#include "ir/diagnostic.hpp"
#include "ir/result.hpp"
#include "ir/syscall_policy.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {

// What verify_seccomp found. Its findings are ir::finding()s for target "linux", in this
// order:
// * "malformed-artifact" on seccomp.bpf when the program does something the path proof
//   cannot follow exactly (naming the instruction), or makes the probe sweep run past its
//   bound: refused rather than accepted unproven;
// * "dropped-deny" (the program answers less restrictively than the IR, or with a return
//   value the IR has no word for) and "missing-allow" (more restrictively): the first
//   mismatch of each call number and ABI, up to 100, at the policy line that decides the
//   IR's answer, each naming the call and the instructions the interpreter executed on it.
struct SeccompVerification {
  size_t paths = 0;   // paths of the program the proof followed
  size_t probes = 0;  // calls the probe sweep ran (none when the proof accepts the program)
  size_t mismatches = 0;
  std::vector<ir::Diagnostic> findings;
  bool ok() const { return findings.empty() && mismatches == 0; }
};

// Checks a seccomp program against the IR, never trusting the emitter:
// * the kernel loader's rules (bpf_loader_rules.hpp): a program it would refuse is an
//   error naming the instruction;
// * the proof over every path (seccomp_path_proof.hpp): every call, whatever its arch,
//   number, instruction pointer and arguments, gets the policy's action, exactly. The
//   verdict is the proof's.
// * only when the proof refutes the program or cannot prove it: the probe sweep
//   (sweep_seccomp) lists further calls the program gets wrong, one per number and ABI
//   the proof did not name, and counts them.
// Bytes that are no program the kernel would load are an error naming the instruction and
// the loader's rule.
ir::Result<SeccompVerification> verify_seccomp(const ir::SyscallPolicy& policy,
                                               std::string_view bpf);
// The same for a program parse_bpf accepted, without reading its bytes again.
SeccompVerification verify_seccomp(const ir::SyscallPolicy& policy,
                                   std::span<const BpfInsn> program);

// The probe sweep alone, which shares nothing with the proof but the interpreter and the
// intent's `decide`: calls run through the program with the interpreter and compared with
// the IR, on every audited ABI (x86_64, x32 through the x32 bit, i386, and a foreign
// arch), every number 0..1023, the boundaries of the number space, and for each x86_64
// syscall with argument rules the values around each condition, their high-word variants
// and pairs of them. The program runs once per number with zero arguments; only where
// that path loads an argument does it run again on the other vectors (plus all-ones and
// every compared value in every argument), since a path that loads none answers the
// same for all of them. The unit and mutation tiers run it on every golden program and
// every mutant as the proof's oracle: a program it refutes, the proof must refute too.
SeccompVerification sweep_seccomp(const ir::SyscallPolicy& policy,
                                  std::span<const BpfInsn> program);

// The argument vectors probed for one x86_64 syscall.
std::vector<std::array<uint64_t, 6>> probe_arguments(const ir::SyscallPolicy& policy,
                                                     const ir::SyscallInfo& info);

}  // namespace zpolicy::compiler
