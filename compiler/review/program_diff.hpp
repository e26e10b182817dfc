#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "compiler/review/difference.hpp"

namespace zpolicy::compiler::review {

// Why two programs could not be compared exactly: the side, the instruction (none when
// the two programs together are too complex), the reason.
struct ProgramDiffError {
  bool after = false;
  std::optional<size_t> instruction;
  std::string message;
};

// Two loader-checked seccomp programs compared exactly (docs/review.md "Artifacts"):
// every path of each (the analyzer's walk_paths, with the sets of arch, number,
// instruction pointer and argument words its comparisons allow) is met with every path
// of the other; wherever both can be taken by some call and their actions differ, the
// calls of that cell are a difference, said per syscall and ABI with the cell's
// conditions on the arguments and the instruction pointer. Nothing is sampled: a cell
// no row names has no call on which the programs differ. A program the walk cannot
// follow exactly is an error, as it is for `verify`, and so are two programs whose paths
// meet in more pairs or cells than the budget below the 2 s of issue 19 allows.
std::variant<std::vector<Difference>, ProgramDiffError> diff_programs(
    std::span<const BpfInsn> before, std::span<const BpfInsn> after);

}  // namespace zpolicy::compiler::review
