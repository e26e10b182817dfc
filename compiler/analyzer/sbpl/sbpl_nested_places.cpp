#include "compiler/analyzer/sbpl/sbpl_nested_places.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_set>

#include "compiler/analyzer/path_text.hpp"

namespace zpolicy::compiler {
namespace {

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

// Every path the profile's filters or the policy's entries name, with what names it
// (sorted), for a profile and policy whose roots some chain has bound (each path written
// below the chain's first root).
using Named = std::map<std::string, std::vector<std::string>>;

Named named_paths(const ir::Resolved& policy, const SbplProfile& bound) {
  const std::vector<std::string> shapes = filter_shapes(bound);
  Named named;
  for (size_t i = 0; i < bound.filters.size(); ++i)
    if (!shapes[i].empty()) {
      const SbplFilter& f = bound.filters[i];
      named[std::string(f.param_value ? *f.param_value : std::string_view(f.value))].push_back(
          shapes[i]);
    }
  const std::pair<const std::vector<ir::ResolvedPath>*, const char*> groups[] = {
      {&policy.read, "read"}, {&policy.write, "write"},     {&policy.protect, "protect"},
      {&policy.deny, "deny"}, {&policy.pin, "pin"}};
  for (const auto& [group, kind] : groups)
    for (const auto& e : *group) named[e.path].push_back(std::string("=") + kind);
  for (auto& [path, what] : named) std::sort(what.begin(), what.end());
  return named;
}

// `named` with the symbolic root `root` bound to `place`: its paths are moved below
// `place`, where what names them joins what names the paths already there.
Named rebound(const Named& named, const std::string& root, const std::string& place) {
  Named out;
  for (const auto& [path, what] : named) {
    auto& to = out[rebased(path, root, place)];
    to.insert(to.end(), what.begin(), what.end());
  }
  for (auto& [path, what] : out) std::sort(what.begin(), what.end());
  return out;
}

// One class of places of a root: its first place in byte order, how many places it has,
// and what they share.
struct PlaceClass {
  std::string place;
  size_t stands_for = 1;
  std::string signature;  // the names of the roots that can come below kept too
  std::string proof;      // only this root's own names kept: what decides its proof
};

// The names a place abstracts that are not kept, by the path (relative to the place) of
// the directory that holds them; each list sorted, without repeats.
using Strangers = std::map<std::string, std::vector<std::string>>;

// The classes of places of `root` at or below `outer`, the place of the root before it
// (docs/verify.md, "Nested symbolic roots"). `later` are the roots that
// can still be bound below `root`: the names their own paths use are kept as they are too,
// since one of them bound at a place below can meet a path named there. Adds to `reads`
// the paths it reads: `named`, and the paths below each place.
class PlaceClasses {
 public:
  PlaceClasses(const Named& named, const std::string& outer, const std::string& root,
               const std::vector<std::string>& later, size_t& reads)
      : named_(named), outer_(outer), reads_(reads), own_(own_paths(named, root)) {
    reads_ += named.size();
    for (const auto& [path, what] : named)
      if (within(outer, path)) below_.push_back(path);
    for (const std::string& r : later) own_later_.merge(own_paths(named, r));
  }

  // The places, one class for each signature, in the order of their first place.
  std::vector<PlaceClass> classes() {
    std::map<std::string, size_t> index;  // signature -> its place in `out`
    std::vector<PlaceClass> out;
    for (const std::string& place : places()) {
      std::string signature = signature_of(place, true);
      auto [it, fresh] = index.try_emplace(signature, out.size());
      if (fresh)
        out.push_back({place, 1, std::move(signature), signature_of(place, false)});
      else
        ++out[it->second].stands_for;
    }
    return out;
  }

