#include "compiler/analyzer/bwrap/regions.hpp"

namespace zpolicy::compiler {

std::string Region::describe(const PathTable& paths) const {
  const std::string named_str = paths.path(named).str();
  std::string out;
  switch (kind) {
    case Kind::Named:
      out = "region " + named_str;
      break;
    case Kind::Ancestor:
      out = "region " + paths.path(id).str() + ", an ancestor of " + named_str;
      break;
    case Kind::Below:
      out = "region below " + named_str + " that nothing names, as " + paths.path(id).str();
      break;
  }
  if (line > 0)
    out += ", named by bwrap.args:" + std::to_string(line) + ": " + std::string(text);
  else
    out += ", named by the policy";
  return out;
}

void for_each_region(const BwrapArgv& argv, const Intent& intent,
                     const std::vector<PathTable::Id>& more,
                     const std::function<void(const Region&)>& visit) {
  PathTable& paths = intent.paths();
  PathMap<bool> seen(paths);
  auto mark = [&](PathTable::Id id) {
    if (seen.find(id)) return false;
    seen.insert(id, true);
    return true;
  };
  // The named paths with their ancestors, each ancestor once: the walk up stops at the
  // first one met before, so the closure costs the number of components named.
  std::vector<Region> closure;
  auto name = [&](PathTable::Id id, int line, std::string_view text) {
    if (!mark(id)) return;
    closure.push_back(Region{id, Region::Kind::Named, id, line, text});
    for (auto a = paths.parent(id); a; a = paths.parent(*a)) {
      if (!mark(*a)) return;
      closure.push_back(Region{*a, Region::Kind::Ancestor, id, line, text});
    }
    // A symbolic root's place is unknown; "/" holds it.
    if (mark(PathTable::kRoot))
      closure.push_back(Region{PathTable::kRoot, Region::Kind::Ancestor, id, line, text});
  };
  for (const BwrapOp& op : argv.ops) {
    name(op.dest, op.line, op.text);
    if (op.source) name(*op.source, op.line, op.text);
    if (op.kind == BwrapOpKind::Symlink)
      if (auto target = paths.link_destination(op.dest, op.link_target))
        name(*target, op.line, op.text);
  }
  for (const auto* roots :
       {&intent.read(), &intent.write(), &intent.protect(), &intent.deny(), &intent.pin()})
    for (const auto& r : *roots) name(r.id, 0, {});
  for (PathTable::Id id : more) name(id, 0, {});
  for (const Region& r : closure) visit(r);
  // Below each: one name nothing in the closure uses, which every unnamed path below it
  // answers like (nothing the table or the intent knows lies there).
  for (const Region& r : closure) {
    PathTable::Id below = paths.child(r.id, "zpolicy-region");
    for (unsigned n = 2; seen.find(below); ++n)
      below = paths.child(r.id, "zpolicy-region-" + std::to_string(n));
    visit(Region{below, Region::Kind::Below, r.id, r.line, r.text});
  }
}

}  // namespace zpolicy::compiler
