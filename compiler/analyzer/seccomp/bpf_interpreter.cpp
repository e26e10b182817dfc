#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "compiler/analyzer/seccomp/bpf_loader_rules.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {
namespace {

using namespace bpf;

// struct seccomp_data: nr and arch come first; from here on, instruction_pointer and args.
constexpr uint32_t kCallerDataOffset = 8;

// The word at a (checked, aligned) offset of struct seccomp_data in host byte order.
uint32_t load_word(const SeccompData& d, uint32_t off) {
  if (off == 0) return d.nr;
  if (off == 4) return d.arch;
  const uint64_t field = off < 16 ? d.instruction_pointer : d.args[(off - 16) / 8];
  uint32_t v;
  std::memcpy(&v, reinterpret_cast<const unsigned char*>(&field) + off % 8, 4);
  return v;
}

std::string field_name(uint32_t off) {
  if (off == 0) return "nr";
  if (off == 4) return "arch";
  if (off == 8 || off == 12) return off == 8 ? "ip low" : "ip high";
  if (off >= 16 && off < kDataSize) {
    const uint32_t i = (off - 16) / 8;
    return "args[" + std::to_string(i) + "] " + ((off - 16) % 8 ? "high" : "low");
  }
  return "?";
}

}  // namespace

std::string seccomp_ret_name(uint32_t k) {
  const auto a = decode_seccomp_ret(k);
  if (a) return a->str();
  switch (k & 0xffff0000u) {
    case 0x00000000u:
      return "kill_thread";
    case 0x00030000u:
      return "trap";
    case 0x7ff00000u:
      return "trace";
    case 0x7ffc0000u:
      return "log";
    case 0x7fc00000u:
      return "user_notif";
  }
  return "?";
}

ir::Result<std::vector<BpfInsn>> parse_bpf(std::string_view bytes) {
  auto fail = [](std::string why) { return ir::error_at({"seccomp.bpf"}, std::move(why)); };
  if (bytes.empty() || bytes.size() % 8 != 0)
    return fail("a seccomp program is a non-empty array of 8-byte instructions");
  const size_t n = bytes.size() / 8;
  std::vector<BpfInsn> prog(n);
  for (size_t i = 0; i < n; ++i) {
    const char* p = bytes.data() + 8 * i;
    std::memcpy(&prog[i].code, p, 2);
    prog[i].jt = static_cast<uint8_t>(p[2]);
    prog[i].jf = static_cast<uint8_t>(p[3]);
    std::memcpy(&prog[i].k, p + 4, 4);
  }
  if (auto refusal = loader_refusal(prog)) return fail("the kernel refuses to load it: " + refusal->str());
  return prog;
}