 private:
  // The places worth telling apart, sorted: `outer`, each named path below it and the
  // directories between, and a child of each that nothing names.
  std::vector<std::string> places() const {
    std::vector<std::string> places = {outer_, fresh_child(below_, outer_, "zp-bind")};
    for (std::string_view n : below_) {
      if (n == outer_) continue;
      places.emplace_back(n);
      places.push_back(fresh_child(below_, n, "zp-bind"));
      for (auto a = parent_of(n); a && a->size() > outer_.size(); a = parent_of(*a))
        places.emplace_back(*a);
    }
    std::sort(places.begin(), places.end());
    places.erase(std::unique(places.begin(), places.end()), places.end());
    return places;
  }

  // The paths below `r` it names itself, relative to it, with every leading part: a
  // name there is the same name wherever `r` is bound, and is kept as it is. Likewise
  // those of the roots that can come below it, at any depth below the place.
  static std::unordered_set<std::string> own_paths(const Named& named, const std::string& r) {
    std::unordered_set<std::string> own;
    for (const auto& [path, what] : named)
      if (path.size() > r.size() && within(r, path))
        for (std::optional<std::string_view> rel = std::string_view(path).substr(r.size() + 1); rel;
             rel = parent_of(*rel))
          own.insert(std::string(*rel));
    return own;
  }

  // Whether the name that ends `part` (a path relative to the place) is kept: for the
  // proof of this root, those of its own paths; for the chains that extend it, also those
  // a root that can come below uses, wherever below the place it is bound.
  bool kept(std::string_view part, bool with_later) const {
    if (own_.contains(std::string(part))) return true;
    for (std::optional<std::string_view> tail = part; with_later && tail;) {
      if (own_later_.contains(std::string(*tail))) return true;
      const auto slash = tail->find('/');
      tail =
          slash == std::string_view::npos ? std::nullopt : std::optional(tail->substr(slash + 1));
    }
    return false;
  }

  // What a place shares with the others of its class: what is named above it, at it and
  // below it, each name below that is not kept abstracted; one part a line, sorted.
  std::string signature_of(const std::string& place, bool with_later) {
    std::vector<std::string> parts = above(place);
    const std::string prefix = place + "/";
    const std::vector<std::string_view> inside = paths_inside(prefix);
    const Strangers strangers = strangers_of(inside, prefix.size(), with_later);
    if (const auto at = named_.find(place); at != named_.end())
      for (const auto& what : at->second) parts.push_back("at " + what);
    for (std::string_view path : inside) {
      const std::string shown = abstracted(path.substr(prefix.size()), strangers, with_later);
      for (const auto& what : named_.at(std::string(path)))
        parts.push_back("below " + shown + " " + what);
    }
    std::sort(parts.begin(), parts.end());
    std::string signature;
    for (const auto& p : parts) signature += p + "\n";
    return signature;
  }

  // The subpath filters above, true on the whole tree (a literal above is false on the
  // whole tree). A form answers by how many of its items of each shape are true, and is
  // as specific as the most specific of them; filters above nest, so only the order of
  // those nearest the place tells which form is the most specific. So each shape counts
  // with how many filters have it and the rank of the nearest among the nearest ones.
  // Every path above counts, the chain's first root and what holds it (a concrete path
  // above a root bound to a concrete place: `/Users` above `/Users/zp-bind`), but "/",
  // which holds every place, symbolic or concrete, and so tells none apart. A policy
  // root of a kind above counts only by whether there is one.
  std::vector<std::string> above(const std::string& place) const {
    std::vector<std::string> parts;
    std::set<std::string> kinds_above;
    std::map<std::string, std::pair<size_t, size_t>> shapes_above;  // count, nearest depth
    size_t depth = 0;  // of the paths above, from the place up
    for (auto a = parent_of(place); a && *a != "/"; a = parent_of(*a), ++depth)
      if (const auto at = named_.find(std::string(*a)); at != named_.end())
        for (const auto& what : at->second) {
          if (what.starts_with("="))
            kinds_above.insert(what);
          else if (what.starts_with("S"))
            ++shapes_above.try_emplace(what, 0, depth).first->second.first;
        }
    std::set<size_t> nearest;
    for (const auto& [shape, seen] : shapes_above) nearest.insert(seen.second);
    for (const auto& [shape, seen] : shapes_above)
      parts.push_back("above " + shape + " x" + std::to_string(seen.first) + " " +
                      std::to_string(std::distance(nearest.begin(), nearest.find(seen.second))));
    for (const auto& k : kinds_above) parts.push_back("above " + k);
    return parts;
  }

