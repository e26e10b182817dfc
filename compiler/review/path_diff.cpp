#include "compiler/review/path_diff.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "compiler/analyzer/probes.hpp"

namespace zpolicy::compiler::review {
namespace {

Side expectation_side(const Expectation& e) {
  return {e.expect == Expect::Allow ? "allowed" : "denied", e.reason, e.rule};
}

struct Found {
  PathTable::Id id;
  std::string role;
};

// What makes two rows of one path the same row: the same change decided by the same
// lines for the same reasons.
using PathRowKey = std::tuple<bool, std::string, std::string, std::string, std::string>;
// What makes rows of several paths one difference: the same change of the same
// operations decided by the same lines (widening, old line, operations, new line).
using GroupKey = std::tuple<bool, std::string, std::string, std::string>;

}  // namespace

std::vector<Difference> diff_paths(const ir::Resolved& before, const ir::Resolved& after) {
  auto table = std::make_shared<PathTable>();
  Intent old_intent(before, table), new_intent(after, table);
  std::vector<Found> probes;
  std::vector<char> seen;
  auto collect = [&](const Probe& p) {
    if (p.id >= seen.size()) seen.resize(std::max<size_t>(p.id + 1, 2 * seen.size()));
    if (seen[p.id]) return;
    seen[p.id] = true;
    probes.push_back({p.id, p.role()});
  };
  for_each_probe(old_intent, collect);
  for_each_probe(new_intent, collect);
  std::sort(probes.begin(), probes.end(),
            [&](const Found& a, const Found& b) { return table->less(a.id, b.id); });

  // One row per change: the paths that change the same way for the same operations,
  // decided by the same lines, in the order of their first path.
  // A group speaks with the words of its shallowest path: the one nearest the change.
  struct Group {
    std::vector<PathTable::Id> ids;
    Difference diff;
    size_t depth = 0;
  };
  std::vector<Group> groups;
  std::map<GroupKey, size_t> group_of;
  for (const auto& probe : probes) {
    const SymbolicPath path = table->path(probe.id);
    std::map<PathRowKey, Difference> by_key;  // ordered, so rows of one path come out stably
    for (FsOp op : kAllFsOps) {
      const Expectation was = old_intent.expect(path, op);
      const Expectation now = new_intent.expect(path, op);
      const bool allowed_before = was.expect == Expect::Allow;
      const bool allowed_after = now.expect == Expect::Allow;
      if (allowed_before == allowed_after) continue;
      const PathRowKey key{allowed_after, was.rule.str(), was.reason, now.rule.str(), now.reason};
      auto [it, fresh] = by_key.try_emplace(key);
      Difference& d = it->second;
      if (fresh) {
        d.area = Area::Filesystem;
        d.path_class = probe.role;
        d.direction = allowed_after ? Direction::Widening : Direction::Narrowing;
        d.before = expectation_side(was);
        d.after = expectation_side(now);
      }
      d.operations.push_back(to_string(op));
    }
    for (auto& [key, d] : by_key) {
      std::string ops;
      for (const auto& o : d.operations) ops += o + ",";
      const GroupKey group_key{std::get<0>(key), std::get<1>(key), ops, std::get<3>(key)};
      auto [at, fresh] = group_of.try_emplace(group_key, groups.size());
      const size_t depth = path.components.size();
      if (fresh) groups.push_back({{}, d, depth});
      Group& g = groups[at->second];
      if (depth < g.depth) {
        g.diff.path_class = d.path_class;
        g.diff.before = d.before;
        g.diff.after = d.after;
        g.depth = depth;
      }
      g.ids.push_back(probe.id);
      g.diff.paths.push_back(path.str());
    }
  }
  std::vector<Difference> out;
  out.reserve(groups.size());
  for (auto& g : groups) {
    PathTable::Id common = g.ids.front();
    for (PathTable::Id id : g.ids)
      while (!table->contains(common, id)) common = table->up(common);
    const std::string name = table->path(common).str();
    const size_t below = g.ids.size() - (common == g.ids.front() ? 1 : 0);
    if (g.ids.size() == 1) g.diff.subject = name;
    else if (common == g.ids.front())
      g.diff.subject = name + " and " + std::to_string(below) + " path" + (below == 1 ? "" : "s") +
                       " probed below it";
    else
      g.diff.subject = std::to_string(below) + " paths probed below " + name;
    out.push_back(std::move(g.diff));
  }
  return out;
}

}  // namespace zpolicy::compiler::review
