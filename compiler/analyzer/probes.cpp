#include "compiler/analyzer/probes.hpp"

#include <algorithm>

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

}  // namespace

Intent::Intent(const ir::Resolved& r, std::shared_ptr<PathTable> paths)
    : paths_(std::move(paths)),
      mode_(r.mode),
      private_tmp_(r.private_tmp),
      tmp_(*paths_->parse("/tmp")),
      read_index_(*paths_),
      write_index_(*paths_),
      pin_index_(*paths_),
      protect_ancestors_(*paths_),
      deny_ancestors_(*paths_),
      at_(*paths_),
      near_(*paths_) {
  // Consecutive roots almost always come from the same file.
  auto file_of = [&](const std::string& file) {
    if (files_.empty() || files_.back() != file) files_.push_back(file);
    return static_cast<std::uint32_t>(files_.size() - 1);
  };
  auto load = [&](const std::vector<ir::ResolvedPath>& in, std::vector<Root>& out, Index* index) {
    out.reserve(in.size());
    for (const auto& rp : in) {
      if (auto id = paths_->parse(rp.path))
        out.push_back(Root{*id, rp.kind, file_of(rp.loc.file), rp.loc.line, rp.loc.col});
      else
        unparsable_.push_back(rp);
    }
    if (index)
      for (const auto& root : out) index->insert(root.id, &root);
  };
  // Protected and deny roots need no index of their own: near() finds them in at_.
  load(r.read, read_, &read_index_);
  load(r.write, write_, &write_index_);
  load(r.protect, protect_, nullptr);
  load(r.deny, deny_, nullptr);
  load(r.pin, pin_, &pin_index_);
  auto ancestors = [&](const std::vector<Root>& guarded, Index& out) {
    for (const auto& g : guarded) {
      for (auto a = paths_->parent(g.id); a; a = paths_->parent(*a)) out.insert(*a, &g);
      out.insert(PathTable::kRoot, &g);  // "/" holds a symbolic root too
    }
  };
  ancestors(protect_, protect_ancestors_);
  ancestors(deny_, deny_ancestors_);
  auto gather = [&](const std::vector<Root>& roots, std::uint32_t Near::*kind) {
    for (std::uint32_t i = 0; i < roots.size(); ++i)
      if (!(at_[roots[i].id].*kind)) at_[roots[i].id].*kind = i + 1;
  };
  gather(deny_, &Near::deny);
  gather(write_, &Near::write);
  gather(read_, &Near::read);
  gather(protect_, &Near::protect);
  at_[tmp_].tmp = true;
}

// A protected or deny path strictly below `p` and inside a writable root: renaming `p`
// would carry it away and let the old name be recreated unprotected.
const Root* Intent::guarded_below(const Index& ancestors, Id p, const Near& near) const {
  const Root* const* g = ancestors.find(p);
  return g && near.write ? *g : nullptr;
}

// The deepest root of each kind at or above `p`: up to the nearest path answered
// before, then down again, a loop rather than a call per level.
Intent::Near Intent::near(Id p) const {
  std::vector<Id> unknown;
  Near n;
  for (Id a = p;; a = paths_->up(a)) {
    if (const Near* known = near_.find(a)) {
      n = *known;
      break;
    }
    unknown.push_back(a);
    if (a == PathTable::kRoot) break;
  }
  for (auto it = unknown.rbegin(); it != unknown.rend(); ++it) {
    if (const Near* own = at_.find(*it)) {
      if (own->deny) n.deny = own->deny;
      if (own->write) n.write = own->write;
      if (own->read) n.read = own->read;
      if (own->protect) n.protect = own->protect;
      n.tmp = n.tmp || own->tmp;
    }
    near_.insert(*it, n);
  }
  return n;
}

Intent::Decision Intent::read_rule(const Near& near) const {
  if (near.write) return {Expect::Allow, Why::UnderWritable, root_at(write_, near.write)};
  if (in_private_tmp(near)) return {Expect::Deny, Why::PrivateTmp};
  if (near.read) return {Expect::Allow, Why::UnderReadable, root_at(read_, near.read)};
  return {Expect::Deny, Why::NoReadableRoot};
}