  // The named paths that start with `prefix`, in order.
  std::vector<std::string_view> paths_inside(const std::string& prefix) {
    std::vector<std::string_view> inside;
    auto first = std::lower_bound(below_.begin(), below_.end(), std::string_view(prefix));
    for (auto it = first; it != below_.end() && it->starts_with(prefix); ++it) {
      ++reads_;
      inside.push_back(*it);
    }
    return inside;
  }

  // The names on the way to each path of `inside` (below the place, `prefix_size` bytes
  // in) that are not kept.
  Strangers strangers_of(const std::vector<std::string_view>& inside, size_t prefix_size,
                         bool with_later) const {
    Strangers strangers;
    for (std::string_view path : inside)
      for (std::optional<std::string_view> part = path.substr(prefix_size); part;
           part = parent_of(*part)) {
        if (kept(*part, with_later)) continue;
        const auto slash = part->rfind('/');
        const std::string up(slash == std::string_view::npos ? "" : part->substr(0, slash));
        strangers[up].emplace_back(part->substr(slash == std::string_view::npos ? 0 : slash + 1));
      }
    for (auto& [up, names] : strangers) {
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
    }
    return strangers;
  }

  // `rel` (below the place) with each name that is not kept abstracted to its rank among
  // such siblings and its length.
  std::string abstracted(std::string_view rel, const Strangers& strangers, bool with_later) const {
    std::string out_rel, up;
    for (size_t start = 0; start <= rel.size();) {
      const size_t end = std::min(rel.find('/', start), rel.size());
      const std::string name(rel.substr(start, end - start));
      const std::string_view part = rel.substr(0, end);
      std::string shown = name;
      if (!kept(part, with_later)) {
        const auto& names = strangers.at(up);
        shown = "#" +
                std::to_string(std::lower_bound(names.begin(), names.end(), name) - names.begin()) +
                "." + std::to_string(name.size());
      }
      out_rel += (out_rel.empty() ? "" : "/") + shown;
      up = std::string(part);
      start = end + 1;
    }
    return out_rel;
  }

