#include "compiler/analyzer/sbpl/sbpl_nested_places.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace zpolicy::compiler {
namespace {

std::optional<std::string_view> parent_of(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  return path.substr(0, slash);
}

// `path` is `root` or below it.
bool at_or_below(std::string_view path, std::string_view root) {
  return path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/');
}

// What a path filter contributes wherever it is true, apart from its path: its kind, the
// single-child forms around it (require-not, a require-all or -any of one), and the
// first form above those that has other children, or its rule. Two filters of one shape
// that are true at the same places give a form the same answers (its other children are
// the same ones), and where neither is true, both are false (docs/verify.md).
std::vector<std::string> filter_shapes(const SbplProfile& p) {
  std::vector<int64_t> parent(p.filters.size(), -1);
  for (size_t r = 0; r < p.rules.size(); ++r)
    for (uint32_t i = p.rules[r].first_filter; i < p.rules[r].end_filter; ++i)
      parent[i] = -1 - static_cast<int64_t>(r);
  for (size_t i = 0; i < p.filters.size(); ++i)
    for (uint32_t c = p.filters[i].first_child; c < p.filters[i].end_child; ++c)
      parent[c] = static_cast<int64_t>(i);
  std::vector<std::string> shapes(p.filters.size());
  for (size_t i = 0; i < p.filters.size(); ++i) {
    const auto kind = p.filters[i].kind;
    if (kind != SbplFilter::Kind::Literal && kind != SbplFilter::Kind::Subpath) continue;
    std::string shape = kind == SbplFilter::Kind::Literal ? "L" : "S";
    int64_t up = parent[i];
    while (up >= 0 && p.filters[up].end_child - p.filters[up].first_child == 1) {
      shape += static_cast<char>('a' + static_cast<int>(p.filters[up].kind));
      up = parent[up];
    }
    shapes[i] = shape + (up >= 0 ? "@f" + std::to_string(up) : "@r" + std::to_string(-1 - up));
  }
  return shapes;
}

}  // namespace

