#include "compiler/path_table.hpp"

namespace zpolicy::compiler {

PathTable::PathTable() {
  links_.push_back(Link{});
  texts_.push_back(Text{"", SymbolicPath{}});
}

const SymbolicPath& PathTable::path(Id id) const {
  const Text& t = texts_[id];
  if (!t.path) {
    if (links_[id].anchor)
      t.path = SymbolicPath{t.name, {}};
    else
      t.path = path(links_[id].up).child(t.name);
  }
  return *t.path;
}

PathTable::Id PathTable::child(Id dir, std::string_view name) {
  if (auto it = children_.find(KeyView{dir, name}); it != children_.end()) return it->second;
  Link link{dir, links_[dir].depth + 1, dir == kRoot && name.starts_with("${")};
  Text text{std::string(name), std::nullopt};
  const Id id = static_cast<Id>(links_.size());
  links_.push_back(link);
  texts_.push_back(std::move(text));
  children_.emplace(Key{dir, texts_.back().name}, id);
  return id;
}

PathTable::Id PathTable::intern(const SymbolicPath& p) {
  Id id = kRoot;
  if (!p.anchor.empty()) id = child(id, p.anchor);
  for (const auto& c : p.components) id = child(id, c);
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
  return texts_[x].name < texts_[y].name;
}

PathTable::Id PathTable::rebase(Id to, Id from, Id p) {
  std::vector<Id> below;
  for (Id at = p; at != from && at != kRoot; at = links_[at].up) below.push_back(at);
  Id out = to;
  for (auto it = below.rbegin(); it != below.rend(); ++it) out = child(out, texts_[*it].name);
  return out;
}

}  // namespace zpolicy::compiler
