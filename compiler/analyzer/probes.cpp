#include "compiler/analyzer/probes.hpp"

#include <algorithm>

namespace zpolicy::compiler {

using Root = Intent::Root;

std::string Probe::role() const {
  const std::string name = std::string(root_kind) + " " + (root ? paths->path(root->id).str() : "");
  switch (relation) {
    case Relation::Self:
      return name;
    case Relation::Child:
      return "child of " + name;
    case Relation::Grandchild:
      return "grandchild of " + name;
    case Relation::Parent:
      return "parent of " + name;
    case Relation::PrefixSibling:
      return "sibling sharing a prefix with " + name;
    case Relation::Between:
      return "directory between writable root " + paths->path(writable->id).str() +
             " and protected " + paths->path(root->id).str();
    case Relation::Outside:
      return "outside every root";
    case Relation::InTmp:
      return "in /tmp";
  }
  return "?";
}

std::vector<Probe> generate_probes(Intent& intent) {
  std::vector<Probe> probes;
  for_each_probe(intent, [&](const Probe& p) { probes.push_back(p); });
  return probes;
}

namespace {

// The writable roots at or above `id`, each at its first path in `writable_at`, in the
// order of the IR's list, as every probe is.
std::vector<const Root*> writable_above(const PathTable& paths,
                                        const PathMap<const Root*>& writable_at, PathTable::Id id) {
  std::vector<const Root*> out;
  for (PathTable::Id a = id;; a = paths.up(a)) {
    if (const Root* const* w = writable_at.find(a)) out.push_back(*w);
    if (a == PathTable::kRoot) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void for_each_probe(Intent& intent, const std::function<void(const Probe&)>& visit) {
  PathTable& paths = intent.paths();
  PathMap<bool> seen(paths);  // the first probe of a path keeps its role
  auto add = [&](PathTable::Id id, Probe::Relation rel, const char* kind, const Root* root,
                 const Root* writable = nullptr) {
    if (seen.find(id)) return;
    seen.insert(id, true);
    visit(Probe{id, &paths, rel, kind, root, writable, intent.verdicts(id)});
  };
  using R = Probe::Relation;
  auto around = [&](const Root& r, const char* kind) {
    add(r.id, R::Self, kind, &r);
    const PathTable::Id child = paths.child(r.id, "zpolicy-probe");
    add(child, R::Child, kind, &r);
    add(paths.child(child, "deeper"), R::Grandchild, kind, &r);
    if (auto parent = paths.parent(r.id)) {
      add(*parent, R::Parent, kind, &r);
      add(paths.child(*parent, std::string(paths.name(r.id)) + "x"), R::PrefixSibling, kind, &r);
    }
  };
  for (const auto& r : intent.read()) around(r, "readable root");
  for (const auto& r : intent.write()) around(r, "writable root");
  for (const auto& r : intent.deny()) around(r, "deny root");
  for (const auto& r : intent.pin()) around(r, "pin");
  // The first writable root at each path, so that the writable roots containing a
  // protected path are found by a walk up from it instead of a look at every writable
  // root. A later writable root at the same path adds only directories already seen.
  PathMap<const Root*> writable_at(paths);
  for (const auto& w : intent.write()) writable_at.insert(w.id, &w);
  for (const auto& r : intent.protect()) {
    around(r, "protected path");
    for (const Root* w : writable_above(paths, writable_at, r.id))
      for (auto a = paths.parent(r.id); a && *a != w->id; a = paths.parent(*a))
        add(*a, R::Between, "protected path", &r, w);
  }
  add(*paths.parse("/zpolicy-probe-outside"), R::Outside, "", nullptr);
  add(*paths.parse("/tmp/zpolicy-probe"), R::InTmp, "", nullptr);
}

}  // namespace zpolicy::compiler
