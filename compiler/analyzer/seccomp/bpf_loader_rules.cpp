#include "compiler/analyzer/seccomp/bpf_loader_rules.hpp"

#include <vector>

namespace zpolicy::compiler {
namespace {

using namespace bpf;

// The opcodes classic BPF knows (chk_code_allowed): the whole 16-bit code is compared,
// so a known instruction with any high bit set is unknown.
bool classic_opcode(uint16_t c) {
  switch (c) {
    case ALU | ADD | K:
    case ALU | ADD | X:
    case ALU | SUB | K:
    case ALU | SUB | X:
    case ALU | MUL | K:
    case ALU | MUL | X:
    case ALU | DIV | K:
    case ALU | DIV | X:
    case ALU | MOD | K:
    case ALU | MOD | X:
    case ALU | AND | K:
    case ALU | AND | X:
    case ALU | OR | K:
    case ALU | OR | X:
    case ALU | XOR | K:
    case ALU | XOR | X:
    case ALU | LSH | K:
    case ALU | LSH | X:
    case ALU | RSH | K:
    case ALU | RSH | X:
    case ALU | NEG:
    case LD | W | ABS:
    case LD | H | ABS:
    case LD | B | ABS:
    case LD | W | LEN:
    case LD | W | IND:
    case LD | H | IND:
    case LD | B | IND:
    case LD | IMM:
    case LD | MEM:
    case LDX | W | LEN:
    case LDX | B | MSH:
    case LDX | IMM:
    case LDX | MEM:
    case ST:
    case STX:
    case MISC | TAX:
    case MISC | TXA:
    case RET | K:
    case RET | A:
    case JMP | JA:
    case JMP | JEQ | K:
    case JMP | JEQ | X:
    case JMP | JGE | K:
    case JMP | JGE | X:
    case JMP | JGT | K:
    case JMP | JGT | X:
    case JMP | JSET | K:
    case JMP | JSET | X:
      return true;
  }
  return false;
}

// The subset seccomp_check_filter lets through: no packet loads but 32-bit absolute
// ones (checked apart), no modulo, no LDX|B|MSH.
bool seccomp_opcode(uint16_t c) {
  switch (c) {
    case LD | W | ABS:
    case LD | W | LEN:
    case LDX | W | LEN:
    case RET | K:
    case RET | A:
    case ALU | ADD | K:
    case ALU | ADD | X:
    case ALU | SUB | K:
    case ALU | SUB | X:
    case ALU | MUL | K:
    case ALU | MUL | X:
    case ALU | DIV | K:
    case ALU | DIV | X:
    case ALU | AND | K:
    case ALU | AND | X:
    case ALU | OR | K:
    case ALU | OR | X:
    case ALU | XOR | K:
    case ALU | XOR | X:
    case ALU | LSH | K:
    case ALU | LSH | X:
    case ALU | RSH | K:
    case ALU | RSH | X:
    case ALU | NEG:
    case LD | IMM:
    case LDX | IMM:
    case MISC | TAX:
    case MISC | TXA:
    case LD | MEM:
    case LDX | MEM:
    case ST:
    case STX:
    case JMP | JA:
    case JMP | JEQ | K:
    case JMP | JEQ | X:
    case JMP | JGE | K:
    case JMP | JGE | X:
    case JMP | JGT | K:
    case JMP | JGT | X:
    case JMP | JSET | K:
    case JMP | JSET | X:
      return true;
  }
  return false;
}

bool conditional_jump(uint16_t c) { return cls(c) == JMP && c != (JMP | JA); }

std::optional<LoaderRefusal> classic_rules(std::span<const BpfInsn> prog) {
  const size_t n = prog.size();
  for (size_t pc = 0; pc < n; ++pc) {
    const BpfInsn& in = prog[pc];
    auto refuse = [pc](std::string rule) { return LoaderRefusal{pc, std::move(rule)}; };
    if (!classic_opcode(in.code)) return refuse("unknown opcode for classic BPF");
    switch (in.code) {
      case ALU | DIV | K:
      case ALU | MOD | K:
        if (in.k == 0) return refuse("division by the constant 0");
        break;
      case ALU | LSH | K:
      case ALU | RSH | K:
        if (in.k >= 32) return refuse("shift by a constant of 32 or more");
        break;
      case LD | MEM:
      case LDX | MEM:
      case ST:
      case STX:
        if (in.k >= kMemWords) return refuse("scratch memory index past M[15]");
        break;
      case JMP | JA:
        if (in.k >= n - pc - 1) return refuse("jump past the last instruction");
        break;
      default:
        if (conditional_jump(in.code) && (pc + 1 + in.jt >= n || pc + 1 + in.jf >= n))
          return refuse("jump past the last instruction");
    }
  }
  const uint16_t last = prog.back().code;
  if (last != (RET | K) && last != (RET | A))
    return LoaderRefusal{n - 1, "the last instruction is not a return"};
  return std::nullopt;
}

// check_load_and_stores: one forward pass with, per instruction, the scratch words
// written on every jump that reaches it. As in the kernel, the state after a return
// flows into the next instruction as if it fell through, and the state after a jump is
// reset to "all written" for the instruction after it; both only ever refuse more.
std::optional<LoaderRefusal> scratch_memory_rules(std::span<const BpfInsn> prog) {
  std::vector<uint16_t> masks(prog.size(), 0xffff);
  uint16_t valid = 0;
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const BpfInsn& in = prog[pc];
    valid &= masks[pc];
    switch (in.code) {
      case ST:
      case STX:
        valid |= static_cast<uint16_t>(1u << in.k);
        break;
      case LD | MEM:
      case LDX | MEM:
        if (!(valid & (1u << in.k)))
          return LoaderRefusal{
              pc, "M[" + std::to_string(in.k) + "] is read before it is written on some path"};
        break;
      case JMP | JA:
        masks[pc + 1 + in.k] &= valid;
        valid = 0xffff;
        break;
      default:
        if (conditional_jump(in.code)) {
          masks[pc + 1 + in.jt] &= valid;
          masks[pc + 1 + in.jf] &= valid;
          valid = 0xffff;
        }
    }
  }
  return std::nullopt;
}

std::optional<LoaderRefusal> seccomp_rules(std::span<const BpfInsn> prog) {
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const BpfInsn& in = prog[pc];
    if (!seccomp_opcode(in.code))
      return LoaderRefusal{pc, "instruction not allowed in a seccomp filter"};
    if (in.code == (LD | W | ABS) && (in.k >= kDataSize || in.k % 4 != 0))
      return LoaderRefusal{pc, "load outside struct seccomp_data or not 4-byte aligned"};
  }
  return std::nullopt;
}

}  // namespace

std::string LoaderRefusal::str() const {
  if (!instruction) return rule;
  return "instruction " + std::to_string(*instruction) + ": " + rule;
}

std::optional<LoaderRefusal> loader_refusal(std::span<const BpfInsn> prog) {
  if (prog.empty() || prog.size() > kMaxInsns)
    return LoaderRefusal{std::nullopt, "a program has 1 to 4096 instructions"};
  if (auto r = classic_rules(prog)) return r;
  if (auto r = scratch_memory_rules(prog)) return r;
  return seccomp_rules(prog);
}

}  // namespace zpolicy::compiler