Intent::Decision Intent::write_rule(const Near& near) const {
  if (mode_ != ir::Mode::WorkspaceWrite) return {Expect::Deny, Why::ModeWritesNothing};
  if (near.protect) return {Expect::Deny, Why::UnderProtected, root_at(protect_, near.protect)};
  if (near.write) return {Expect::Allow, Why::UnderWritable, root_at(write_, near.write)};
  if (in_private_tmp(near)) return {Expect::Deny, Why::PrivateTmp};
  if (near.read) return {Expect::Deny, Why::ReadableNotWritable, root_at(read_, near.read)};
  return {Expect::Deny, Why::UnderNoRoot};
}

Intent::Decision Intent::entry_rule(Id p, const Near& near) const {
  if (mode_ != ir::Mode::WorkspaceWrite) return {Expect::Deny, Why::ModeWritesNothing};
  if (near.protect) return {Expect::Deny, Why::ProtectedEntry, root_at(protect_, near.protect)};
  const Root* const* r = write_index_.find(p);
  if (!r) r = read_index_.find(p);
  if (!r) r = pin_index_.find(p);
  if (r) return {Expect::Deny, Why::PolicyRoot, *r};
  if (const Root* g = guarded_below(protect_ancestors_, p, near))
    return {Expect::Deny, Why::CarriesProtected, g};
  if (const Root* g = guarded_below(deny_ancestors_, p, near))
    return {Expect::Deny, Why::CarriesDeny, g};
  auto parent = paths_->parent(p);
  if (!parent) return {Expect::Deny, Why::NoParent};
  const Near around_parent = this->near(*parent);
  if (around_parent.write)
    return {Expect::Allow, Why::ParentWritable, root_at(write_, around_parent.write)};
  if (in_private_tmp(near)) return {Expect::Deny, Why::PrivateTmp};
  if (around_parent.read)
    return {Expect::Deny, Why::ParentReadableNotWritable, root_at(read_, around_parent.read)};
  return {Expect::Deny, Why::ParentUnderNoRoot};
}

Intent::Decision Intent::decide(Id p, FsOp op, const Near& near) const {
  if (!confined()) return {Expect::Allow, Why::NotConfined};
  if (near.deny) return {Expect::DenyStrict, Why::UnderDeny, root_at(deny_, near.deny)};
  switch (op) {
    case FsOp::Read:
      return read_rule(near);
    case FsOp::Write:
      return write_rule(near);
    case FsOp::Create:
    case FsOp::Delete:
      return entry_rule(p, near);
  }
  return {Expect::Deny, Why::UnknownOp};
}

// The four verdicts of one path, for a verifier that needs the reasons only for findings.
std::array<Expect, 4> Intent::verdicts(Id p) const {
  // decide() for each operation, with the checks they share made once: create and
  // delete follow the same rule.
  if (!confined()) return {Expect::Allow, Expect::Allow, Expect::Allow, Expect::Allow};
  const Near n = near(p);
  if (n.deny)
    return {Expect::DenyStrict, Expect::DenyStrict, Expect::DenyStrict, Expect::DenyStrict};
  const Expect entry = entry_rule(p, n).expect;
  static_assert(static_cast<size_t>(FsOp::Read) == 0 && static_cast<size_t>(FsOp::Write) == 1 &&
                static_cast<size_t>(FsOp::Create) == 2 && static_cast<size_t>(FsOp::Delete) == 3);
  return {read_rule(n).expect, write_rule(n).expect, entry, entry};
}

