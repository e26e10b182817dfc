#include "compiler/review/process_diff.hpp"

#include <set>

namespace zpolicy::compiler::review {
namespace {

Difference setting(Area area, std::string subject, Direction dir, Side before, Side after) {
  Difference d;
  d.area = area;
  d.subject = std::move(subject);
  d.direction = dir;
  d.before = std::move(before);
  d.after = std::move(after);
  return d;
}

ir::SourceLoc builtin_if_empty(const ir::SourceLoc& loc) {
  return loc.file.empty() ? ir::SourceLoc{ir::kBuiltinFile, 0, 0} : loc;
}

// Whether keep entry `wide` keeps every name `narrow` keeps: equal, or `wide` a prefix
// pattern ("LC_*") whose prefix starts `narrow`'s name or prefix.
bool covers(const std::string& wide, const std::string& narrow) {
  if (wide == narrow) return true;
  if (!wide.ends_with('*')) return false;
  return narrow.starts_with(std::string_view(wide).substr(0, wide.size() - 1));
}

const ir::Located<std::string>* covering(const std::vector<ir::Located<std::string>>& keep,
                                         const std::string& name) {
  for (const auto& k : keep)
    if (covers(k.value, name)) return &k;
  return nullptr;
}

std::string duration_words(std::chrono::milliseconds ms) {
  const auto n = ms.count();
  if (n % 3600000 == 0) return std::to_string(n / 3600000) + "h";
  if (n % 60000 == 0) return std::to_string(n / 60000) + "m";
  if (n % 1000 == 0) return std::to_string(n / 1000) + "s";
  return std::to_string(n) + "ms";
}

void diff_env(const Reviewed& before, const Reviewed& after, std::vector<Difference>& out) {
  const auto& old_keep = before.resolved.env.keep;
  const auto& new_keep = after.resolved.env.keep;
  // Kept names: each entry one side has that the other side's entries do not cover.
  auto one_way = [&](const std::vector<ir::Located<std::string>>& from,
                     const std::vector<ir::Located<std::string>>& other, bool added) {
    std::set<std::string> done;
    for (const auto& k : from) {
      if (covering(other, k.value) || !done.insert(k.value).second) continue;
      const Side kept{"kept", "keep " + k.value, k.loc};
      const Side dropped{"dropped", "no keep entry covers it", {}};
      out.push_back(setting(Area::Environment, "keep " + k.value,
                            added ? Direction::Widening : Direction::Narrowing,
                            added ? dropped : kept, added ? kept : dropped));
    }
  };
  one_way(new_keep, old_keep, true);
  one_way(old_keep, new_keep, false);

  const auto& old_set = before.resolved.env.set;
  const auto& new_set = after.resolved.env.set;
  std::set<std::string> names;
  for (const auto& [k, v] : old_set) names.insert(k);
  for (const auto& [k, v] : new_set) names.insert(k);
  for (const auto& name : names) {
    const auto o = old_set.find(name);
    const auto n = new_set.find(name);
    if (o != old_set.end() && n != new_set.end() && o->second.value == n->second.value) continue;
    auto side = [&](const auto& it, const auto& map, const std::vector<ir::Located<std::string>>& keep) {
      if (it != map.end()) return Side{name + "=" + it->second.value, "set " + name, it->second.loc};
      if (const auto* k = covering(keep, name))
        return Side{"the caller's value", "keep " + k->value, k->loc};
      return Side{"unset", "neither set nor kept", {}};
    };
    const Side was = side(o, old_set, old_keep);
    const Side now = side(n, new_set, new_keep);
    // Only dropping a value nobody keeps hands the command less; any other change hands
    // it a value it did not get before.
    const bool narrower = n == new_set.end() && now.verdict == "unset";
    out.push_back(setting(Area::Environment, "set " + name,
                          narrower ? Direction::Narrowing : Direction::Widening, was, now));
  }
}

}  // namespace

std::vector<Difference> diff_process(const Reviewed& before, const Reviewed& after) {
  std::vector<Difference> out;
  const auto& a = before.resolved;
  const auto& b = after.resolved;
  if (a.mode != b.mode)
    out.push_back(setting(Area::Mode, "mode",
                          ir::narrower_or_equal(b.mode, a.mode) ? Direction::Narrowing
                                                                : Direction::Widening,
                          {ir::to_string(a.mode), "mode", builtin_if_empty(before.policy.mode.loc)},
                          {ir::to_string(b.mode), "mode", builtin_if_empty(after.policy.mode.loc)}));
  diff_env(before, after, out);
  if (a.timeout != b.timeout) {
    auto side = [](const Reviewed& r) {
      if (!r.resolved.timeout) return Side{"none", "no process.timeout", {}};
      return Side{duration_words(*r.resolved.timeout), "process.timeout", r.policy.timeout->loc};
    };
    const bool longer = !b.timeout || (a.timeout && *b.timeout > *a.timeout);
    out.push_back(setting(Area::Timeout, "timeout",
                          longer ? Direction::Widening : Direction::Narrowing, side(before),
                          side(after)));
  }
  if (a.unavailable != b.unavailable)
    out.push_back(setting(Area::Unavailable, "unavailable",
                          b.unavailable == ir::Unavailable::RunUnconfined ? Direction::Widening
                                                                          : Direction::Narrowing,
                          {ir::to_string(a.unavailable), "unavailable",
                           builtin_if_empty(before.policy.unavailable.loc)},
                          {ir::to_string(b.unavailable), "unavailable",
                           builtin_if_empty(after.policy.unavailable.loc)}));
  return out;
}

}  // namespace zpolicy::compiler::review
