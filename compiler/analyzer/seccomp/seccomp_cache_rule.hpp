#pragma once

#include <cstdint>
#include <span>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"

namespace zpolicy::compiler {

// A port of the kernel's seccomp_is_const_allow (kernel/seccomp.c, Linux >= 5.11): the
// kernel skips the filter for (arch, nr) when it can prove, by emulating the program
// with only `nr` and `arch` known, that it returns SECCOMP_RET_ALLOW whatever the
// arguments. The emulation gives up at any load other than nr/arch and at any
// instruction other than JA, JEQ/JGT/JGE/JSET with a constant, AND with a constant and
// RET with a constant.
bool seccomp_is_const_allow(std::span<const BpfInsn> program, uint32_t arch, uint32_t nr);

}  // namespace zpolicy::compiler
