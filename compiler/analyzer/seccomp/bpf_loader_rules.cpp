#include "compiler/analyzer/seccomp/bpf_loader_rules.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

namespace zpolicy::compiler {
namespace {

using namespace bpf;

// The opcodes classic BPF knows (chk_code_allowed): the whole 16-bit code is compared,
// so a known instruction with any high bit set is unknown.
constexpr uint16_t kClassicOpcodes[] = {
    ALU | ADD | K, ALU | ADD | X, ALU | SUB | K,  ALU | SUB | X,  ALU | MUL | K, ALU | MUL | X,
    ALU | DIV | K, ALU | DIV | X, ALU | MOD | K,  ALU | MOD | X,  ALU | AND | K, ALU | AND | X,
    ALU | OR | K,  ALU | OR | X,  ALU | XOR | K,  ALU | XOR | X,  ALU | LSH | K, ALU | LSH | X,
    ALU | RSH | K, ALU | RSH | X, ALU | NEG,      LD | W | ABS,   LD | H | ABS,  LD | B | ABS,
    LD | W | LEN,  LD | W | IND,  LD | H | IND,   LD | B | IND,   LD | IMM,      LD | MEM,
    LDX | W | LEN, LDX | B | MSH, LDX | IMM,      LDX | MEM,      ST,            STX,
    MISC | TAX,    MISC | TXA,    RET | K,        RET | A,        JMP | JA,      JMP | JEQ | K,
    JMP | JEQ | X, JMP | JGE | K, JMP | JGE | X,  JMP | JGT | K,  JMP | JGT | X, JMP | JSET | K,
    JMP | JSET | X};

bool classic_opcode(uint16_t c) {
  return std::find(std::begin(kClassicOpcodes), std::end(kClassicOpcodes), c) !=
         std::end(kClassicOpcodes);
}

// The subset seccomp_check_filter lets through: classic BPF without the packet loads but
// the 32-bit absolute one (its offset is checked apart), without modulo and LDX|B|MSH.
bool seccomp_opcode(uint16_t c) {
  switch (c) {
    case LD | H | ABS:
    case LD | B | ABS:
    case LD | W | IND:
    case LD | H | IND:
    case LD | B | IND:
    case LDX | B | MSH:
    case ALU | MOD | K:
    case ALU | MOD | X:
      return false;
  }
  return classic_opcode(c);
}

bool conditional_jump(uint16_t c) { return cls(c) == JMP && c != (JMP | JA); }

// One rule the kernel applies to each instruction in turn: where it lives, what the
// refusal says, and the test (true when instruction `pc` breaks it). A table holds the
// rules of one of the kernel's loops, in the kernel's order, so that a program breaking
// several is refused for the same rule at the same instruction as the kernel checks it.
struct InstructionRule {
  std::string_view id;
  std::string_view kernel;
  std::string_view refusal;
  bool (*breaks)(std::span<const BpfInsn> prog, size_t pc);
};

// bpf_check_classic's loop over the instructions.
constexpr InstructionRule kClassicRules[] = {
    // chk_code_allowed compares the whole 16-bit code with the opcodes classic BPF has.
    {"opcode", "chk_code_allowed", "unknown opcode for classic BPF",
     [](std::span<const BpfInsn> p, size_t pc) { return !classic_opcode(p[pc].code); }},
    // A constant divisor of 0 is refused at load time rather than ending every run.
    {"division-by-zero", "bpf_check_classic", "division by the constant 0",
     [](std::span<const BpfInsn> p, size_t pc) {
       return (p[pc].code == (ALU | DIV | K) || p[pc].code == (ALU | MOD | K)) && p[pc].k == 0;
     }},
    // Shifts of 32 or more are undefined on the CPUs the filter is translated for.
    {"shift", "bpf_check_classic", "shift by a constant of 32 or more",
     [](std::span<const BpfInsn> p, size_t pc) {
       return (p[pc].code == (ALU | LSH | K) || p[pc].code == (ALU | RSH | K)) && p[pc].k >= 32;
     }},
    // Scratch memory is 16 words (BPF_MEMWORDS).
    {"scratch-index", "bpf_check_classic", "scratch memory index past M[15]",
     [](std::span<const BpfInsn> p, size_t pc) {
       const uint16_t c = p[pc].code;
       return (c == (LD | MEM) || c == (LDX | MEM) || c == ST || c == STX) && p[pc].k >= kMemWords;
     }},
    // Offsets are unsigned and relative to the next instruction: every jump goes forward,
    // and must land inside the program, so a filter always ends.
    {"jump-range", "bpf_check_classic", "jump past the last instruction",
     [](std::span<const BpfInsn> p, size_t pc) {
       const size_t n = p.size();
       if (p[pc].code == (JMP | JA)) return p[pc].k >= n - pc - 1;
       return conditional_jump(p[pc].code) && (pc + 1 + p[pc].jt >= n || pc + 1 + p[pc].jf >= n);
     }},
};

// seccomp_check_filter's loop: the instructions a seccomp filter may use, and what its
// loads may read.
constexpr InstructionRule kSeccompRules[] = {
    // No packet loads but 32-bit absolute ones, no modulo, no LDX|B|MSH.
    {"seccomp-opcode", "seccomp_check_filter", "instruction not allowed in a seccomp filter",
     [](std::span<const BpfInsn> p, size_t pc) { return !seccomp_opcode(p[pc].code); }},
    // The only data is struct seccomp_data, read a 32-bit word at a time.
    {"load-range", "seccomp_check_filter", "load outside struct seccomp_data or not 4-byte aligned",
     [](std::span<const BpfInsn> p, size_t pc) {
       return p[pc].code == (LD | W | ABS) && (p[pc].k >= kDataSize || p[pc].k % 4 != 0);
     }},
};

std::optional<LoaderRefusal> first_broken(std::span<const InstructionRule> rules,
                                          std::span<const BpfInsn> prog) {
  for (size_t pc = 0; pc < prog.size(); ++pc)
    for (const InstructionRule& r : rules)
      if (r.breaks(prog, pc)) return LoaderRefusal{pc, std::string(r.refusal), r.id};
  return std::nullopt;
}

// check_load_and_stores: one forward pass with, per instruction, the scratch words
// written on every jump that reaches it. As in the kernel, the state after a return
// flows into the next instruction as if it fell through, and the state after a jump is
// reset to "all written" for the instruction after it; both only ever refuse more.
std::optional<size_t> scratch_read_before_write(std::span<const BpfInsn> prog) {
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
        if (!(valid & (1u << in.k))) return pc;
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

}  // namespace

std::string LoaderRefusal::str() const {
  if (!instruction) return rule;
  return "instruction " + std::to_string(*instruction) + ": " + rule;
}

std::optional<LoaderRefusal> loader_refusal(std::span<const BpfInsn> prog) {
  // bpf_check_basics_ok
  if (prog.empty() || prog.size() > kMaxInsns)
    return LoaderRefusal{std::nullopt, "a program has 1 to 4096 instructions", "length"};
  if (auto r = first_broken(kClassicRules, prog)) return r;
  // bpf_check_classic, after its loop: a filter ends with a return, never by running off.
  const uint16_t last = prog.back().code;
  if (last != (RET | K) && last != (RET | A))
    return LoaderRefusal{prog.size() - 1, "the last instruction is not a return", "last-return"};
  if (auto pc = scratch_read_before_write(prog))
    return LoaderRefusal{
        *pc, "M[" + std::to_string(prog[*pc].k) + "] is read before it is written on some path",
        "scratch-before-store"};
  return first_broken(kSeccompRules, prog);
}

std::vector<std::string_view> loader_rule_ids() {
  std::vector<std::string_view> ids{"length"};
  for (const InstructionRule& r : kClassicRules) ids.push_back(r.id);
  ids.insert(ids.end(), {"last-return", "scratch-before-store"});
  for (const InstructionRule& r : kSeccompRules) ids.push_back(r.id);
  return ids;
}

}  // namespace zpolicy::compiler
