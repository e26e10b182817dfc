#pragma once

#include <cstdint>
#include <span>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"

namespace zpolicy::compiler {

// Not part of the analyzer: what the seccomp tests and bench/seccomp ask of the emitter's
// programs (that the kernel's action cache can skip them for plain allows).
//
// A port of the kernel's seccomp_is_const_allow (kernel/seccomp.c, Linux >= 5.11): the
// kernel skips the filter for (arch, nr) when it can prove, by emulating the program
// with only `nr` and `arch` known, that it returns SECCOMP_RET_ALLOW whatever the
// arguments. The emulation gives up at any load other than nr/arch and at any
// instruction other than JA, JEQ/JGT/JGE/JSET with a constant, AND with a constant and
// RET with a constant.
inline bool seccomp_is_const_allow(std::span<const BpfInsn> program, uint32_t arch, uint32_t nr) {
  uint32_t reg = 0;
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const BpfInsn& in = program[pc];
    switch (in.code) {
      case 0x20:  // BPF_LD | BPF_W | BPF_ABS
        if (in.k == 0)
          reg = nr;
        else if (in.k == 4)
          reg = arch;
        else
          return false;
        break;
      case 0x06:  // BPF_RET | BPF_K
        return in.k == 0x7fff0000u;
      case 0x05:  // BPF_JMP | BPF_JA
        pc += in.k;
        break;
      case 0x15:  // BPF_JMP | BPF_JEQ | BPF_K
        pc += reg == in.k ? in.jt : in.jf;
        break;
      case 0x35:  // BPF_JMP | BPF_JGE | BPF_K
        pc += reg >= in.k ? in.jt : in.jf;
        break;
      case 0x25:  // BPF_JMP | BPF_JGT | BPF_K
        pc += reg > in.k ? in.jt : in.jf;
        break;
      case 0x45:  // BPF_JMP | BPF_JSET | BPF_K
        pc += (reg & in.k) != 0 ? in.jt : in.jf;
        break;
      case 0x54:  // BPF_ALU | BPF_AND | BPF_K
        reg &= in.k;
        break;
      default:
        return false;
    }
  }
  return false;
}

}  // namespace zpolicy::compiler
