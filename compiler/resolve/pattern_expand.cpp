#include "compiler/resolve/pattern_expand.hpp"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace zpolicy::compiler {
namespace {

using ir::HostKind;
using ir::PathPattern;

std::vector<ir::PatternComponent> after_prefix(const PathPattern& p) {
  const size_t n = p.literal_prefix().components.size();
  return {p.components.begin() + static_cast<long>(n), p.components.end()};
}

std::string joined_path(const std::string& base, const std::vector<std::string>& comps) {
  std::string out = base == "/" ? "" : base;
  for (const auto& c : comps) out += "/" + c;
  return out.empty() ? "/" : out;
}

// One walk per start directory, whatever number of patterns start there.
struct Group {
  std::vector<WalkPattern> patterns;
  std::vector<const ir::Located<PathPattern>*> origins;
  std::string spelled;  // WalkOptions::start_spelled (the first pattern's that differs)
};

std::optional<std::vector<PatternHit>> walk_groups(const std::map<std::string, Group>& groups,
                                                   WalkOptions options, const HostBinding& host,
                                                   ir::Diagnostics& diags) {
  std::vector<PatternHit> hits;
  bool ok = true;
  for (const auto& [start, g] : groups) {
    if (host.created_in_writable_root)
      options.created_in_writable_root = [&](const std::string& path, size_t origin) {
        return host.created_in_writable_root(path, g.origins[origin]->loc);
      };
    options.start_spelled = g.spelled;
    // Deny and protect walks alike follow host links outside the writable roots: a literal
    // deny path follows them (H17-6), and above the roots a host link is the host's way to
    // what it names: with the host's `~/x -> WS/sub`, `${HOME}/*/.env` left `WS/sub/.env`
    // writable, which the host reads as `~/x/.env`, a name the pattern spells.
    options.follow_link = host.follow_link;
    WalkResult w = walk_tree(start, g.patterns, options);
    if (w.error) {
      std::string names;
      for (const auto* o : g.origins) names += (names.empty() ? "'" : ", '") + o->value.str() + "'";
      diags.error(g.origins.front()->loc,
                  "pattern " + names + " below '" + start + "': " + *w.error + "; refusing to run");
      ok = false;
      continue;
    }
    for (auto& m : w.matches) {
      const auto& origin = *g.origins[m.origin];
      // Artifacts hold one path per line: a name with a line break in it (which an
      // earlier sandbox could have made) cannot be written down faithfully. One in the
      // start itself, a root's, resolution reports once for the root.
      // A followed host link's target (deny walks) need not lie below the start.
      const size_t from = m.path.starts_with(start) ? start.size() : 0;
      if (m.path.find_first_of("\n\r", from) != std::string::npos) {
        diags.error(origin.loc, "pattern '" + origin.value.str() + "' matches a path with a " +
                                    "line break in a name below '" + start +
                                    "'; rename it; refusing to run");
        ok = false;
        continue;
      }
      hits.push_back({std::move(m.path), origin.loc, !m.symlink && !m.dangling});
    }
  }
  if (!ok) return std::nullopt;
  return hits;
}

void add_to_group(std::map<std::string, Group>& groups, const std::string& start,
                  const std::string& lexical, const ir::Located<PathPattern>& p) {
  Group& g = groups[start];
  if (g.spelled.empty() && lexical != start) g.spelled = lexical;
  g.patterns.push_back({after_prefix(p.value), g.origins.size()});
  g.origins.push_back(&p);
}

std::unordered_set<std::string> paths_of(
    std::initializer_list<const std::vector<ir::ResolvedPath>*> sets) {
  std::unordered_set<std::string> out;
  for (const auto* s : sets)
    for (const auto& p : *s) out.insert(p.path);
  return out;
}

}  // namespace