namespace {

struct Machine {
  uint32_t a = 0, x = 0;
  std::array<uint32_t, kMemWords> mem{};
  BpfRun run;
};

// A load into A (LD) or X (LDX).
void load(const BpfInsn& in, const SeccompData& d, Machine& m) {
  uint32_t& to = cls(in.code) == LD ? m.a : m.x;
  if (in.code == (LD | W | ABS)) {
    to = load_word(d, in.k);
    m.run.read_arguments |= in.k >= kCallerDataOffset;
  } else if (mode(in.code) == LEN) {
    to = kDataSize;
  } else if (mode(in.code) == IMM) {
    to = in.k;
  } else {
    to = m.mem[in.k % kMemWords];
  }
}

// Executes prog[pc] (counted in m.run.executed): the next pc, or none once the program
// has returned (m.run.ret set).
std::optional<size_t> step(std::span<const BpfInsn> prog, size_t pc, const SeccompData& d,
                           Machine& m) {
  const BpfInsn& in = prog[pc];
  ++m.run.executed;
  uint32_t& a = m.a;
  uint32_t& x = m.x;
  const uint32_t operand = src(in.code) == X ? x : in.k;
  switch (cls(in.code)) {
    case LD:
    case LDX:
      load(in, d, m);
      break;
    case ST:
      m.mem[in.k % kMemWords] = a;
      break;
    case STX:
      m.mem[in.k % kMemWords] = x;
      break;
    case ALU:
      if (const auto r = alu_result(in.code, a, operand)) {
        a = *r;
        break;
      }
      m.run.ret = 0;
      return std::nullopt;
    case JMP:
      if (op(in.code) == JA) return pc + 1 + in.k;
      return pc + 1 + (jump_taken(in.code, a, operand) ? in.jt : in.jf);
    case RET:
      m.run.ret = in.code == (RET | K) ? in.k : a;
      return std::nullopt;
    case MISC:
      if (op(in.code) == TAX) x = a;
      else a = x;
      break;
  }
  return pc + 1;
}

// Runs `walk` on `first` and on every item it pushes onto `pending`, until none is left:
// an explicit stack, not the call stack, since a hostile program may nest 4096
// comparisons. The walks below push disjoint items, so their order does not matter.
template <class Item, class Walk>
void drain(std::vector<Item>& pending, Item first, Walk&& walk) {
  pending.push_back(std::move(first));
  while (!pending.empty()) {
    Item item = std::move(pending.back());
    pending.pop_back();
    walk(item);
  }
}

// The walk of run_bpf_for_numbers: each branch is one path of the program for the numbers
// lo..hi, all of which have taken it so far. While `a_is_nr`, the accumulator holds the
// number itself and only instructions that do not read it run on the machine. The ranges
// of the branches are disjoint.
struct NumberWalk {
  struct Branch {
    size_t pc;
    uint32_t lo, hi;
    bool a_is_nr;
    Machine m;
  };
  std::span<const BpfInsn> prog;
  uint32_t arch;
  uint32_t base;
  std::vector<BpfRun>& out;
  std::vector<Branch> pending;

  void run(Branch first) {
    drain(pending, std::move(first), [&](Branch& b) { walk(b); });
  }

  void walk(Branch& b) {
    // The number is read only through the accumulator, so a representative stands for
    // the rest of the range in `data`.
    const SeccompData data{b.lo, arch, 0, {}};
    size_t pc = b.pc;
    Machine& m = b.m;
    while (pc < prog.size()) {
      const BpfInsn& in = prog[pc];
      const uint16_t c = in.code;
      if (b.a_is_nr && cls(c) == JMP && src(c) == K &&
          (op(c) == JEQ || op(c) == JGT || op(c) == JGE)) {
        ++m.run.executed;
        split(pc, in, b.lo, b.hi, m);
        return;
      }
      const bool leaves_a = cls(c) == LD || cls(c) == LDX || cls(c) == STX ||
                            c == (MISC | TXA) || c == (JMP | JA) || c == (RET | K);
      if (b.a_is_nr && !leaves_a) {
        for (uint64_t nr = b.lo; nr <= b.hi; ++nr)
          out[nr - base] = run_bpf(prog, SeccompData{static_cast<uint32_t>(nr), arch, 0, {}});
        return;
      }
      if (cls(c) == LD) b.a_is_nr = c == (LD | W | ABS) && in.k == 0;
      if (c == (MISC | TXA)) b.a_is_nr = false;
      auto next = step(prog, pc, data, m);
      if (!next) break;
      pc = *next;
    }
    if (pc >= prog.size()) m.run.ret = 0;
    for (uint64_t nr = b.lo; nr <= b.hi; ++nr) out[nr - base] = m.run;
  }

