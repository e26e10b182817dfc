#include "compiler/review/syscall_diff.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <set>
#include <tuple>

#include "compiler/analyzer/seccomp/syscall_decision.hpp"
#include "compiler/review/syscall_words.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler::review {
namespace {

constexpr size_t kMaxPoints = size_t{1} << 16;
constexpr int kMaxMaskBits = 10;
constexpr size_t kPointsNamed = 4;

using Point = std::vector<uint64_t>;  // one value per argument index compared

struct Answer {
  ir::Action action;
  const ir::SyscallRule* rule = nullptr;  // none: the policy's default decides
};

// The most restrictive rule naming the call whose conditions all hold at `point`.
Answer answer(const std::vector<const ir::SyscallRule*>& rules, const ir::SyscallPolicy& policy,
              const ir::SyscallInfo* info, const std::vector<unsigned>& indices,
              const Point& point) {
  Answer out{policy.default_action, nullptr};
  for (const ir::SyscallRule* r : rules) {
    bool applies = true;
    for (const auto& c : r->conditions) {
      const auto at = std::find(indices.begin(), indices.end(), c.index);
      const ir::ArgWidth w = info && c.index < 6 ? info->args[c.index] : ir::ArgWidth::U64;
      if (c.index >= 6 || !condition_holds(c, w, point[at - indices.begin()])) {
        applies = false;
        break;
      }
    }
    if (applies && (!out.rule || ir::more_restrictive(r->action, out.action)))
      out = {r->action, r};
  }
  return out;
}

// Whether two answers differ in what they let through, and which way.
std::optional<Direction> action_change(const ir::Action& was, const ir::Action& now) {
  if (was.kind == now.kind) return std::nullopt;  // one errno for another is no difference
  return ir::more_restrictive(was, now) ? Direction::Widening : Direction::Narrowing;
}

std::set<uint64_t> candidates(const std::vector<const ir::ArgCondition*>& conditions) {
  std::set<uint64_t> out{0};
  uint64_t masked = 0;
  for (const auto* c : conditions) {
    out.insert(c->value);
    if (c->op == ir::CmpOp::MaskedEq) {
      masked |= c->mask;
      out.insert(c->mask);
    } else {
      out.insert(c->value - 1);
      out.insert(c->value + 1);
    }
  }
  if (std::popcount(masked) <= kMaxMaskBits) {
    // Every subset of the tested bits.
    for (uint64_t s = masked;; s = (s - 1) & masked) {
      out.insert(s);
      if (s == 0) break;
    }
  }
  return out;
}

std::vector<Point> points(const std::vector<std::vector<uint64_t>>& values) {
  size_t total = 1;
  for (const auto& v : values) total = std::min(kMaxPoints + 1, total * v.size());
  std::vector<Point> out;
  if (total > kMaxPoints) {
    // Too many combinations: each argument's values with the others at 0.
    for (size_t i = 0; i < values.size(); ++i)
      for (uint64_t v : values[i]) {
        Point p(values.size(), 0);
        p[i] = v;
        out.push_back(std::move(p));
      }
    return out;
  }
  out.push_back({});
  for (const auto& v : values) {
    std::vector<Point> next;
    next.reserve(out.size() * v.size());
    for (const auto& p : out)
      for (uint64_t x : v) {
        Point q = p;
        q.push_back(x);
        next.push_back(std::move(q));
      }
    out = std::move(next);
  }
  return out;
}

Side answer_side(const Answer& a, const ir::SourceLoc& default_loc) {
  if (!a.rule) return {a.action.str(), "the default for calls no rule names", default_loc};
  std::string why = "rule for " + a.rule->name;
  for (size_t i = 0; i < a.rule->conditions.size(); ++i)
    why += (i ? " and " : " when ") + condition_words(a.rule->name, a.rule->conditions[i]);
  return {a.action.str(), why, a.rule->loc};
}

std::string point_words(const std::string& name, const std::vector<unsigned>& indices,
                        const Point& p) {
  std::string out = name + "(";
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i) out += ", ";
    if (indices.size() > 1) out += argument_name(name, indices[i]) + "=";
    out += value_words(name, indices[i], p[i]);
  }
  return out + ")";
}