Expectation Intent::expect(const SymbolicPath& p, FsOp op) const {
  const Id id = paths_->intern(p);
  const Decision d = decide(id, op, near(id));
  const std::string root = d.root ? paths_->path(d.root->id).str() : "";
  const std::string parent = p.parent() ? p.parent()->str() : "";
  auto reason = [&]() -> std::string {
    switch (d.why) {
      case Why::NotConfined:
        return "danger-full-access: no confinement";
      case Why::UnderDeny:
        return "under deny root " + root;
      case Why::ModeWritesNothing:
        return std::string("mode ") + ir::to_string(mode_) + " writes nothing";
      case Why::UnderProtected:
        return "under protected path " + root;
      case Why::UnderWritable:
        return "under writable root " + root;
      case Why::PrivateTmp:
        return "/tmp is private to the sandbox";
      case Why::UnderReadable:
        return "under readable root " + root;
      case Why::NoReadableRoot:
        return "under no readable root";
      case Why::ReadableNotWritable:
        return p.str() + " is readable through " + root + " but under no writable root";
      case Why::UnderNoRoot:
        return p.str() + " is under no root";
      case Why::ProtectedEntry:
        return "protected path " + root + " cannot be created, deleted or renamed";
      case Why::PolicyRoot:
        return p.str() + " is a root of the policy, fixed for the sandbox's life";
      case Why::CarriesProtected:
        return "renaming " + p.str() + " would carry protected " + root + " away";
      case Why::CarriesDeny:
        return "renaming " + p.str() + " would carry deny root " + root + " away";
      case Why::NoParent:
        return p.str() + " has no known parent directory";
      case Why::ParentWritable:
        return "parent is under writable root " + root;
      case Why::ParentReadableNotWritable:
        return "the parent " + parent + " is readable through " + root +
               " but under no writable root";
      case Why::ParentUnderNoRoot:
        return "the parent " + parent + " is under no root";
      case Why::UnknownOp:
        return "unknown operation";
    }
    return "?";
  };
  // Under no root at all, the policy's read list is the line that leaves the path out.
  const bool outside =
      d.why == Why::NoReadableRoot || d.why == Why::UnderNoRoot || d.why == Why::ParentUnderNoRoot;
  const ir::SourceLoc rule = d.root                      ? loc(*d.root)
                             : outside && !read_.empty() ? loc(read_.front())
                                                         : builtin();
  return Expectation{d.expect, rule, reason()};
}

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

std::vector<Probe> generate_probes(const Intent& intent) {
  std::vector<Probe> probes;
  // Up to five around each root; the directories between roots add a few more.
  probes.reserve(5 * (intent.read().size() + intent.write().size() + intent.deny().size() +
                      intent.pin().size() + intent.protect().size()) +
                 2);
  for_each_probe(intent, [&](const Probe& p) { probes.push_back(p); });
  return probes;
}

void for_each_probe(const Intent& intent, const std::function<void(const Probe&)>& visit) {
  PathTable& paths = intent.paths();
  std::vector<char> seen;  // by path id: the first probe of a path keeps its role
  auto add = [&](PathTable::Id id, Probe::Relation rel, const char* kind, const Root* root,
                 const Root* writable = nullptr) {
    // Doubling: the ids grow by one as probes are interned.
    if (id >= seen.size()) seen.resize(std::max<size_t>(id + 1, 2 * seen.size()));
    if (seen[id]) return;
    seen[id] = true;
    visit(Probe{id, &paths, rel, kind, root, writable, intent.verdicts(id)});
  };
  using R = Probe::Relation;
  auto around = [&](const Root& r, const char* kind) {
    add(r.id, R::Self, kind, &r);
    const PathTable::Id child = paths.lasting_child(r.id, "zpolicy-probe");
    add(child, R::Child, kind, &r);
    add(paths.lasting_child(child, "deeper"), R::Grandchild, kind, &r);
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
  std::vector<const Root*> containing;
  for (const auto& r : intent.protect()) {
    around(r, "protected path");
    containing.clear();
    for (PathTable::Id a = r.id;; a = paths.up(a)) {
      if (const Root* const* w = writable_at.find(a)) containing.push_back(*w);
      if (a == PathTable::kRoot) break;
    }
    // In the order of the IR's list, as every probe is.
    std::sort(containing.begin(), containing.end());
    for (const Root* w : containing)
      for (auto a = paths.parent(r.id); a && *a != w->id; a = paths.parent(*a))
        add(*a, R::Between, "protected path", &r, w);
  }
  add(*paths.parse("/zpolicy-probe-outside"), R::Outside, "", nullptr);
  add(*paths.parse("/tmp/zpolicy-probe"), R::InTmp, "", nullptr);
}

}  // namespace zpolicy::compiler