  // A comparison of the number with a constant: the numbers that take the jump,
  // [t_lo, t_hi], and those on either side of them that do not.
  void split(size_t pc, const BpfInsn& in, uint32_t lo, uint32_t hi, const Machine& m) {
    uint64_t t_lo = in.k, t_hi = in.k;
    if (op(in.code) == JGT) t_lo = uint64_t{in.k} + 1, t_hi = UINT32_MAX;
    if (op(in.code) == JGE) t_hi = UINT32_MAX;
    t_lo = std::max<uint64_t>(t_lo, lo);
    t_hi = std::min<uint64_t>(t_hi, hi);
    const size_t taken = pc + 1 + in.jt, not_taken = pc + 1 + in.jf;
    auto go = [&](uint64_t from, uint64_t to, size_t next) {
      if (from <= to)
        pending.push_back({next, static_cast<uint32_t>(from), static_cast<uint32_t>(to), true, m});
    };
    if (t_lo > t_hi) return go(lo, hi, not_taken);
    if (t_lo > lo) go(lo, t_lo - 1, not_taken);
    go(t_lo, t_hi, taken);
    go(t_hi + 1, hi, not_taken);
  }
};

// The walk of run_bpf_for_calls. A group is a set of calls that have taken the same path
// so far. Its machine holds what run_bpf would hold for its first call, and `loaded` says
// which of A, X and M[0..15] hold a word of the call (under an `and` mask) that not all
// the calls of the group share. An instruction that reads only shared values runs once
// for the group; a comparison of a loaded word with a shared value splits the group by
// each call's own word; anything else computed from a loaded word makes the group fall
// back to run_bpf for each of its calls. The groups are disjoint.
struct CallWalk {
  struct Loaded {
    uint32_t offset, mask;  // the call's word at `offset` of seccomp_data, & mask
  };
  // A, X, then M[0..15].
  using Registers = std::array<std::optional<Loaded>, 2 + kMemWords>;
  static constexpr size_t kA = 0, kX = 1, kM = 2;
  struct Group {
    size_t pc;
    std::vector<uint32_t> calls;  // indices into CallWalk::calls
    Machine m;
    Registers loaded;
  };
  std::span<const BpfInsn> prog;
  std::span<const SeccompData> calls;
  std::vector<BpfRun>& out;
  std::vector<Group> pending;

  void run(Group first) {
    drain(pending, std::move(first), [&](Group& g) { walk(g); });
  }

  void walk(Group& g) {
    Machine& m = g.m;
    Registers& r = g.loaded;
    const SeccompData& first = calls[g.calls.front()];
    size_t pc = g.pc;
    while (pc < prog.size()) {
      const BpfInsn& in = prog[pc];
      const uint16_t c = in.code;
      const bool x_operand = (cls(c) == ALU || cls(c) == JMP) && src(c) == X;
      const std::optional<Loaded> operand = x_operand ? r[kX] : std::nullopt;
      if (cls(c) == JMP && op(c) != JA && r[kA] && !operand) {
        ++m.run.executed;
        split(std::move(g), pc, in);
        return;
      }
      const bool reads_loaded = operand || (r[kA] && (cls(c) == ALU || c == (RET | A)));
      if (reads_loaded && !(c == (ALU | AND | K))) {
        for (uint32_t i : g.calls) out[i] = run_bpf(prog, calls[i]);
        return;
      }
      switch (cls(c)) {
        case LD:  // as step() reads it
          if (c == (LD | W | ABS))
            r[kA] = shared_by_all(g, in.k) ? std::nullopt : std::optional(Loaded{in.k, UINT32_MAX});
          else
            r[kA] = mode(c) == LEN || mode(c) == IMM ? std::nullopt : r[kM + in.k % kMemWords];
          break;
        case LDX:
          r[kX] = mode(c) == LEN || mode(c) == IMM ? std::nullopt : r[kM + in.k % kMemWords];
          break;
        case ST:
          r[kM + in.k % kMemWords] = r[kA];
          break;
        case STX:
          r[kM + in.k % kMemWords] = r[kX];
          break;
        case ALU:  // `and #k` of a loaded word
          if (r[kA]) r[kA]->mask &= in.k;
          break;
        case MISC:
          if (op(c) == TAX) r[kX] = r[kA];
          else r[kA] = r[kX];
          break;
      }
      const auto next = step(prog, pc, first, m);
      if (!next) break;
      pc = *next;
    }
    if (pc >= prog.size()) m.run.ret = 0;
    for (uint32_t i : g.calls) out[i] = m.run;
  }

