#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "compiler/analyzer/seccomp/bpf_paths.hpp"
#include "compiler/analyzer/seccomp/syscall_decision.hpp"

namespace zpolicy::compiler {

// A call on which a program and the policy disagree, found by the proof.
struct PathCounterexample {
  uint32_t audit_arch = 0;
  SyscallCall call;
  uint64_t instruction_pointer = 0;
  ir::Action intended;
  size_t ret_pc = 0;  // the return the program reaches
};

struct PathProof {
  std::optional<Unprovable> unprovable;  // set: the program is refused unproven
  size_t paths = 0;
  size_t mismatches = 0;                            // disagreeing classes of calls, over all paths
  std::vector<PathCounterexample> counterexamples;  // the first of each (arch, nr), at most 100
};

// The proof that a loader-checked program answers every call as the policy does. For
// each path (walk_paths), the calls that take it are split by what the policy tells
// apart: a foreign arch; on x86_64 the x32 bit, each number the syscall table knows,
// and the unknown numbers; for a known number with argument rules, every combination
// of truth values of the rules' conditions that the path's argument sets allow (each
// condition a union of products of word sets, so the split is exact). Every class that
// is not empty must get the policy's action from the path's return, compared exactly.
// ip and the arguments the policy does not read need only be satisfiable.
PathProof prove_paths(const SyscallIntent& intent, std::span<const BpfInsn> program);

}  // namespace zpolicy::compiler
