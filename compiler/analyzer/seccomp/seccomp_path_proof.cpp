#include "compiler/analyzer/seccomp/seccomp_path_proof.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"

namespace zpolicy::compiler {
namespace {

using WKind = WordSet::Witness::Kind;
constexpr size_t kKeptCounterexamples = 100;
// Why a path is left unproven when a witness search runs out of budget.
constexpr const char* kTooComplex = "too complex to prove within the search budget";
// Conditions of one argument whose truth values are combined; a policy with more on one
// argument is refused unproven rather than searched at exponential cost.
constexpr size_t kMaxConditionsPerArgument = 16;
constexpr size_t kMaxCombinations = 1 << 20;

// One constraint on one word.
struct Atom {
  enum class Op : uint8_t { Any, Empty, AtLeast, AtMost, Bits, NotBits };
  Op op = Op::Any;
  uint32_t a = 0, b = 0;
};

void apply(WordSet& s, const Atom& t) {
  switch (t.op) {
    case Atom::Op::Any:
      break;
    case Atom::Op::Empty:
      s.make_empty();
      break;
    case Atom::Op::AtLeast:
      s.at_least(t.a);
      break;
    case Atom::Op::AtMost:
      s.at_most(t.a);
      break;
    case Atom::Op::Bits:
      s.bits(t.a, t.b);
      break;
    case Atom::Op::NotBits:
      s.not_bits(t.a, t.b);
      break;
  }
}

Atom eq(uint32_t v) { return {Atom::Op::Bits, UINT32_MAX, v}; }
Atom ne(uint32_t v) { return {Atom::Op::NotBits, UINT32_MAX, v}; }
Atom lt(uint32_t v) { return v == 0 ? Atom{Atom::Op::Empty} : Atom{Atom::Op::AtMost, v - 1}; }
Atom le(uint32_t v) { return {Atom::Op::AtMost, v}; }
Atom gt(uint32_t v) {
  return v == UINT32_MAX ? Atom{Atom::Op::Empty} : Atom{Atom::Op::AtLeast, v + 1};
}
Atom ge(uint32_t v) { return {Atom::Op::AtLeast, v}; }
constexpr Atom kAny{};

// A condition, or its negation, on one argument as a union of products (high word,
// low word), following condition_holds: a U32 argument compares its low word only,
// anything else all 64 bits, unsigned.
struct Alt {
  Atom hi, lo;
};
std::vector<Alt> alternatives(const ir::ArgCondition& c, ir::ArgWidth width, bool truth) {
  const uint32_t vl = static_cast<uint32_t>(c.value), vh = static_cast<uint32_t>(c.value >> 32);
  const uint32_t ml = static_cast<uint32_t>(c.mask), mh = static_cast<uint32_t>(c.mask >> 32);
  ir::CmpOp op = c.op;
  // Every operator as a positive form and whether it is negated.
  switch (op) {
    case ir::CmpOp::Ne:
      op = ir::CmpOp::Eq, truth = !truth;
      break;
    case ir::CmpOp::Gt:
      op = ir::CmpOp::Le, truth = !truth;
      break;
    case ir::CmpOp::Ge:
      op = ir::CmpOp::Lt, truth = !truth;
      break;
    default:
      break;
  }
  if (width == ir::ArgWidth::U32) {
    switch (op) {
      case ir::CmpOp::Eq:
        return {{kAny, truth ? eq(vl) : ne(vl)}};
      case ir::CmpOp::Lt:
        return {{kAny, truth ? lt(vl) : ge(vl)}};
      case ir::CmpOp::Le:
        return {{kAny, truth ? le(vl) : gt(vl)}};
      default:
        return {{kAny, truth ? Atom{Atom::Op::Bits, ml, vl} : Atom{Atom::Op::NotBits, ml, vl}}};
    }
  }
  switch (op) {
    case ir::CmpOp::Eq:
      if (truth) return {{eq(vh), eq(vl)}};
      return {{ne(vh), kAny}, {kAny, ne(vl)}};
    case ir::CmpOp::Lt:
      if (truth) return {{lt(vh), kAny}, {eq(vh), lt(vl)}};
      return {{gt(vh), kAny}, {eq(vh), ge(vl)}};
    case ir::CmpOp::Le:
      if (truth) return {{lt(vh), kAny}, {eq(vh), le(vl)}};
      return {{gt(vh), kAny}, {eq(vh), gt(vl)}};
    default:
      if (truth) return {{{Atom::Op::Bits, mh, vh}, {Atom::Op::Bits, ml, vl}}};
      return {{{Atom::Op::NotBits, mh, vh}, kAny}, {kAny, {Atom::Op::NotBits, ml, vl}}};
  }
}

// The conditions of one argument and the truth vectors its two words allow, each with
// a witness: the classes of the argument's values.
struct Cond {
  size_t rule, index;
};
struct ArgClass {
  uint32_t hi, lo;
};
struct ArgGroup {
  unsigned arg;
  std::vector<Cond> conds;
  std::vector<ArgClass> classes;
};

// For each condition of a group, its alternatives when false and when true: the same
// at every node of the search, so made once.
using CondAlternatives = std::vector<std::array<std::vector<Alt>, 2>>;
CondAlternatives alternatives_of(const ArgGroup& g, std::span<const ir::SyscallRule* const> rules,
                                 const ir::SyscallInfo& info) {
  CondAlternatives out;
  for (const Cond& k : g.conds) {
    const ir::ArgCondition& c = rules[k.rule]->conditions[k.index];
    out.push_back(
        {alternatives(c, info.args[c.index], false), alternatives(c, info.args[c.index], true)});
  }
  return out;
}

// A node of classify_argument()'s search: the first `j` conditions decided (bit k of
// `truth` for condition k), the high and low words they leave, and a member of each,
// found when the node was made: a leaf is a class with those members, and a word its
// alternative leaves alone keeps its parent's.
struct ClassNode {
  size_t j;
  uint32_t truth;
  WordSet hi, lo;
  WordSet::Witness in_hi, in_lo;
};

// `n` with its next condition decided `truth` by `alt`; none when a word is left empty.
std::optional<ClassNode> narrowed(const ClassNode& n, const Alt& alt, bool truth,
                                  size_t& budget) {
  ClassNode next{n.j + 1, n.truth | (truth ? 1u << n.j : 0u), n.hi, n.lo, n.in_hi, n.in_lo};
  if (alt.hi.op != Atom::Op::Any) {
    apply(next.hi, alt.hi);
    next.in_hi = next.hi.witness(budget);
  }
  if (next.in_hi.kind == WKind::Empty) return std::nullopt;
  if (alt.lo.op != Atom::Op::Any) {
    apply(next.lo, alt.lo);
    next.in_lo = next.lo.witness(budget);
  }
  if (next.in_lo.kind == WKind::Empty) return std::nullopt;
  return next;
}

std::optional<std::string> classify_argument(const WordSet& hi, const WordSet& lo,
                                             std::span<const ir::SyscallRule* const> rules,
                                             const ir::SyscallInfo& info, ArgGroup& g,
                                             size_t& budget) {
  auto too_complex = [&] {
    return "argument " + std::to_string(g.arg) + " too complex to split within the search budget";
  };
  const CondAlternatives alts = alternatives_of(g, rules, info);
  std::vector<ClassNode> stack{{0, 0, hi, lo, hi.witness(budget), lo.witness(budget)}};
  // Indexed by truth vector: at most 2^16 of them (kMaxConditionsPerArgument).
  std::vector<bool> seen(size_t{1} << g.conds.size());
  while (!stack.empty()) {
    ClassNode n = std::move(stack.back());
    stack.pop_back();
    if (n.j == g.conds.size()) {
      if (seen[n.truth]) continue;
      if (n.in_hi.kind == WKind::Unknown || n.in_lo.kind == WKind::Unknown) return too_complex();
      seen[n.truth] = true;
      g.classes.push_back({n.in_hi.value, n.in_lo.value});
      continue;
    }
    for (bool truth : {false, true})
      for (const Alt& alt : alts[n.j][truth])
        if (auto next = narrowed(n, alt, truth, budget)) stack.push_back(std::move(*next));
    if (budget == 0) return too_complex();
  }
  return std::nullopt;
}

// The six arguments of a call from its words.
std::array<uint64_t, 6> args_of(const std::array<uint32_t, kDataWords>& words) {
  std::array<uint64_t, 6> a{};
  for (unsigned i = 0; i < 6; ++i)
    a[i] = uint64_t{words[arg_high_word(i)]} << 32 | words[arg_low_word(i)];
  return a;
}

struct Prover {
  const SyscallIntent& intent;
  PathProof& out;
  std::set<std::pair<uint32_t, uint32_t>> reported;
  uint32_t known_end = 0;  // every x86_64 number the table knows is below this