  // Whether every call of the group has the same word at `offset`: then the group reads
  // it like a constant, and its comparisons do not split the group.
  bool shared_by_all(const Group& g, uint32_t offset) const {
    const uint32_t w = load_word(calls[g.calls.front()], offset);
    return std::all_of(g.calls.begin(), g.calls.end(),
                       [&](uint32_t i) { return load_word(calls[i], offset) == w; });
  }

  static uint32_t value(const SeccompData& call, const Loaded& l) {
    return load_word(call, l.offset) & l.mask;
  }

  // A comparison of the loaded word in A: the calls that take the jump and those that do
  // not, each side with its machine holding its own first call's words.
  void split(Group g, size_t pc, const BpfInsn& in) {
    const uint32_t operand = src(in.code) == X ? g.m.x : in.k;
    const Loaded a = *g.loaded[kA];
    const auto jumping = std::partition(g.calls.begin(), g.calls.end(), [&](uint32_t i) {
      return !jump_taken(in.code, value(calls[i], a), operand);
    });
    Group taken{pc + 1 + in.jt, {jumping, g.calls.end()}, g.m, g.loaded};
    g.calls.erase(jumping, g.calls.end());
    g.pc = pc + 1 + in.jf;
    for (Group* side : {&g, &taken}) {
      if (side->calls.empty()) continue;
      const SeccompData& first = calls[side->calls.front()];
      Machine& m = side->m;
      for (size_t k = 0; k < side->loaded.size(); ++k)
        if (const auto& l = side->loaded[k])
          (k == kA ? m.a : k == kX ? m.x : m.mem[k - kM]) = value(first, *l);
      pending.push_back(std::move(*side));
    }
  }
};

}  // namespace

BpfRun run_bpf(std::span<const BpfInsn> prog, const SeccompData& d,
               std::vector<uint32_t>* trace) {
  Machine m;
  for (size_t pc = 0; pc < prog.size();) {
    if (trace) trace->push_back(static_cast<uint32_t>(pc));
    auto next = step(prog, pc, d, m);
    if (!next) return m.run;
    pc = *next;
  }
  m.run.ret = 0;
  return m.run;
}

std::vector<BpfRun> run_bpf_for_calls(std::span<const BpfInsn> prog,
                                      std::span<const SeccompData> calls) {
  std::vector<BpfRun> out(calls.size());
  if (calls.empty()) return out;
  CallWalk::Group all{0, std::vector<uint32_t>(calls.size()), {}, {}};
  for (uint32_t i = 0; i < calls.size(); ++i) all.calls[i] = i;
  CallWalk{prog, calls, out, {}}.run(std::move(all));
  return out;
}

std::vector<BpfRun> run_bpf_for_numbers(std::span<const BpfInsn> prog, uint32_t arch,
                                        uint32_t base, uint32_t count) {
  std::vector<BpfRun> out(count);
  if (count > 0) NumberWalk{prog, arch, base, out, {}}.run({0, base, base + (count - 1), false, {}});
  return out;
}

ir::Result<BpfEvaluation> evaluate_bpf(std::string_view bytes, ir::Arch arch, uint32_t nr,
                                       const std::array<uint64_t, 6>& args,
                                       uint64_t instruction_pointer) {
  const auto prog = parse_bpf(bytes);
  if (!prog) return prog.error();
  SeccompData d;
  d.arch = ir::audit_arch(arch);
  d.nr = arch == ir::Arch::X32 ? nr | ir::kX32SyscallBit : nr;
  d.instruction_pointer = instruction_pointer;
  d.args = args;
  const BpfRun r = run_bpf(*prog, d);
  return BpfEvaluation{r.ret, decode_seccomp_ret(r.ret), r.executed};
}

std::string seccomp_action_text(uint32_t ret) {
  const std::string name = seccomp_ret_name(ret);
  if (name != "?") return name;
  return "no action (" + hex_text(ret) + ")";
}

std::string hex_text(uint32_t v) {
  if (v == 0) return "0";
  char buf[8];
  const auto end = std::to_chars(buf, buf + sizeof buf, v, 16).ptr;
  return "0x" + std::string(buf, end);
}

