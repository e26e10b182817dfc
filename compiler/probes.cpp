#include "compiler/probes.hpp"

#include <map>

namespace zpolicy::compiler {

const char* to_string(Expect e) {
  switch (e) {
    case Expect::Allow:
      return "allowed on the host object";
    case Expect::Deny:
      return "no access to the host object";
    case Expect::DenyStrict:
      return "denied outright (deny root: neither readable nor writable)";
  }
  return "?";
}

namespace {

using Root = Intent::Root;

ir::SourceLoc builtin() { return ir::SourceLoc{ir::kBuiltinFile, 0, 0}; }

size_t depth(const SymbolicPath& p) { return p.components.size() + (p.anchor.empty() ? 0 : 1); }

const Root* deepest_containing(const std::vector<Root>& roots, const SymbolicPath& p) {
  const Root* best = nullptr;
  for (const auto& r : roots)
    if (r.path.contains(p) && (!best || depth(r.path) > depth(best->path))) best = &r;
  return best;
}

// A protected or deny path strictly below `p` and inside a writable root: renaming `p`
// would carry it away and let the old name be recreated unprotected.
const Root* guarded_below(const std::vector<Root>& guarded, const std::vector<Root>& write,
                          const SymbolicPath& p) {
  for (const auto& g : guarded)
    if (p.contains(g.path) && !(p == g.path) && deepest_containing(write, p)) return &g;
  return nullptr;
}

const SymbolicPath& tmp_path() {
  static const SymbolicPath tmp = *SymbolicPath::parse("/tmp");
  return tmp;
}

Expectation make(Expect e, const ir::SourceLoc& rule, std::string reason) {
  return Expectation{e, rule, std::move(reason)};
}

}  // namespace

Intent::Intent(const ir::Resolved& r) : mode_(r.mode), private_tmp_(r.private_tmp) {
  auto load = [&](const std::vector<ir::ResolvedPath>& in, std::vector<Root>& out) {
    for (const auto& rp : in) {
      if (auto p = SymbolicPath::parse(rp.path))
        out.push_back(Root{*p, rp});
      else
        unparsable_.push_back(rp);
    }
  };
  load(r.read, read_);
  load(r.write, write_);
  load(r.protect, protect_);
  load(r.deny, deny_);
  load(r.pin, pin_);
}

Expectation Intent::outside_writable(const SymbolicPath& p, std::string what) const {
  if (const Root* r = deepest_containing(read_, p))
    return make(Expect::Deny, r->origin.loc,
                what + " is readable through " + r->path.str() + " but under no writable root");
  return make(Expect::Deny, builtin(), what + " is under no root");
}

Expectation Intent::read_rule(const SymbolicPath& p) const {
  if (const Root* w = deepest_containing(write_, p))
    return make(Expect::Allow, w->origin.loc, "under writable root " + w->path.str());
  if (private_tmp_ && tmp_path().contains(p))
    return make(Expect::Deny, builtin(), "/tmp is private to the sandbox");
  if (const Root* r = deepest_containing(read_, p))
    return make(Expect::Allow, r->origin.loc, "under readable root " + r->path.str());
  return make(Expect::Deny, builtin(), "under no readable root");
}

Expectation Intent::write_rule(const SymbolicPath& p) const {
  if (mode_ != ir::Mode::WorkspaceWrite)
    return make(Expect::Deny, builtin(),
                std::string("mode ") + ir::to_string(mode_) + " writes nothing");
  if (const Root* pr = deepest_containing(protect_, p))
    return make(Expect::Deny, pr->origin.loc, "under protected path " + pr->path.str());
  if (const Root* w = deepest_containing(write_, p))
    return make(Expect::Allow, w->origin.loc, "under writable root " + w->path.str());
  if (private_tmp_ && tmp_path().contains(p))
    return make(Expect::Deny, builtin(), "/tmp is private to the sandbox");
  return outside_writable(p, p.str());
}

Expectation Intent::entry_rule(const SymbolicPath& p, FsOp op) const {
  const std::string verb = to_string(op);
  if (mode_ != ir::Mode::WorkspaceWrite)
    return make(Expect::Deny, builtin(),
                std::string("mode ") + ir::to_string(mode_) + " writes nothing");
  if (const Root* pr = deepest_containing(protect_, p))
    return make(Expect::Deny, pr->origin.loc,
                "protected path " + pr->path.str() + " cannot be created, deleted or renamed");
  for (const auto* roots : {&write_, &read_, &pin_})
    for (const auto& r : *roots)
      if (r.path == p)
        return make(Expect::Deny, r.origin.loc,
                    p.str() + " is a root of the policy, fixed for the sandbox's life");
  if (const Root* g = guarded_below(protect_, write_, p))
    return make(Expect::Deny, g->origin.loc,
                "renaming " + p.str() + " would carry protected " + g->path.str() + " away");
  if (const Root* g = guarded_below(deny_, write_, p))
    return make(Expect::Deny, g->origin.loc,
                "renaming " + p.str() + " would carry deny root " + g->path.str() + " away");
  auto parent = p.parent();
  if (!parent) return make(Expect::Deny, builtin(), p.str() + " has no known parent directory");
  if (const Root* w = deepest_containing(write_, *parent))
    return make(Expect::Allow, w->origin.loc, "parent is under writable root " + w->path.str());
  if (private_tmp_ && tmp_path().contains(p))
    return make(Expect::Deny, builtin(), "/tmp is private to the sandbox");
  return outside_writable(*parent, "the parent " + parent->str());
}

Expectation Intent::expect(const SymbolicPath& p, FsOp op) const {
  if (!confined()) return make(Expect::Allow, builtin(), "danger-full-access: no confinement");
  if (const Root* d = deepest_containing(deny_, p))
    return make(Expect::DenyStrict, d->origin.loc, "under deny root " + d->path.str());
  switch (op) {
    case FsOp::Read:
      return read_rule(p);
    case FsOp::Write:
      return write_rule(p);
    case FsOp::Create:
    case FsOp::Delete:
      return entry_rule(p, op);
  }
  return make(Expect::Deny, builtin(), "unknown operation");
}

std::vector<Probe> generate_probes(const Intent& intent) {
  std::map<SymbolicPath, std::string> paths;
  auto add = [&](const SymbolicPath& p, std::string role) { paths.emplace(p, std::move(role)); };
  auto around = [&](const Root& r, const std::string& what) {
    const std::string name = what + " " + r.path.str();
    add(r.path, name);
    add(r.path.child("zpolicy-probe"), "child of " + name);
    add(r.path.child("zpolicy-probe").child("deeper"), "grandchild of " + name);
    if (auto parent = r.path.parent()) {
      add(*parent, "parent of " + name);
      add(parent->child(r.path.components.back() + "x"), "sibling sharing a prefix with " + name);
    }
  };
  for (const auto& r : intent.read()) around(r, "readable root");
  for (const auto& r : intent.write()) around(r, "writable root");
  for (const auto& r : intent.deny()) around(r, "deny root");
  for (const auto& r : intent.pin()) around(r, "pin");
  for (const auto& r : intent.protect()) {
    around(r, "protected path");
    for (const auto& w : intent.write()) {
      if (!w.path.contains(r.path)) continue;
      for (auto a = r.path.parent(); a && w.path.contains(*a) && !(*a == w.path); a = a->parent())
        add(*a,
            "directory between writable root " + w.path.str() + " and protected " + r.path.str());
    }
  }
  add(*SymbolicPath::parse("/zpolicy-probe-outside"), "outside every root");
  add(*SymbolicPath::parse("/tmp/zpolicy-probe"), "in /tmp");

  std::vector<Probe> out;
  for (const auto& [path, role] : paths) {
    Probe p{path, role, {}};
    for (FsOp op : kAllFsOps) p.expected[static_cast<size_t>(op)] = intent.expect(path, op);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace zpolicy::compiler