  void mismatch(uint32_t audit, const SyscallCall& call, uint64_t ip, const ir::Action& want,
                size_t ret_pc) {
    ++out.mismatches;
    if (out.counterexamples.size() >= kKeptCounterexamples ||
        !reported.insert({audit, call.nr}).second)
      return;
    out.counterexamples.push_back({audit, call, ip, want, ret_pc});
  }

  std::optional<std::string> path(const BpfPath& p, size_t& budget) {
    std::array<uint32_t, kDataWords> w{};
    for (size_t i = 0; i < kDataWords; ++i) {
      const auto x = p.words[i].witness(budget);
      if (x.kind == WKind::Empty) return std::nullopt;  // no call takes this path
      if (x.kind == WKind::Unknown) return kTooComplex;
      w[i] = x.value;
    }
    ++out.paths;
    const auto got = decode_seccomp_ret(p.ret);
    const uint64_t ip = uint64_t{w[3]} << 32 | w[2];
    auto check = [&](uint32_t audit, const SyscallCall& call, const ir::Action& want) {
      if (!got || !(*got == want)) mismatch(audit, call, ip, want, p.ret_pc);
    };
    const ir::SyscallPolicy& policy = intent.policy();
    // x86_64 first, so that the first findings name the calls the policy rules on.
    if (p.words[kWordArch].contains(ir::kAuditArchX86_64))
      if (auto why = x86_64(p, w, budget, got, ip, check)) return why;
    // Foreign arches: everything but x86_64 answers the foreign-ABI action.
    WordSet foreign = p.words[kWordArch];
    foreign.not_bits(UINT32_MAX, ir::kAuditArchX86_64);
    const auto fa = foreign.witness(budget);
    if (fa.kind == WKind::Unknown) return kTooComplex;
    if (fa.kind == WKind::Found)
      check(fa.value, {ir::Arch::I386, w[kWordNr], args_of(w)}, policy.foreign_abi_action);
    return std::nullopt;
  }

