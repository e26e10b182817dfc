#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"

namespace zpolicy::compiler {

// The system call numbers that reach one instruction: disjoint, ascending, closed
// intervals. `exact` is false where the program did with the number something other than
// compare it with a constant by jeq, jgt or jge (a bit test, arithmetic, a copy), so
// that the intervals are only an upper bound.
struct NumberReach {
  std::vector<std::pair<uint32_t, uint32_t>> intervals;
  bool exact = true;
};

// For each instruction of a program the loader accepts (every jump forward), the numbers
// that reach it: from the entry, every number; a comparison of the loaded number with a
// constant sends each side its own part, any other comparison sends both sides all of
// it. The listing check holds the labels and comments that name numbers to this.
std::vector<NumberReach> number_reach(std::span<const BpfInsn> program);

}  // namespace zpolicy::compiler
