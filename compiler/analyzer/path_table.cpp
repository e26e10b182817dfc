#include "compiler/analyzer/path_table.hpp"

#include <algorithm>

namespace zpolicy::compiler {

PathTable::PathTable(PathSpelling spelling) : spelling_(spelling) { links_.push_back(Link{}); }

SymbolicPath PathTable::path(Id id) const {
  SymbolicPath out;
  for (; id != kRoot; id = links_[id].up) {
    if (links_[id].anchor)
      out.anchor = std::string(links_[id].name);
    else
      out.components.emplace_back(links_[id].name);
  }
  std::reverse(out.components.begin(), out.components.end());
  return out;
}

PathTable::Id PathTable::child(Id dir, std::string_view name) {
  if (auto it = children_.find({dir, name}); it != children_.end()) return it->second;
  name = names_.emplace_back(name);
  const Id id = static_cast<Id>(links_.size());
  const bool anchor = spelling_ == PathSpelling::Portable && dir == kRoot && name.starts_with("${");
  links_.push_back(Link{dir, links_[dir].depth + 1, anchor, name});
  children_.emplace(ChildKey{dir, name}, id);
  return id;
}

std::optional<PathTable::Id> PathTable::find_child(Id dir, std::string_view name) const {
  const auto it = children_.find({dir, name});
  if (it == children_.end()) return std::nullopt;
  return it->second;
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
  if (!SymbolicPath::read(text, spelling_, down, down)) return std::nullopt;
  return id;
}

std::optional<PathTable::Id> PathTable::link_destination(Id link, std::string_view target) {
  if (target.starts_with("/") || (spelling_ == PathSpelling::Portable && target.starts_with("${")))
    return parse(target);
  std::optional<Id> out = parent(link);
  size_t pos = 0;
  while (out && pos <= target.size()) {
    size_t next = target.find('/', pos);
    if (next == std::string_view::npos) next = target.size();
    const std::string_view comp = target.substr(pos, next - pos);
    if (comp == "..")
      out = parent(*out);
    else if (!comp.empty() && comp != ".")
      out = child(*out, comp);
    pos = next + 1;
  }
  return out;
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
  // Up to `from` or to the nearest path rebased before, then down again.
  std::vector<Id> below;
  Id out = to;
  for (Id at = p; at != from && at != kRoot; at = links_[at].up) {
    if (auto it = rebased_.find({to, from, at}); it != rebased_.end()) {
      out = it->second;
      break;
    }
    below.push_back(at);
  }
  for (auto it = below.rbegin(); it != below.rend(); ++it) {
    out = child(out, links_[*it].name);
    rebased_.emplace(RebaseKey{to, from, *it}, out);
  }
  return out;
}

}  // namespace zpolicy::compiler
