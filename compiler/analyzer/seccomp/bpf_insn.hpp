#pragma once

#include <cstdint>

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
}  // namespace bpf

}  // namespace zpolicy::compiler