namespace {

// A mnemonic left-aligned in five columns and a space ("jeq   ").
std::string mnemonic(std::string_view name) {
  std::string out(name);
  out.resize(std::max<size_t>(out.size(), 5), ' ');
  return out + ' ';
}

std::string load_text(const BpfInsn& in) {
  const std::string ld = cls(in.code) == LD ? "ld    " : "ldx   ";
  if (cls(in.code) == LD && mode(in.code) == ABS) return ld + "[" + std::to_string(in.k) + "]";
  if (mode(in.code) == LEN) return ld + "len " + std::to_string(kDataSize);
  return ld + (mode(in.code) == MEM ? "M" : "#") + std::to_string(in.k);
}

std::string alu_text(const BpfInsn& in) {
  static const char* names[] = {"add", "sub", "mul", "div", "or",  "and",
                                "lsh", "rsh", "neg", "mod", "xor"};
  const unsigned o = op(in.code) >> 4;
  if (op(in.code) == NEG) return "neg";
  const std::string n = mnemonic(o < 11 ? names[o] : "?");
  return src(in.code) == X ? n + "x" : n + "#" + hex_text(in.k);
}

// Targets as absolute instruction numbers: `in` is instruction `i`.
std::string jump_text(const BpfInsn& in, size_t i) {
  if (op(in.code) == JA) return "ja    " + std::to_string(i + 1 + in.k);
  static const char* names[] = {"ja", "jeq", "jgt", "jge", "jset"};
  const unsigned o = op(in.code) >> 4;
  std::string out = mnemonic(o < 5 ? names[o] : "?");
  out += src(in.code) == X ? "x" : "#" + hex_text(in.k);
  out += ", ";
  out += std::to_string(i + 1 + in.jt);
  out += ", ";
  out += std::to_string(i + 1 + in.jf);
  return out;
}

}  // namespace

std::string instruction_text(std::span<const BpfInsn> prog, size_t i) {
  const BpfInsn& in = prog[i];
  switch (cls(in.code)) {
    case LD:
    case LDX:
      return load_text(in);
    case ST:
    case STX:
      return (cls(in.code) == ST ? "st    M" : "stx   M") + std::to_string(in.k);
    case ALU:
      return alu_text(in);
    case JMP:
      return jump_text(in, i);
    case RET:
      if (rval(in.code) == A) return "ret   a";
      return "ret   #" + hex_text(in.k);
    case MISC:
      return op(in.code) == TAX ? "tax" : "txa";
  }
  return "?";
}

std::string disassemble_bpf(std::span<const BpfInsn> prog) {
  std::string out;
  char buf[192];
  bool a_is_nr = false;
  for (size_t i = 0; i < prog.size(); ++i) {
    const BpfInsn& in = prog[i];
    std::string note;
    if (cls(in.code) == LD) {
      a_is_nr = mode(in.code) == ABS && in.k == 0;
      if (mode(in.code) == ABS) note = field_name(in.k);
    } else if ((cls(in.code) == ALU) || in.code == (MISC | TXA)) {
      a_is_nr = false;
    } else if (cls(in.code) == JMP && op(in.code) != JA && a_is_nr && src(in.code) != X &&
               op(in.code) != JSET) {
      if (const auto* s = ir::find_syscall(ir::Arch::X86_64, in.k)) note = s->name;
    } else if (in.code == (RET | K)) {
      note = seccomp_ret_name(in.k);
    }
    std::snprintf(buf, sizeof buf, "%04zu  %-32s", i, instruction_text(prog, i).c_str());
    std::string line = buf;
    if (!note.empty()) line += "; " + note;
    while (line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string disassemble_bpf(std::string_view bytes) {
  const auto prog = parse_bpf(bytes);
  if (!prog) return "invalid seccomp program: " + prog.error().message + "\n";
  return disassemble_bpf(*prog);
}

}  // namespace zpolicy::compiler
