#include "compiler/analyzer/seccomp/bpf_paths.hpp"

#include <vector>

namespace zpolicy::compiler {
namespace {

using namespace bpf;

using Value = SymbolicValue;

Value constant(uint32_t v) { return {Value::Kind::Const, 0, v}; }

struct State {
  size_t pc = 0;
  std::array<WordSet, kDataWords> words;
  Value a, x;
  // The loader refuses a read of M[i] before a write on every path, so the initial
  // value is never read.
  std::array<Value, kMemWords> mem{};
};

// Constrains `s` so that (word & mask) OP c holds (`taken`) or fails. False when the
// comparison cannot be represented exactly.
bool constrain(WordSet& s, uint16_t o, uint32_t mask, uint32_t c, bool taken) {
  switch (o) {
    case JEQ:
      if (taken)
        s.bits(mask, c);
      else
        s.not_bits(mask, c);
      return true;
    case JSET:
      if (taken)
        s.not_bits(mask & c, 0);
      else
        s.bits(mask & c, 0);
      return true;
    case JGT:
      if (mask != UINT32_MAX) return false;
      if (taken) {
        if (c == UINT32_MAX)
          s.make_empty();
        else
          s.at_least(c + 1);
      } else {
        s.at_most(c);
      }
      return true;
    case JGE:
      if (mask != UINT32_MAX) return false;
      if (taken) {
        s.at_least(c);
      } else {
        if (c == 0)
          s.make_empty();
        else
          s.at_most(c - 1);
      }
      return true;
  }
  return false;
}

// The same with the constant on the left: c OP (word & mask).
bool constrain_mirrored(WordSet& s, uint16_t o, uint32_t mask, uint32_t c, bool taken) {
  switch (o) {
    case JEQ:
    case JSET:
      return constrain(s, o, mask, c, taken);
    case JGT:  // c > w  <=>  !(w >= c)
      return constrain(s, JGE, mask, c, !taken);
    case JGE:  // c >= w  <=>  !(w > c)
      return constrain(s, JGT, mask, c, !taken);
  }
  return false;
}

}  // namespace

std::string Unprovable::str() const {
  return "instruction " + std::to_string(instruction) + ": " + why;
}

std::optional<Unprovable> walk_paths(std::span<const BpfInsn> prog, const PathVisitor& on_path,
                                     const PathWalkLimits& limits) {
  size_t budget = limits.search_budget;
  size_t paths = 1;
  std::vector<State> pending(1);
  auto stop = [](size_t pc, std::string why) { return Unprovable{pc, std::move(why)}; };
  // A branch is kept when some call can take it; a search that runs out of budget keeps
  // it too, and only costs a path that no call takes.
  auto feasible = [&](const WordSet& s) {
    return s.witness(budget).kind != WordSet::Witness::Kind::Empty;
  };
  auto leaf = [&](const State& st, uint32_t ret) -> std::optional<Unprovable> {
    BpfPath p{st.words, st.pc, ret};
    if (auto why = on_path(p, budget)) return stop(st.pc, *why);
    return std::nullopt;
  };
  while (!pending.empty()) {
    State st = std::move(pending.back());
    pending.pop_back();
    bool done = false;
    while (!done) {
      const size_t pc = st.pc;
      const BpfInsn& in = prog[pc];
      const uint16_t c = in.code;
      Value& a = st.a;
      Value& x = st.x;
      switch (cls(c)) {
        case LD:
        case LDX: {
          Value v = constant(kDataSize);  // LEN
          if (mode(c) == ABS)
            v = {Value::Kind::Word, static_cast<uint8_t>(in.k / 4), UINT32_MAX};
          else if (mode(c) == IMM)
            v = constant(in.k);
          else if (mode(c) == MEM)
            v = st.mem[in.k];
          (cls(c) == LD ? a : x) = v;
          st.pc = pc + 1;
          break;
        }
        case ST:
          st.mem[in.k] = a;
          st.pc = pc + 1;
          break;
        case STX:
          st.mem[in.k] = x;
          st.pc = pc + 1;
          break;
        case MISC:
          if (op(c) == TAX)
            x = a;
          else
            a = x;
          st.pc = pc + 1;
          break;
        case ALU: {
          const Value operand = src(c) == X ? x : constant(in.k);
          if (a.kind == Value::Kind::Const &&
              (op(c) == NEG || operand.kind == Value::Kind::Const)) {
            // The kernel's runtimes (interpreter, JITs) do not agree on such shifts.
            if ((op(c) == LSH || op(c) == RSH) && operand.value >= 32)
              return stop(pc, "shift by 32 or more through X: the kernel's runtimes differ");
            const auto r = alu_result(c, a.value, operand.value);
            if (!r) {  // division by zero: the kernel ends the filter with 0 (KILL_THREAD)
              if (auto u = leaf(st, 0)) return u;
              done = true;
              break;
            }
            a = constant(*r);
          } else if (a.kind == Value::Kind::Word && op(c) == AND &&
                     operand.kind == Value::Kind::Const) {
            a.value &= operand.value;
          } else {
            return stop(pc, "arithmetic on a value loaded from the call is not followed exactly");
          }
          st.pc = pc + 1;
          break;
        }
        case JMP: {
          if (op(c) == JA) {
            st.pc = pc + 1 + in.k;
            break;
          }
          const size_t t = pc + 1 + in.jt, f = pc + 1 + in.jf;
          const Value rhs = src(c) == X ? x : constant(in.k);
          if (t == f) {
            st.pc = t;
            break;
          }
          if (a.kind == Value::Kind::Const && rhs.kind == Value::Kind::Const) {
            st.pc = jump_taken(c, a.value, rhs.value) ? t : f;
            break;
          }
          if (a.kind == Value::Kind::Word && rhs.kind == Value::Kind::Word)
            return stop(pc,
                        "a comparison of two values loaded from the call is not followed exactly");
          const bool mirrored = a.kind == Value::Kind::Const;
          const Value& w = mirrored ? rhs : a;
          const uint32_t k = mirrored ? a.value : rhs.value;
          State other = st;
          auto apply = [&](State& s, bool taken) {
            return mirrored ? constrain_mirrored(s.words[w.word], op(c), w.value, k, taken)
                            : constrain(s.words[w.word], op(c), w.value, k, taken);
          };
          if (!apply(st, true) || !apply(other, false))
            return stop(pc, "an ordered comparison of a masked value is not followed exactly");
          st.pc = t;
          other.pc = f;
          const bool keep_other = feasible(other.words[w.word]);
          if (keep_other) {
            if (++paths > limits.max_paths)
              return stop(pc, "more than " + std::to_string(limits.max_paths) + " paths");
            pending.push_back(std::move(other));
          }
          if (!feasible(st.words[w.word])) done = true;
          break;
        }
        case RET: {
          if (rval(c) == K) {
            if (auto u = leaf(st, in.k)) return u;
            done = true;
            break;
          }
          if (a.kind == Value::Kind::Const) {
            if (auto u = leaf(st, a.value)) return u;
            done = true;
            break;
          }
          // `ret a` of a loaded word: one answer only if the path leaves the word (under
          // its mask) a single value.
          if (a.value == 0) {
            if (auto u = leaf(st, 0)) return u;
            done = true;
            break;
          }
          const auto one = st.words[a.word].witness(budget);
          if (one.kind == WordSet::Witness::Kind::Empty) {
            done = true;
            break;
          }
          WordSet rest = st.words[a.word];
          rest.not_bits(a.value, one.value & a.value);
          if (one.kind != WordSet::Witness::Kind::Found ||
              rest.witness(budget).kind != WordSet::Witness::Kind::Empty)
            return stop(pc, "returns a value that depends on the call");
          if (auto u = leaf(st, one.value & a.value)) return u;
          done = true;
          break;
        }
      }
      if (budget == 0) return stop(st.pc, "too complex to prove within the search budget");
    }
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