  template <typename Check>
  std::optional<std::string> x86_64(const BpfPath& p, const std::array<uint32_t, kDataWords>& w,
                                    size_t& budget, const std::optional<ir::Action>& got,
                                    uint64_t ip, const Check& check) {
    const ir::SyscallPolicy& policy = intent.policy();
    const uint32_t x86 = ir::kAuditArchX86_64;
    const WordSet& nr = p.words[kWordNr];
    // Only the numbers within the path's range are asked: the paths of a program that
    // splits the numbers into intervals then cost their own intervals, together one
    // table, instead of the whole table each.
    const uint32_t lo = nr.parts().lo, hi = nr.parts().hi;
    const auto table = ir::syscall_table(ir::Arch::X86_64);  // sorted by number
    const auto from = std::lower_bound(table.begin(), table.end(), lo,
                                       [](const ir::SyscallInfo& s, uint32_t n) { return s.nr < n; });
    for (const ir::SyscallInfo& s : std::span(from, table.end())) {
      if (s.nr > hi) break;
      if (!nr.contains(s.nr)) continue;
      if (!intent.reads_arguments(s.nr)) {
        check(x86, {ir::Arch::X86_64, s.nr, args_of(w)},
              intent.decide({ir::Arch::X86_64, s.nr, {}}));
        continue;
      }
      if (auto why = known_number(p, s, w, budget, got, ip)) return why;
    }
    // x32: the x32 bit set.
    WordSet x32 = nr;
    x32.bits(ir::kX32SyscallBit, ir::kX32SyscallBit);
    const auto xa = x32.witness(budget);
    if (xa.kind == WKind::Unknown) return kTooComplex;
    if (xa.kind == WKind::Found)
      check(x86, {ir::Arch::X32, xa.value, args_of(w)}, policy.foreign_abi_action);
    // Unknown numbers: a hole of the table, or anything above it without the x32 bit.
    std::optional<uint32_t> unknown;
    for (uint32_t n = lo; n < known_end && n <= hi && !unknown; ++n)
      if (nr.contains(n) && !ir::find_syscall(ir::Arch::X86_64, n)) unknown = n;
    if (!unknown) {
      WordSet above = nr;
      above.bits(ir::kX32SyscallBit, 0);
      above.at_least(known_end);
      const auto u = above.witness(budget);
      if (u.kind == WKind::Unknown) return kTooComplex;
      if (u.kind == WKind::Found) unknown = u.value;
    }
    if (unknown) check(x86, {ir::Arch::X86_64, *unknown, args_of(w)}, policy.unknown_number_action);
    return std::nullopt;
  }

