#pragma once

#include <cstdint>
#include <optional>

namespace zpolicy::compiler {

// A classic BPF instruction as stored in a seccomp program (struct sock_filter).
struct BpfInsn {
  uint16_t code = 0;
  uint8_t jt = 0;
  uint8_t jf = 0;
  uint32_t k = 0;
};

// Opcode fields and values of classic BPF (linux/bpf_common.h, linux/filter.h), written
// out here so that the analyzer shares no header with the emitter it checks.
namespace bpf {
constexpr uint16_t cls(uint16_t c) { return c & 0x07; }
constexpr uint16_t size_of(uint16_t c) { return c & 0x18; }
constexpr uint16_t mode(uint16_t c) { return c & 0xe0; }
constexpr uint16_t op(uint16_t c) { return c & 0xf0; }
constexpr uint16_t src(uint16_t c) { return c & 0x08; }
constexpr uint16_t rval(uint16_t c) { return c & 0x18; }

constexpr uint16_t LD = 0x00, LDX = 0x01, ST = 0x02, STX = 0x03, ALU = 0x04, JMP = 0x05, RET = 0x06,
                   MISC = 0x07;
constexpr uint16_t W = 0x00, H = 0x08, B = 0x10;
constexpr uint16_t IMM = 0x00, ABS = 0x20, IND = 0x40, MEM = 0x60, LEN = 0x80, MSH = 0xa0;
constexpr uint16_t ADD = 0x00, SUB = 0x10, MUL = 0x20, DIV = 0x30, OR = 0x40, AND = 0x50,
                   LSH = 0x60, RSH = 0x70, NEG = 0x80, MOD = 0x90, XOR = 0xa0;
constexpr uint16_t JA = 0x00, JEQ = 0x10, JGT = 0x20, JGE = 0x30, JSET = 0x40;
constexpr uint16_t K = 0x00, X = 0x08, A = 0x10;
constexpr uint16_t TAX = 0x00, TXA = 0x80;
constexpr uint32_t kDataSize = 64;    // sizeof(struct seccomp_data)
constexpr uint32_t kMemWords = 16;    // BPF_MEMWORDS
constexpr uint32_t kMaxInsns = 4096;  // BPF_MAXINSNS

// Whether the conditional jump `code` is taken, A holding `a` and its operand `b`.
constexpr bool jump_taken(uint16_t code, uint32_t a, uint32_t b) {
  switch (op(code)) {
    case JEQ:
      return a == b;
    case JGT:
      return a > b;
    case JGE:
      return a >= b;
    case JSET:
      return (a & b) != 0;
  }
  return false;
}

// A after the ALU instruction `code`, A holding `a` and its operand `b`, as the kernel
// computes it on 32 bits; nullopt for a division or modulo by zero, which ends the filter
// with 0 (SECCOMP_RET_KILL_THREAD). A shift counts modulo 32: the kernel runs a classic
// filter as 32-bit eBPF, whose interpreter masks a register's shift count to five bits
// and whose JIT uses the CPU's shift, which does the same (a shift by a constant of 32 or
// more is refused at load). `ld #0x7fff; ldx #48; lsh x; ret a` returns
// SECCOMP_RET_ALLOW, not 0 (red team A29B-1).
constexpr std::optional<uint32_t> alu_result(uint16_t code, uint32_t a, uint32_t b) {
  switch (op(code)) {
    case ADD:
      return a + b;
    case SUB:
      return a - b;
    case MUL:
      return a * b;
    case DIV:
      return b == 0 ? std::nullopt : std::optional<uint32_t>(a / b);
    case MOD:
      return b == 0 ? std::nullopt : std::optional<uint32_t>(a % b);
    case OR:
      return a | b;
    case AND:
      return a & b;
    case XOR:
      return a ^ b;
    case LSH:
      return a << (b & 31);
    case RSH:
      return a >> (b & 31);
    case NEG:
      return 0u - a;
  }
  return a;
}
}  // namespace bpf

}  // namespace zpolicy::compiler