void diff_call(const std::string& name, const SyscallSide& before, const SyscallSide& after,
               std::vector<Difference>& out) {
  const ir::SyscallInfo* info = ir::find_syscall(ir::Arch::X86_64, name);
  std::vector<const ir::SyscallRule*> old_rules, new_rules;
  std::map<unsigned, std::vector<const ir::ArgCondition*>> by_index;
  auto gather = [&](const ir::SyscallPolicy& p, std::vector<const ir::SyscallRule*>& rules) {
    for (const auto& r : p.rules) {
      if (r.name != name) continue;
      rules.push_back(&r);
      for (const auto& c : r.conditions)
        if (c.index < 6) by_index[c.index].push_back(&c);
    }
  };
  gather(before.policy, old_rules);
  gather(after.policy, new_rules);
  std::vector<unsigned> indices;
  std::vector<std::vector<uint64_t>> values;
  for (const auto& [index, conditions] : by_index) {
    indices.push_back(index);
    const auto c = candidates(conditions);
    values.emplace_back(c.begin(), c.end());
  }
  const auto all = points(values);

  struct Group {
    Answer was, now;
    Direction direction;
    std::vector<const Point*> points;
  };
  std::vector<Group> groups;
  for (const auto& p : all) {
    const Answer was = answer(old_rules, before.policy, info, indices, p);
    const Answer now = answer(new_rules, after.policy, info, indices, p);
    const auto dir = action_change(was.action, now.action);
    if (!dir) continue;
    auto same = [&](const Group& g) {
      return g.was.rule == was.rule && g.now.rule == now.rule && g.was.action == was.action &&
             g.now.action == now.action;
    };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) {
      groups.push_back({was, now, *dir, {}});
      it = groups.end() - 1;
    }
    it->points.push_back(&p);
  }
  for (const auto& g : groups) {
    Difference d;
    d.area = Area::Syscalls;
    d.direction = g.direction;
    d.before = answer_side(g.was, before.default_loc);
    d.after = answer_side(g.now, after.default_loc);
    // The stricter side's rule says which calls it is about, when it names a condition and
    // the row is every call it decides: where the other side still refuses some of them
    // (a narrower rule), its words would claim more than changed, and the values say it.
    const ir::SyscallRule* strict = g.direction == Direction::Widening ? g.was.rule : g.now.rule;
    const auto strict_decides = [&] {
      const auto& rules = g.direction == Direction::Widening ? old_rules : new_rules;
      const auto& side = g.direction == Direction::Widening ? before : after;
      return static_cast<size_t>(std::count_if(all.begin(), all.end(), [&](const Point& p) {
        return answer(rules, side.policy, info, indices, p).rule == strict;
      }));
    };
    if (g.points.size() == all.size()) {
      d.subject = name;
    } else if (strict && !strict->conditions.empty() && strict_decides() == g.points.size()) {
      d.subject = name + "(";
      for (size_t i = 0; i < strict->conditions.size(); ++i)
        d.subject += (i ? " and " : "") + condition_words(name, strict->conditions[i]);
      d.subject += ")";
    } else {
      for (size_t i = 0; i < g.points.size() && i < kPointsNamed; ++i)
        d.subject += (i ? ", " : "") + point_words(name, indices, *g.points[i]);
      if (g.points.size() > kPointsNamed)
        d.subject += " and " + std::to_string(g.points.size() - kPointsNamed) +
                     " more argument combinations";
    }
    out.push_back(std::move(d));
  }
}

void diff_fixed(const char* subject, const ir::Action& was, const ir::Action& now,
                const SyscallSide& before, const SyscallSide& after, const char* why,
                std::vector<Difference>& out) {
  const auto dir = action_change(was, now);
  if (!dir) return;
  Difference d;
  d.area = Area::Syscalls;
  d.subject = subject;
  d.direction = *dir;
  d.before = {was.str(), why, before.default_loc};
  d.after = {now.str(), why, after.default_loc};
  out.push_back(std::move(d));
}

}  // namespace

std::vector<Difference> diff_syscalls(const SyscallSide& before, const SyscallSide& after) {
  std::vector<Difference> out;
  diff_fixed("every call no rule names", before.policy.default_action,
             after.policy.default_action, before, after, "the default for calls no rule names",
             out);
  std::set<std::string> names;
  for (const auto& r : before.policy.rules) names.insert(r.name);
  for (const auto& r : after.policy.rules) names.insert(r.name);
  for (const auto& name : names) diff_call(name, before, after, out);
  diff_fixed("syscall numbers the table does not know", before.policy.unknown_number_action,
             after.policy.unknown_number_action, before, after, "unknown numbers", out);
  diff_fixed("i386 and x32 calls", before.policy.foreign_abi_action,
             after.policy.foreign_abi_action, before, after, "foreign ABIs", out);
  return out;
}

}  // namespace zpolicy::compiler::review
