#include "compiler/path_table.hpp"

namespace zpolicy::compiler {

PathTable::PathTable() : children_(256, kNoChild) { links_.push_back(Link{}); }

const SymbolicPath& PathTable::path(Id id) const {
  if (id >= paths_.size()) paths_.resize(links_.size());
  if (!paths_[id]) {
    const Link& link = links_[id];
    if (id == kRoot)
      paths_[id] = std::make_unique<const SymbolicPath>();
    else if (link.anchor)
      paths_[id] = std::make_unique<const SymbolicPath>(SymbolicPath{std::string(link.name), {}});
    else
      paths_[id] = std::make_unique<const SymbolicPath>(path(link.up).child(link.name));
  }
  return *paths_[id];
}

// FNV-1a over the name, then the directory: names are short and this runs for every
// lookup.
std::uint32_t PathTable::hash_of(Id dir, std::string_view name) {
  std::uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return (h ^ dir) * 16777619u;
}

size_t PathTable::slot_of(Id dir, std::string_view name, std::uint32_t hash) const {
  const size_t mask = children_.size() - 1;
  for (size_t at = hash & mask;; at = (at + 1) & mask) {
    const Id id = children_[at];
    if (id == kNoChild) return at;
    const Link& link = links_[id];
    if (link.hash == hash && link.up == dir && link.name == name) return at;
  }
}

void PathTable::grow_children() {
  std::vector<Id> old(children_.size() * 2, kNoChild);
  old.swap(children_);
  const size_t mask = children_.size() - 1;
  for (Id id : old) {
    if (id == kNoChild) continue;
    size_t at = links_[id].hash & mask;
    while (children_[at] != kNoChild) at = (at + 1) & mask;
    children_[at] = id;
  }
}

PathTable::Id PathTable::child(Id dir, std::string_view name) {
  const std::uint32_t hash = hash_of(dir, name);
  size_t at = slot_of(dir, name, hash);
  if (children_[at] != kNoChild) return children_[at];
  const Id id = static_cast<Id>(links_.size());
  links_.push_back(Link{dir, links_[dir].depth + 1, dir == kRoot && name.starts_with("${"), hash,
                        names_.store(name)});
  if (2 * links_.size() > children_.size()) {
    grow_children();
    at = slot_of(dir, name, hash);
  }
  children_[at] = id;
  return id;
}

PathTable::Id PathTable::intern(const SymbolicPath& p) {
  Id id = kRoot;
  if (!p.anchor.empty()) id = child(id, p.anchor);
  for (const auto& c : p.components) id = child(id, c);
  return id;
}

std::optional<PathTable::Id> PathTable::parse(std::string_view text) {
  Id id = kRoot;
  auto down = [&](std::string_view name) { id = child(id, name); };
  if (!SymbolicPath::read(text, down, down)) return std::nullopt;
  return id;
}

bool PathTable::contains(Id outer, Id inner) const {
  const unsigned d = links_[outer].depth;
  while (links_[inner].depth > d) inner = links_[inner].up;
  return inner == outer;
}

bool PathTable::less(Id a, Id b) const {
  if (a == b) return false;
  // An ancestor sorts before its descendants, as a shorter component list does.
  Id x = a, y = b;
  while (links_[x].depth > links_[y].depth) x = links_[x].up;
  while (links_[y].depth > links_[x].depth) y = links_[y].up;
  if (x == y) return links_[a].depth < links_[b].depth;
  // Otherwise the first names that differ decide, below their common directory.
  while (links_[x].up != links_[y].up) {
    x = links_[x].up;
    y = links_[y].up;
  }
  if (links_[x].anchor != links_[y].anchor) return !links_[x].anchor;
  return links_[x].name < links_[y].name;
}

PathTable::Id PathTable::rebase(Id to, Id from, Id p) {
  std::vector<Id> below;
  for (Id at = p; at != from && at != kRoot; at = links_[at].up) below.push_back(at);
  Id out = to;
  for (auto it = below.rbegin(); it != below.rend(); ++it) out = child(out, links_[*it].name);
  return out;
}

}  // namespace zpolicy::compiler