void add_portable_patterns(const ir::Policy& policy, ir::Resolved& r) {
  if (r.mode == ir::Mode::WorkspaceWrite) {
    for (const auto& w : policy.write)
      for (const auto& pr : policy.protect_patterns) {
        const PathPattern& p = pr.value;
        if (p.is_relative())
          r.protect.push_back({p.below(w.value).str(), HostKind::Unknown, pr.loc});
        else if (w.value.contains(p.literal_prefix()))
          r.protect.push_back({p.str(), HostKind::Unknown, pr.loc});
      }
  }
  for (const auto& d : policy.deny_patterns)
    r.deny.push_back({d.value.str(), HostKind::Unknown, d.loc});
}

std::optional<std::vector<PatternHit>> expand_protect_patterns(const ir::Policy& policy,
                                                               const ir::Resolved& r,
                                                               const std::vector<ir::ResolvedPath>& roots,
                                                               const HostBinding& host,
                                                               ir::Diagnostics& diags,
                                                               const WalkLimits& limits) {
  if (r.mode != ir::Mode::WorkspaceWrite || policy.protect_patterns.empty())
    return std::vector<PatternHit>{};
  const auto pruned = paths_of({&r.protect, &r.deny});
  // A start inside a protected or denied directory matches nothing that needs a rule.
  auto inside_pruned = [&](const std::string& start) {
    for (auto at = start.size(); at != std::string::npos && at > 0; at = start.rfind('/', at - 1))
      if (pruned.contains(start.substr(0, at))) return true;
    return false;
  };
  std::map<std::string, Group> groups;
  bool ok = true;
  for (const auto& pr : policy.protect_patterns) {
    const ir::PolicyPath prefix = pr.value.literal_prefix();
    std::vector<std::string> lexical;
    if (pr.value.is_relative())
      for (const auto& w : r.write) lexical.push_back(joined_path(w.path, prefix.components));
    else
      lexical.push_back(host.bind(prefix));
    for (const auto& l : lexical) {
      auto start = host.canonical(l, pr.loc);
      if (!start) {
        ok = false;
        continue;
      }
      if (!inside_pruned(*start)) add_to_group(groups, *start, l, pr);
    }
  }
  if (!ok) return std::nullopt;
  auto below_a_root = [&](const std::string& p) { return ir::within_any(roots, p); };
  WalkOptions options;
  options.limits = limits;
  options.may_enter = [&](const std::string& dir) {
    if (pruned.contains(dir)) return false;
    // Above a writable root only on the way to it (an anchored `${HOME}/**/.git`).
    return below_a_root(dir) ||
           std::any_of(roots.begin(), roots.end(),
                       [&](const ir::ResolvedPath& w) { return ir::path_within(dir, w.path); });
  };
  options.may_pass = [&](const std::string& dir) { return !pruned.contains(dir); };
  options.keep = below_a_root;
  options.in_writable_root = below_a_root;
  return walk_groups(groups, options, host, diags);
}

std::optional<std::vector<PatternHit>> expand_deny_patterns(const ir::Policy& policy,
                                                            const ir::Resolved& r,
                                                            const HostBinding& host,
                                                            ir::Diagnostics& diags,
                                                            const WalkLimits& limits) {
  if (policy.deny_patterns.empty()) return std::vector<PatternHit>{};
  std::map<std::string, Group> groups;
  bool ok = true;
  for (const auto& d : policy.deny_patterns) {
    const std::string lexical = host.bind(d.value.literal_prefix());
    auto start = host.canonical(lexical, d.loc);
    if (!start) {
      ok = false;
      continue;
    }
    add_to_group(groups, *start, lexical, d);
  }
  if (!ok) return std::nullopt;
  const auto pruned = paths_of({&r.deny});
  WalkOptions options;
  options.limits = limits;
  options.may_enter = [&](const std::string& dir) { return !pruned.contains(dir); };
  options.in_writable_root = [&](const std::string& p) { return ir::within_any(r.write, p); };
  options.refuse_dangling = true;
  return walk_groups(groups, options, host, diags);
}

}  // namespace zpolicy::compiler
