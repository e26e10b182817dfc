#include "compiler/analyzer/seccomp/number_reach.hpp"

#include <algorithm>
#include <iterator>
#include <optional>

namespace zpolicy::compiler {
namespace {

using namespace bpf;
using Intervals = std::vector<std::pair<uint32_t, uint32_t>>;

// What the accumulator holds, as far as the number is concerned.
enum class Acc { Number, NotNumber, Unknown };

struct ReachState {
  bool reached = false;
  Intervals intervals;
  bool exact = true;
  Acc acc = Acc::NotNumber;
};

// The part of `in` within [lo, hi].
Intervals within(const Intervals& in, uint32_t lo, uint32_t hi) {
  Intervals out;
  for (const auto& [a, b] : in)
    if (b >= lo && a <= hi) out.emplace_back(std::max(a, lo), std::min(b, hi));
  return out;
}

void merge_into(ReachState& to, const Intervals& intervals, bool exact, Acc acc) {
  if (!to.reached) {
    to = {true, intervals, exact, acc};
    return;
  }
  to.exact = to.exact && exact;
  if (to.acc != acc) to.acc = Acc::Unknown;
  // Both lists are sorted and disjoint (every list made here is), so one merge sorts them.
  Intervals all;
  all.reserve(to.intervals.size() + intervals.size());
  std::merge(to.intervals.begin(), to.intervals.end(), intervals.begin(), intervals.end(),
             std::back_inserter(all));
  Intervals joined;
  for (const auto& iv : all)
    if (!joined.empty() && (joined.back().second == UINT32_MAX || iv.first <= joined.back().second + 1))
      joined.back().second = std::max(joined.back().second, iv.second);
    else
      joined.push_back(iv);
  to.intervals = std::move(joined);
}

// The accumulator after a non-jump instruction `in`, from `acc`.
Acc after(const BpfInsn& in, Acc acc) {
  switch (cls(in.code)) {
    case LD:
      if (mode(in.code) == ABS) return in.k == 0 ? Acc::Number : Acc::NotNumber;
      return mode(in.code) == MEM || mode(in.code) == IND ? Acc::Unknown : Acc::NotNumber;
    case ALU:
      // A constant operation on another word stays another word; on the number, or with
      // X (which may hold the number), it is something the intervals cannot follow.
      return acc == Acc::NotNumber && src(in.code) == K ? Acc::NotNumber : Acc::Unknown;
    case MISC:
      return in.code == (MISC | TXA) ? Acc::Unknown : acc;
    default:
      return acc;
  }
}

// The numbers of a jeq, jge or jgt #k of the number that take the jump, and those that
// do not; none take a jgt #0xffffffff, which then sends nothing to its target.
struct Split {
  std::optional<Intervals> taken;
  Intervals not_taken;
};

Split split_on(const BpfInsn& in, const Intervals& numbers) {
  // The numbers for which the jump is taken: [lo, hi].
  uint32_t lo = in.k, hi = op(in.code) == JEQ ? in.k : UINT32_MAX;
  if (op(in.code) == JGT) {
    if (in.k == UINT32_MAX) return {std::nullopt, numbers};
    lo = in.k + 1;
  }
  Intervals rest = lo > 0 ? within(numbers, 0, lo - 1) : Intervals{};
  if (hi < UINT32_MAX) {
    const Intervals above = within(numbers, hi + 1, UINT32_MAX);
    rest.insert(rest.end(), above.begin(), above.end());
  }
  return {within(numbers, lo, hi), std::move(rest)};
}

}  // namespace

std::vector<NumberReach> number_reach(std::span<const BpfInsn> program) {
  std::vector<ReachState> at(program.size());
  if (!program.empty()) at[0] = {true, {{0, UINT32_MAX}}, true, Acc::NotNumber};
  for (size_t i = 0; i < program.size(); ++i) {
    // Jumps go forward, so what is sent below never changes at[i].
    const ReachState& s = at[i];
    if (!s.reached) continue;
    const BpfInsn& in = program[i];
    auto send = [&](size_t to, const Intervals& iv, bool exact, Acc acc) {
      if (to < at.size()) merge_into(at[to], iv, exact, acc);
    };
    if (cls(in.code) == RET) continue;
    if (cls(in.code) != JMP) {
      send(i + 1, s.intervals, s.exact, after(in, s.acc));
      continue;
    }
    if (op(in.code) == JA) {
      send(i + 1 + in.k, s.intervals, s.exact, s.acc);
      continue;
    }
    const size_t taken = i + 1 + in.jt, not_taken = i + 1 + in.jf;
    const bool on_number = s.acc == Acc::Number && src(in.code) == K && op(in.code) != JSET;
    if (!on_number) {
      // A bit test of the number, or a comparison of it with X, splits it in ways one
      // interval per side cannot say.
      const bool exact = s.exact && s.acc == Acc::NotNumber && src(in.code) == K;
      send(taken, s.intervals, exact, s.acc);
      send(not_taken, s.intervals, exact, s.acc);
      continue;
    }
    const Split split = split_on(in, s.intervals);
    if (split.taken) send(taken, *split.taken, s.exact, s.acc);
    send(not_taken, split.not_taken, s.exact, s.acc);
  }
  std::vector<NumberReach> out;
  out.reserve(at.size());
  for (auto& s : at) out.push_back({std::move(s.intervals), s.exact});
  return out;
}

}  // namespace zpolicy::compiler
