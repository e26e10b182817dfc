#include "compiler/analyzer/path_table.hpp"

#include <cstring>

#include "compiler/analyzer/common_prefix.hpp"

namespace zpolicy::compiler {

// Sized for the thousand or so paths of a large verification: growing from small rehashed
// the tables several times, which cost more than clearing larger ones once. The links
// have room for twice that: each doubling copied them into freshly touched pages, and
// pages reserved but never reached cost nothing.
PathTable::PathTable() : children_(2048), texts_(512) {
  links_.reserve(2048);
  links_.push_back(Link{});
}

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

// Eight bytes of the name at a time, then a final mix so that the low bits, which pick
// the slot, depend on all of it: this runs for every component of every path looked up.
std::uint32_t PathTable::hash_of(Id dir, std::string_view name) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  std::uint64_t h = (std::uint64_t{dir} << 32) ^ name.size();
  size_t i = 0;
  for (; i + 8 <= name.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, name.data() + i, 8);
    h = (h ^ word) * kMul;
    h ^= h >> 29;
  }
  // The last bytes, as whole words where the name is long enough: the loads may overlap
  // bytes already mixed in, which changes nothing but the value.
  const size_t n = name.size();
  std::uint64_t tail = 0;
  if (n >= 8) {
    std::memcpy(&tail, name.data() + n - 8, 8);
  } else if (n >= 4) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, name.data(), 4);
    std::memcpy(&hi, name.data() + n - 4, 4);
    tail = (std::uint64_t{hi} << 32) | lo;
  } else {
    for (size_t k = 0; k < n; ++k)
      tail |= std::uint64_t{static_cast<unsigned char>(name[k])} << (8 * k);
  }
  h = (h ^ tail) * kMul;
  h ^= h >> 32;
  h *= kMul;
  return static_cast<std::uint32_t>(h >> 32);
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
  std::vector<Id> old(children_.size() * 2);
  old.swap(children_);
  const size_t mask = children_.size() - 1;
  for (Id id : old) {
    if (id == kNoChild) continue;
    size_t at = links_[id].hash & mask;
    while (children_[at] != kNoChild) at = (at + 1) & mask;
    children_[at] = id;
  }
}

PathTable::Id PathTable::child(Id dir, std::string_view name) { return child(dir, name, false); }

PathTable::Id PathTable::lasting_child(Id dir, std::string_view name) {
  return child(dir, name, true);
}

// Flattened, as parse() is: every component of every path comes through here, and the
// hash and the probe, inlined, share the name's registers instead of passing it twice.
[[gnu::flatten]] PathTable::Id PathTable::child(Id dir, std::string_view name, bool stored) {
  const std::uint32_t hash = hash_of(dir, name);
  size_t at = slot_of(dir, name, hash);
  if (children_[at] != kNoChild) return children_[at];
  const Id id = static_cast<Id>(links_.size());
  links_.push_back(Link{dir, links_[dir].depth + 1, dir == kRoot && name.starts_with("${"), hash,
                        stored ? name : names_.store(name)});
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

// Flattened: the reading and the lookups of each new component inlined into one loop.
[[gnu::flatten]] std::optional<PathTable::Id> PathTable::parse(std::string_view text) {
  // The same text again is one lookup: the verifier reads most paths twice, from the
  // artifact and from the IR.
  const std::uint32_t text_hash = hash_of(kRoot, text);
  size_t slot = text_slot_of(text, text_hash);
  if (texts_[slot].id != kNoChild) return texts_[slot].id;
  // Read from the table's own copy, which the cache keeps anyway, so that the names of
  // the new paths can view into it instead of being copied one by one.
  const std::string_view kept = names_.store(text);
  // Start after the last component this text shares with the previous one; what comes
  // before it was read, and found valid, then.
  const size_t common = common_prefix(kept, last_text_);
  Id id = kRoot;
  size_t from = 0;
  size_t shared = 0;
  for (; shared < last_ends_.size(); ++shared) {
    const auto [end, at] = last_ends_[shared];
    if (end > common || (end < kept.size() && kept[end] != '/')) break;
    id = at;
    from = end;
  }
  last_ends_.resize(shared);
  auto down = [&](std::string_view name) {
    id = child(id, name, true);
    last_ends_.emplace_back(static_cast<size_t>(name.data() + name.size() - kept.data()), id);
  };
  // A rest that is not empty starts with the '/' that ends the last shared component.
  const bool ok =
      (shared > 0 && from == kept.size()) || SymbolicPath::read(kept.substr(from), down, down);
  if (!ok) {
    last_text_ = {};
    last_ends_.clear();
    return std::nullopt;
  }
  last_text_ = kept;
  if (id == kNoChild) return id;
  if (2 * (text_count_ + 1) > texts_.size()) {
    grow_texts();
    slot = text_slot_of(text, text_hash);
  }
  texts_[slot] = Text{kept, text_hash, id};
  ++text_count_;
  return id;
}

size_t PathTable::text_slot_of(std::string_view text, std::uint32_t hash) const {
  const size_t mask = texts_.size() - 1;
  for (size_t at = hash & mask;; at = (at + 1) & mask) {
    const Text& t = texts_[at];
    if (t.id == kNoChild || (t.hash == hash && t.text == text)) return at;
  }
}

void PathTable::grow_texts() {
  std::vector<Text> old(texts_.size() * 2);
  old.swap(texts_);
  const size_t mask = texts_.size() - 1;
  for (const Text& t : old) {
    if (t.id == kNoChild) continue;
    size_t at = t.hash & mask;
    while (texts_[at].id != kNoChild) at = (at + 1) & mask;
    texts_[at] = t;
  }
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