  const Named& named_;
  const std::string& outer_;
  size_t& reads_;
  std::vector<std::string_view> below_;  // sorted: those below any path are one run
  const std::unordered_set<std::string> own_;
  std::unordered_set<std::string> own_later_;
};

// Whether a protected path or deny root lies strictly below `place`.
bool guarded_below(const Named& named, const std::string& place) {
  const std::string prefix = place + "/";
  for (auto it = named.lower_bound(prefix); it != named.end() && it->first.starts_with(prefix);
       ++it)
    for (const auto& what : it->second)
      if (what == "=protect" || what == "=deny") return true;
  return false;
}

// A chain whose last root's tree is proved, with what the chains that extend it need.
struct Partial {
  NestedChain chain;
  std::vector<std::string> in;  // its roots, the first one first
  std::string place;            // where its last root lies (the first root: itself or its top)
};

std::string describe(const Partial& c) {
  std::string out = c.in.back();
  for (auto it = c.in.rbegin() + 1; it != c.in.rend(); ++it) out += " inside " + *it;
  return c.chain.top.empty() ? out : out + " at " + c.chain.top;
}

// The roots that bring protected paths or deny roots: a place of the root before them
// that holds them cannot be renamed, which each proof checks for that place.
std::set<std::string> guarded_roots(const ir::Resolved& policy,
                                    const std::vector<std::string>& roots) {
  std::set<std::string> guarded;
  for (const auto* group : {&policy.protect, &policy.deny})
    for (const auto& e : *group)
      for (const std::string& r : roots)
        if (within(r, e.path)) guarded.insert(r);
  return guarded;
}

// The chains of one root: the first root of a chain left symbolic (below no concrete
// path), then bound to each concrete place: a chain under /Users meets the profile's
// filters on /Users, which no chain left symbolic and no root bound alone makes true
// together with two roots'. Then under the places of the policy's own paths, after the
// others so that the chains under those come first whatever these add (docs/verify.md,
// "Under a place the policy names").
std::vector<Partial> first_roots(const std::vector<std::string>& roots,
                                 const std::vector<std::string>& tops,
                                 const std::vector<std::string>& policy_tops) {
  std::vector<Partial> level;
  for (const std::string& first : roots) level.push_back({{}, {first}, first});
  for (const auto* list : {&tops, &policy_tops})
    for (const std::string& top : *list)
      for (const std::string& first : roots) level.push_back({{top, {}}, {first}, top});
  return level;
}

bool holds(const Partial& c, const std::string& root) {
  return std::find(c.in.begin(), c.in.end(), root) != c.in.end();
}

// The search of nested_chains, a level of chains at a time: each chain extended by each
// root it does not hold, at each class of that root's places. A chain's proof is decided
// by the root bound and the class of its place without the roots still to come
// (whichever roots are above it, and in which order); the chains that extend it, by that
// root, the roots left, and the class with their names. Chains of one proof key are one
// proof (the first is kept); of one extension key, extended once.
class ChainSearch {
 public:
  ChainSearch(const ir::Resolved& policy, const SbplProfile& bound,
              const std::vector<std::string>& roots, size_t proof_work, size_t max_steps,
              size_t spent)
      : roots_(roots),
        proof_work_(proof_work),
        max_steps_(max_steps),
        guarded_(guarded_roots(policy, roots)),
        named_(named_paths(policy, bound)),
        work_(spent) {}

  ir::Result<std::vector<NestedChain>> run(std::vector<Partial> level) {
    while (!level.empty()) {
      std::vector<Partial> next;
      for (const Partial& parent : level) {
        const Named bound_names = names_bound(parent);
        for (const std::string& root : roots_) {
          if (holds(parent, root)) continue;
          if (auto refused = extend(parent, bound_names, root, next)) return *refused;
        }
      }
      level = std::move(next);
    }
    return std::move(out_);
  }

 private:
  // What the profile and the policy name with the chain's roots bound, made again for
  // each chain rather than kept for all.
  Named names_bound(const Partial& parent) {
    Named bound_names = named_;
    if (!parent.chain.top.empty()) {
      work_ += bound_names.size();
      bound_names = rebound(bound_names, parent.in.front(), parent.chain.top);
    }
    for (const NestedStep& step : parent.chain.steps) {
      work_ += bound_names.size();
      bound_names = rebound(bound_names, step.root, step.place);
    }
    return bound_names;
  }

