#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "compiler/review/difference.hpp"

namespace zpolicy::compiler::review {

// Why two programs could not be compared exactly: the side, the instruction, the reason.
struct ProgramDiffError {
  bool after = false;
  size_t instruction = 0;
  std::string message;
};

// Two loader-checked seccomp programs compared exactly (docs/review.md "Artifacts"):
// every path of each (the analyzer's walk_paths, with the sets of arch, number,
// instruction pointer and argument words its comparisons allow) is met with every path
// of the other; wherever both can be taken by some call and their actions differ, the
// calls of that cell are a difference, said per syscall and ABI with the cell's
// conditions on the arguments and the instruction pointer. Nothing is sampled: a cell
// no row names has no call on which the programs differ. A program the walk cannot
// follow exactly is an error, as it is for `verify`.
std::variant<std::vector<Difference>, ProgramDiffError> diff_programs(
    std::span<const BpfInsn> before, std::span<const BpfInsn> after);

}  // namespace zpolicy::compiler::review
