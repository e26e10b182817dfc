#include "compiler/analyzer/seccomp/bpf_paths.hpp"

#include <utility>
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

// What an instruction leaves of the path it ran on: it goes on at the state's pc, or it
// ended (it returned, no call takes it on, or it cannot be followed).
enum class Path { Goes, Ends };

// The walk of walk_paths: a stack of the paths still to follow, each a State, and the
// search budget they share.
class PathWalker {
 public:
  PathWalker(std::span<const BpfInsn> prog, const PathVisitor& on_path,
             const PathWalkLimits& limits)
      : prog_(prog), on_path_(on_path), limits_(limits), budget_(limits.search_budget) {}

  std::optional<Unprovable> walk() {
    std::vector<State> pending(1);
    while (!pending.empty()) {
      State st = std::move(pending.back());
      pending.pop_back();
      for (Path p = Path::Goes; p == Path::Goes;) {
        p = step(st, pending);
        if (stopped_) return stopped_;
        if (budget_ == 0) return Unprovable{st.pc, "too complex to prove within the search budget"};
      }
    }
    return std::nullopt;
  }

 private:
  // Runs the instruction at st.pc on the path `st`; a fork pushes its other branch onto
  // `pending`.
  Path step(State& st, std::vector<State>& pending) {
    const BpfInsn& in = prog_[st.pc];
    switch (cls(in.code)) {
      case LD:
      case LDX:
        load(st, in);
        return Path::Goes;
      case ST:
      case STX:
      case MISC:
        store_or_copy(st, in);
        return Path::Goes;
      case ALU:
        return alu(st, in);
      case JMP:
        return jump(st, in, pending);
      case RET:
        return ret(st, in);
    }
    return Path::Goes;
  }

  static void load(State& st, const BpfInsn& in) {
    const uint16_t c = in.code;
    Value v = constant(kDataSize);  // LEN
    if (mode(c) == ABS)
      v = {Value::Kind::Word, static_cast<uint8_t>(in.k / 4), UINT32_MAX};
    else if (mode(c) == IMM)
      v = constant(in.k);
    else if (mode(c) == MEM)
      v = st.mem[in.k];
    (cls(c) == LD ? st.a : st.x) = v;
    ++st.pc;
  }

  // The stores and the register copies.
  static void store_or_copy(State& st, const BpfInsn& in) {
    const uint16_t c = in.code;
    if (cls(c) == ST)
      st.mem[in.k] = st.a;
    else if (cls(c) == STX)
      st.mem[in.k] = st.x;
    else if (op(c) == TAX)
      st.x = st.a;
    else
      st.a = st.x;
    ++st.pc;
  }

  // Arithmetic is followed on constants, and `and` with a constant on a loaded word.
  Path alu(State& st, const BpfInsn& in) {
    const uint16_t c = in.code;
    Value& a = st.a;
    const Value operand = src(c) == X ? st.x : constant(in.k);
    if (a.kind == Value::Kind::Const && (op(c) == NEG || operand.kind == Value::Kind::Const)) {
      // The kernel counts such a shift modulo 32 (alu_result, red team A29B-1), but only
      // one kernel and its JIT were asked, and the shift is undefined in the C its
      // interpreter is written in: no emitter shifts, so the proof refuses it rather than
      // rest on one runtime's answer.
      if ((op(c) == LSH || op(c) == RSH) && operand.value >= 32)
        return stop(st.pc, "shift by 32 or more through X: undefined in the kernel's own C");
      const auto r = alu_result(c, a.value, operand.value);
      // Division by zero: the kernel ends the filter with 0 (KILL_THREAD).
      if (!r) return leaf(st, 0);
      a = constant(*r);
    } else if (a.kind == Value::Kind::Word && op(c) == AND && operand.kind == Value::Kind::Const) {
      a.value &= operand.value;
    } else {
      return stop(st.pc, "arithmetic on a value loaded from the call is not followed exactly");
    }
    ++st.pc;
    return Path::Goes;
  }

  // A jump on constants goes one way; a comparison of a loaded word with a constant
  // forks, each branch constraining the word, and a branch no call can take is dropped.
  Path jump(State& st, const BpfInsn& in, std::vector<State>& pending) {
    const uint16_t c = in.code;
    const size_t pc = st.pc;
    if (op(c) == JA) {
      st.pc = pc + 1 + in.k;
      return Path::Goes;
    }
    const size_t t = pc + 1 + in.jt, f = pc + 1 + in.jf;
    const Value& a = st.a;
    const Value rhs = src(c) == X ? st.x : constant(in.k);
    if (t == f) {
      st.pc = t;
      return Path::Goes;
    }
    if (a.kind == Value::Kind::Const && rhs.kind == Value::Kind::Const) {
      st.pc = jump_taken(c, a.value, rhs.value) ? t : f;
      return Path::Goes;
    }
    if (a.kind == Value::Kind::Word && rhs.kind == Value::Kind::Word)
      return stop(pc, "a comparison of two values loaded from the call is not followed exactly");
    const bool mirrored = a.kind == Value::Kind::Const;
    const Value w = mirrored ? rhs : a;
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
    if (feasible(other.words[w.word])) {
      if (++paths_ > limits_.max_paths)
        return stop(pc, "more than " + std::to_string(limits_.max_paths) + " paths");
      pending.push_back(std::move(other));
    }
    return feasible(st.words[w.word]) ? Path::Goes : Path::Ends;
  }

  // A return of a constant, or of a loaded word that the path leaves a single value.
  Path ret(State& st, const BpfInsn& in) {
    const Value& a = st.a;
    if (rval(in.code) == K) return leaf(st, in.k);
    if (a.kind == Value::Kind::Const || a.value == 0) return leaf(st, a.value);
    // `ret a` of a loaded word: one answer only if the path leaves the word (under its
    // mask) a single value.
    const auto one = st.words[a.word].witness(budget_);
    if (one.kind == WordSet::Witness::Kind::Empty) return Path::Ends;
    WordSet rest = st.words[a.word];
    rest.not_bits(a.value, one.value & a.value);
    if (one.kind != WordSet::Witness::Kind::Found ||
        rest.witness(budget_).kind != WordSet::Witness::Kind::Empty)
      return stop(st.pc, "returns a value that depends on the call");
    return leaf(st, one.value & a.value);
  }

  // A branch is kept when some call can take it; a search that runs out of budget keeps
  // it too, and only costs a path that no call takes.
  bool feasible(const WordSet& s) {
    return s.witness(budget_).kind != WordSet::Witness::Kind::Empty;
  }

  // The path ends returning `value`: the visitor sees it, with the path's words, which
  // the walk no longer needs.
  Path leaf(State& st, uint32_t value) {
    const BpfPath p{std::move(st.words), st.pc, value};
    if (auto why = on_path_(p, budget_)) return stop(st.pc, *why);
    return Path::Ends;
  }

  Path stop(size_t pc, std::string why) {
    stopped_ = Unprovable{pc, std::move(why)};
    return Path::Ends;
  }

  std::span<const BpfInsn> prog_;
  const PathVisitor& on_path_;
  const PathWalkLimits& limits_;
  size_t budget_;
  size_t paths_ = 1;
  std::optional<Unprovable> stopped_;
};

}  // namespace

std::string Unprovable::str() const {
  return "instruction " + std::to_string(instruction) + ": " + why;
}

std::optional<Unprovable> walk_paths(std::span<const BpfInsn> prog, const PathVisitor& on_path,
                                     const PathWalkLimits& limits) {
  return PathWalker(prog, on_path, limits).walk();
}

}  // namespace zpolicy::compiler