  // `parent` with `root` bound at each class of its places, each proved or counted into
  // the proof of its key; the chains still to extend go to `next`.
  std::optional<ir::Diagnostic> extend(const Partial& parent, const Named& bound_names,
                                          const std::string& root, std::vector<Partial>& next) {
    std::vector<std::string> later;
    std::string key = root + "\n";  // the extension key, but for the class's signature
    for (const std::string& r : roots_)
      if (r != root && !holds(parent, r)) {
        later.push_back(r);
        key += r + " ";
      }
    if (work_ > kMaxNestedWork) return too_much_work();
    const std::vector<PlaceClass> classes =
        PlaceClasses(bound_names, parent.place, root, later, work_).classes();
    if (classes.size() > kMaxNestedClasses)
      return too_many(classes.size(), root + " inside " + describe(parent));
    // The root's protected paths and deny roots below the parent's place change the
    // intent there (renaming it would carry them away) only if nothing of the parent
    // is guarded below it already. Then the proof of the first class strictly below
    // that place, which probes it too, is kept for these places of the parent's roots.
    bool place_probed = !guarded_.contains(root) || guarded_below(bound_names, parent.place);
    for (const PlaceClass& k : classes) {
      NestedChain chain = parent.chain;
      chain.steps.push_back({root, parent.in.back(), k.place, k.stands_for});
      const bool probes_place = !place_probed && k.place != parent.place;
      place_probed = place_probed || probes_place;
      if (auto refused = prove(chain, root, k, probes_place)) return refused;
      if (!later.empty() && chain.steps.size() < max_steps_ &&
          extended_.insert(key + "\n" + k.signature).second) {
        std::vector<std::string> in = parent.in;
        in.push_back(root);
        next.push_back({std::move(chain), std::move(in), k.place});
      }
    }
    return std::nullopt;
  }

  // Keeps the proof of `chain`, whose last step binds `root` at the class `k`, or counts
  // its places into the kept proof of the same key. A chain that probes its parent's
  // place has a proof of its own.
  std::optional<ir::Diagnostic> prove(const NestedChain& chain, const std::string& root,
                                         const PlaceClass& k, bool probes_place) {
    const auto [at, fresh] = probes_place ? std::pair(proved_.end(), true)
                                          : proved_.try_emplace(root + "\n" + k.proof, out_.size());
    if (!fresh) {
      out_[at->second].steps.back().stands_for += k.stands_for;
      return std::nullopt;
    }
    out_.push_back(chain);
    work_ += proof_work_;
    if (out_.size() > kMaxNestedProofs) return too_many(out_.size(), "in all");
    if (work_ > kMaxNestedWork) return too_much_work();
    return std::nullopt;
  }

  // The refusals of a profile whose nested proof is past its bounds.
  ir::Diagnostic too_much_work() const {
    return refusal("at most " + std::to_string(kMaxNestedWork) +
                       " filters and parameters bound over the proofs of every place where one "
                       "symbolic root can lie inside another",
                   "more (" + std::to_string(work_) + " after " + std::to_string(out_.size()) +
                       " proofs; verify the profile bound to a host: compile --workspace)");
  }
  // `count` classes of `what` ("${WORKSPACE} inside ${HOME}"), or proofs "in all".
  static ir::Diagnostic too_many(size_t count, const std::string& what) {
    return refusal("at most " + std::to_string(kMaxNestedClasses) +
                       " kinds of place where one symbolic root of a portable profile can lie "
                       "inside another, " +
                       std::to_string(kMaxNestedProofs) + " in all",
                   std::to_string(count) + " " + what +
                       " (verify the profile bound to a host: compile --workspace)");
  }
  static ir::Diagnostic refusal(std::string expected, std::string actual) {
    return ir::finding("macos", "malformed-artifact", {"profile.sb"}, "profile.sb",
                       std::move(expected), std::move(actual));
  }

  const std::vector<std::string>& roots_;
  const size_t proof_work_, max_steps_;
  const std::set<std::string> guarded_;
  const Named named_;
  size_t work_;
  std::vector<NestedChain> out_;
  std::map<std::string, size_t> proved_;  // proof key -> its chain in out_
  std::set<std::string> extended_;        // the extension keys
};

}  // namespace

ir::Result<std::vector<NestedChain>> nested_chains(
    const ir::Resolved& policy, const SbplProfile& bound, const std::vector<std::string>& roots,
    const std::vector<std::string>& tops, size_t proof_work, size_t max_steps, size_t spent,
    const std::vector<std::string>& policy_tops) {
  return ChainSearch(policy, bound, roots, proof_work, max_steps, spent)
      .run(first_roots(roots, tops, policy_tops));
}

}  // namespace zpolicy::compiler
