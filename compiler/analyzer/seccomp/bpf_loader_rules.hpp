#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"

namespace zpolicy::compiler {

// Why the kernel would refuse to load a program: the rule, and the instruction it
// applies to (nullopt for rules about the whole program).
struct LoaderRefusal {
  std::optional<size_t> instruction;
  std::string rule;
  std::string_view id;  // which rule of loader_rule_ids()
  std::string str() const;
};

// The checks a program meets on its way into SECCOMP_SET_MODE_FILTER, in the kernel's
// order: the length (bpf_check_basics_ok), classic BPF's own checker (bpf_check_classic:
// known opcode, division by a constant zero, shift by a constant of 32 or more, scratch
// memory index, jump targets inside the program, a return at the end, then
// check_load_and_stores: no scratch memory word read before it is written on every way
// to the read), and seccomp's (seccomp_check_filter: only the instructions it lists, and
// 32-bit loads aligned inside struct seccomp_data). Rewritten from the rules, not from
// the kernel's code.
std::optional<LoaderRefusal> loader_refusal(std::span<const BpfInsn> program);

// Every rule loader_refusal applies, in its order, by the id its refusals carry.
std::vector<std::string_view> loader_rule_ids();

}  // namespace zpolicy::compiler