std::variant<std::vector<NestedBinding>, NestedPlacesError> nested_bindings(
    const ir::Resolved& policy, const SbplProfile& bound, const std::vector<std::string>& roots) {
  // Every path the profile's filters or the policy's entries name, with what names it.
  const std::vector<std::string> shapes = filter_shapes(bound);
  std::unordered_map<std::string_view, std::vector<std::string>> named;
  for (size_t i = 0; i < bound.filters.size(); ++i)
    if (!shapes[i].empty()) {
      const SbplFilter& f = bound.filters[i];
      named[f.param_value ? *f.param_value : std::string_view(f.value)].push_back(shapes[i]);
    }
  const std::pair<const std::vector<ir::ResolvedPath>*, const char*> groups[] = {
      {&policy.read, "read"}, {&policy.write, "write"},     {&policy.protect, "protect"},
      {&policy.deny, "deny"}, {&policy.pin, "pin"}};
  for (const auto& [group, kind] : groups)
    for (const auto& e : *group) named[e.path].push_back(std::string("=") + kind);
  for (auto& [path, what] : named) std::sort(what.begin(), what.end());

  std::vector<NestedBinding> out;
  for (const std::string& outer : roots) {
    std::vector<std::string_view> below;  // sorted: those below any path are one run
    for (const auto& [path, what] : named)
      if (at_or_below(path, outer)) below.push_back(path);
    std::sort(below.begin(), below.end());
    auto holds_named = [&](const std::string& c) {
      auto it = std::lower_bound(below.begin(), below.end(), std::string_view(c));
      return it != below.end() && at_or_below(*it, c);
    };
    auto fresh_child = [&](std::string_view n) {
      for (size_t k = 0;; ++k) {
        std::string c = std::string(n) + "/zp-bind" + (k ? "-" + std::to_string(k) : "");
        if (!holds_named(c)) return c;
      }
    };
    std::vector<std::string> places = {outer, fresh_child(outer)};
    for (std::string_view n : below) {
      if (n == outer) continue;
      places.emplace_back(n);
      places.push_back(fresh_child(n));
      for (auto a = parent_of(n); a && a->size() > outer.size(); a = parent_of(*a))
        places.emplace_back(*a);
    }
    std::sort(places.begin(), places.end());
    places.erase(std::unique(places.begin(), places.end()), places.end());

    for (const std::string& root : roots) {
      if (root == outer) continue;
      // The paths below `root` it names itself, relative to it, with every leading part:
      // a name there is the same name wherever `root` is bound, and is kept as it is.
      std::unordered_set<std::string> own;
      for (const auto& [path, what] : named)
        if (path.size() > root.size() && at_or_below(path, root))
          for (std::optional<std::string_view> rel = path.substr(root.size() + 1); rel;
               rel = parent_of(*rel))
            own.insert(std::string(*rel));
      std::map<std::string, size_t> classes;  // signature -> its place in `out`
      for (const std::string& place : places) {
        std::vector<std::string> parts;
        std::set<std::string> kinds_above;  // a policy root of a kind above: only whether
        for (auto a = parent_of(place); a && at_or_below(*a, outer); a = parent_of(*a))
          if (const auto at = named.find(*a); at != named.end()) {
            for (const auto& what : at->second) {
              if (what.starts_with("="))
                kinds_above.insert(what);
              else
                parts.push_back("above " + what + " " +
                                std::to_string(std::count(a->begin(), a->end(), '/')));
            }
          }
        for (const auto& k : kinds_above) parts.push_back("above " + k);
        // The paths below the place, relative to it, each name that `root` does not name
        // there abstracted to its rank among such siblings and its length.
        const std::string prefix = place + "/";
        auto first = std::lower_bound(below.begin(), below.end(), std::string_view(prefix));
        std::map<std::string, std::vector<std::string>> strangers;  // by parent, sorted
        std::vector<std::string_view> inside;
        for (auto it = first; it != below.end() && it->starts_with(prefix); ++it) {
          inside.push_back(*it);
          const std::string_view rel = it->substr(prefix.size());
          for (std::optional<std::string_view> part = rel; part; part = parent_of(*part)) {
            if (own.contains(std::string(*part))) continue;
            const auto slash = part->rfind('/');
            const std::string up(slash == std::string_view::npos ? "" : part->substr(0, slash));
            strangers[up].emplace_back(part->substr(slash == std::string_view::npos ? 0 : slash + 1));
          }
        }
        for (auto& [up, names] : strangers) {
          std::sort(names.begin(), names.end());
          names.erase(std::unique(names.begin(), names.end()), names.end());
        }
        auto abstracted = [&](std::string_view rel) {
          std::string out_rel, up;
          for (size_t start = 0; start <= rel.size();) {
            const size_t end = std::min(rel.find('/', start), rel.size());
            const std::string name(rel.substr(start, end - start));
            const std::string part(rel.substr(0, end));
            std::string shown = name;
            if (!own.contains(part)) {
              const auto& names = strangers.at(up);
              shown = "#" + std::to_string(std::lower_bound(names.begin(), names.end(), name) -
                                           names.begin()) +
                      "." + std::to_string(name.size());
            }
            out_rel += (out_rel.empty() ? "" : "/") + shown;
            up = part;
            start = end + 1;
          }
          return out_rel;
        };
        if (const auto at = named.find(place); at != named.end())
          for (const auto& what : at->second) parts.push_back("at " + what);
        for (std::string_view path : inside) {
          const std::string shown = abstracted(path.substr(prefix.size()));
          for (const auto& what : named.at(path)) parts.push_back("below " + shown + " " + what);
        }
        std::sort(parts.begin(), parts.end());
        std::string signature;
        for (const auto& p : parts) signature += p + "\n";
        auto [it, fresh] = classes.try_emplace(std::move(signature), out.size());
        if (fresh)
          out.push_back({root, outer, place, 1});
        else
          ++out[it->second].stands_for;
      }
      if (classes.size() > kMaxNestedClasses)
        return NestedPlacesError{root + " inside " + outer, classes.size()};
    }
  }
  if (out.size() > kMaxNestedProofs) return NestedPlacesError{"in all", out.size()};
  return out;
}

}  // namespace zpolicy::compiler
