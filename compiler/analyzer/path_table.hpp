#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/analyzer/symbolic_path.hpp"

namespace zpolicy::compiler {

// Paths interned as small integers in a trie of components, so that the verifiers,
// which ask thousands of questions about the same few hundred paths, compare and look
// up integers instead of strings: "is A inside B", "the deepest key above P" and "the
// parent of P" become walks up an array. A symbolic root ("${HOME}") is a child of "/",
// as "/" contains it. Ids are never reused; a path keeps its id for the table's life.
// A table reads the paths of one spelling: a bound table has no symbolic root, and a
// directory of "/" named "${HOME}" is a directory.
class PathTable {
 public:
  using Id = std::uint32_t;
  static constexpr Id kRoot = 0;

  explicit PathTable(PathSpelling spelling = PathSpelling::Portable);
  PathTable(const PathTable&) = delete;
  PathTable& operator=(const PathTable&) = delete;

  Id intern(const SymbolicPath& p);
  // The path `text` spells, as SymbolicPath::parse reads it, interned without building
  // it; none where parse refuses the text (whose leading directories may then have
  // been interned, which changes no answer).
  std::optional<Id> parse(std::string_view text);
  PathSpelling spelling() const { return spelling_; }

  // `name` below `dir`; below "/" of a portable table a name spelled "${VAR}" is that
  // symbolic root.
  Id child(Id dir, std::string_view name);
  // `name` below `dir` if it is interned; none otherwise.
  std::optional<Id> find_child(Id dir, std::string_view name) const;

  // Where a link at `link` whose text is `target` leads: an absolute target, or in a
  // portable table a ${VAR} one, as parse() reads it; a relative one from the link's
  // directory; none where it cannot be followed (above "/" or a symbolic root, or a text
  // parse() refuses).
  std::optional<Id> link_destination(Id link, std::string_view target);

  // The path an id stands for, built by a walk up the table: O(depth), and nothing kept,
  // so that interning a deep path costs memory linear in its length.
  SymbolicPath path(Id id) const;
  // The trie parent: "/" for a bare symbolic root, "/" itself for "/".
  Id up(Id id) const { return links_[id].up; }
  // The containing directory, as SymbolicPath::parent() knows it: none for "/" and for
  // a bare symbolic root, whose place is unknown.
  std::optional<Id> parent(Id id) const {
    if (id == kRoot || links_[id].anchor) return std::nullopt;
    return links_[id].up;
  }
  // The last component, or the symbolic root's name; "" for "/". Valid for the table's
  // life.
  std::string_view name(Id id) const { return links_[id].name; }
  // True when `inner` is `outer` or lies below it.
  bool contains(Id outer, Id inner) const;
  // The order of SymbolicPath's operator<, without building the paths: "/" and its
  // plain descendants first, then each symbolic root's, by name.
  bool less(Id a, Id b) const;
  // `p`, which `from` contains, re-rooted onto `to`, as SymbolicPath::rebase does.
  // Remembered, so that rebasing every path of a deep chain costs the chain's length
  // once, not once per path.
  Id rebase(Id to, Id from, Id p);

 private:
  struct Link {
    Id up = kRoot;
    unsigned depth = 0;
    bool anchor = false;
    std::string_view name;  // in names_
  };
  struct ChildKey {
    Id dir;
    std::string_view name;
    friend bool operator==(const ChildKey&, const ChildKey&) = default;
  };
  struct ChildHash {
    size_t operator()(const ChildKey& k) const {
      return std::hash<std::string_view>{}(k.name) * 31 + k.dir;
    }
  };
  struct RebaseKey {
    Id to, from, p;
    friend bool operator==(const RebaseKey&, const RebaseKey&) = default;
  };
  struct RebaseHash {
    size_t operator()(const RebaseKey& k) const {
      return (static_cast<size_t>(k.to) * 0x9E3779B1u ^ k.from) * 0x85EBCA77u ^ k.p;
    }
  };
  PathSpelling spelling_;
  std::vector<Link> links_;        // by id
  std::deque<std::string> names_;  // the names the table keeps; never moved
  std::unordered_map<ChildKey, Id, ChildHash> children_;
  std::unordered_map<RebaseKey, Id, RebaseHash> rebased_;
};

// Values keyed by interned path, answering "which keys contain this path" by walking
// the path's ancestors in the table: O(depth), no string in sight.
template <class T>
class PathMap {
 public:
  using Id = PathTable::Id;
  explicit PathMap(const PathTable& table) : table_(&table) {}

  // Keeps the first value given for a path.
  T& insert(Id id, T value) {
    auto& slot = at(id);
    if (!slot) slot = std::move(value);
    return *slot;
  }
  // The value at `id`, value-initialised if there is none.
  T& operator[](Id id) {
    auto& slot = at(id);
    if (!slot) slot = T{};
    return *slot;
  }
  void erase(Id id) {
    if (id < values_.size()) values_[id].reset();
  }
  const T* find(Id id) const {
    return id < values_.size() && values_[id] ? &*values_[id] : nullptr;
  }

  // The value of the deepest key that contains `id`, or null.
  const T* deepest_containing(Id id) const {
    for (;;) {
      if (const T* v = find(id)) return v;
      if (id == PathTable::kRoot) return nullptr;
      id = table_->up(id);
    }
  }

 private:
  std::optional<T>& at(Id id) {
    if (id >= values_.size()) values_.resize(id + 1);
    return values_[id];
  }

  const PathTable* table_;
  // By id. A deque, not a vector: it grows in small blocks without moving what it holds,
  // so a map over many ids is never one block large enough for malloc to map and unmap
  // it afresh on every verification (page faults that cost more than the look-ups).
  std::deque<std::optional<T>> values_;
};

// The answer at `p` to a question whose answer at a path follows from the answer at its
// parent: answer(a) = step(a, answer(up(a))), answer("/") = step("/", init). Every answer
// found on the way is kept in `memo`, so that asking about every directory of a path
// costs its depth once, not once per directory: up to the nearest answer known, then
// down again, in a loop rather than a call per level (paths may be thousands of
// components deep).
template <class T, class Step>
T fold_down(const PathTable& table, PathMap<T>& memo, PathTable::Id p, const T& init, Step&& step) {
  // Most questions are about a path, or the child of a path, asked before (a probe's
  // `p/zpolicy-probe`): answered without the list of the ancestors not yet known.
  if (const T* known = memo.find(p)) return *known;
  if (const T* above = p == PathTable::kRoot ? nullptr : memo.find(table.up(p)))
    return memo.insert(p, step(p, *above));
  std::vector<PathTable::Id> unknown;
  T answer = init;
  for (PathTable::Id a = p;; a = table.up(a)) {
    if (const T* known = memo.find(a)) {
      answer = *known;
      break;
    }
    unknown.push_back(a);
    if (a == PathTable::kRoot) break;
  }
  for (auto it = unknown.rbegin(); it != unknown.rend(); ++it) {
    answer = step(*it, answer);
    memo.insert(*it, answer);
  }
  return answer;
}

}  // namespace zpolicy::compiler