  std::optional<std::string> known_number(const BpfPath& p, const ir::SyscallInfo& s,
                                          const std::array<uint32_t, kDataWords>& w, size_t& budget,
                                          const std::optional<ir::Action>& got, uint64_t ip) {
    const auto rules = intent.rules_for(s.nr);
    std::vector<ArgGroup> groups;
    for (size_t r = 0; r < rules.size(); ++r)
      for (size_t i = 0; i < rules[r]->conditions.size(); ++i) {
        const unsigned arg = rules[r]->conditions[i].index;
        if (arg >= 6) continue;  // never holds
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const ArgGroup& g) { return g.arg == arg; });
        if (it == groups.end()) it = groups.insert(groups.end(), ArgGroup{arg, {}, {}});
        it->conds.push_back({r, i});
      }
    size_t combinations = 1;
    for (ArgGroup& g : groups) {
      if (g.conds.size() > kMaxConditionsPerArgument)
        return std::string(s.name) + ": more than 16 conditions on one argument";
      if (auto why = classify_argument(p.words[arg_high_word(g.arg)], p.words[arg_low_word(g.arg)],
                                       rules, s, g, budget))
        return why;
      // The classes cover every value of the argument and the path's sets are not empty,
      // so none at all means the split itself went wrong: refuse rather than skip.
      if (g.classes.empty())
        return std::string(s.name) + ": argument " + std::to_string(g.arg) + " has no class";
      combinations *= g.classes.size();
      if (combinations > kMaxCombinations)
        return std::string(s.name) + ": too many argument classes";
    }
    // Every combination of the arguments' classes, odometer-wise. A class's witness
    // makes each of its argument's conditions hold exactly as the class says, so the
    // intent's own decision on the witness call is the class's.
    std::vector<size_t> at(groups.size(), 0);
    for (;;) {
      std::array<uint32_t, kDataWords> words = w;
      for (size_t gi = 0; gi < groups.size(); ++gi) {
        words[arg_high_word(groups[gi].arg)] = groups[gi].classes[at[gi]].hi;
        words[arg_low_word(groups[gi].arg)] = groups[gi].classes[at[gi]].lo;
      }
      const SyscallCall call{ir::Arch::X86_64, s.nr, args_of(words)};
      const ir::Action intended = intent.decide(call);
      if (!got || !(*got == intended))
        mismatch(ir::kAuditArchX86_64, call, ip, intended, p.ret_pc);
      size_t g = 0;
      while (g < groups.size() && ++at[g] == groups[g].classes.size()) at[g++] = 0;
      if (g == groups.size()) break;
    }
    return std::nullopt;
  }
};

}  // namespace

PathProof prove_paths(const SyscallIntent& intent, std::span<const BpfInsn> program) {
  PathProof out;
  Prover prover{intent, out, {}, 0};
  for (const ir::SyscallInfo& s : ir::syscall_table(ir::Arch::X86_64))
    if (!(s.nr & ir::kX32SyscallBit)) prover.known_end = std::max(prover.known_end, s.nr + 1);
  out.unprovable =
      walk_paths(program, [&](const BpfPath& p, size_t& budget) { return prover.path(p, budget); });
  return out;
}

}  // namespace zpolicy::compiler
