#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/symbolic_path.hpp"

namespace zpolicy::compiler {

// Values keyed by path, answering "which keys contain this path" by walking the path's
// components down a trie, in O(depth · log fan-out), instead of testing every key: the
// verifiers ask it for every probe, and a scan made them quadratic in the size of the
// policy. A symbolic root ("${HOME}") is one level below "/", as "/" contains it.
template <class T>
class PathIndex {
 public:
  // Keeps the first value given for a path.
  T& insert(const SymbolicPath& p, T value) {
    Node& n = node(p);
    if (!n.value) n.value = std::move(value);
    return *n.value;
  }
  T& operator[](const SymbolicPath& p) {
    Node& n = node(p);
    if (!n.value) n.value.emplace();
    return *n.value;
  }
  void erase(const SymbolicPath& p) {
    if (Node* n = walk(root_, p, [](const Node&) {})) n->value.reset();
  }
  const T* find(const SymbolicPath& p) const {
    const Node* n = walk(root_, p, [](const Node&) {});
    return n && n->value ? &*n->value : nullptr;
  }

  // The value of the deepest key that contains `p`, or null.
  const T* deepest_containing(const SymbolicPath& p) const {
    const T* found = nullptr;
    walk(root_, p, [&](const Node& n) {
      if (n.value) found = &*n.value;
    });
    return found;
  }

  // The values of every key that contains `p`, deepest first.
  std::vector<const T*> containing(const SymbolicPath& p) const {
    std::vector<const T*> out;
    walk(root_, p, [&](const Node& n) {
      if (n.value) out.push_back(&*n.value);
    });
    std::reverse(out.begin(), out.end());
    return out;
  }

 private:
  struct Node {
    std::optional<T> value;
    std::map<std::string, std::unique_ptr<Node>, std::less<>> children;
  };

  Node& node(const SymbolicPath& p) {
    Node* n = &root_;
    auto step = [&](const std::string& name) {
      auto& child = n->children[name];
      if (!child) child = std::make_unique<Node>();
      n = child.get();
    };
    if (!p.anchor.empty()) step(p.anchor);
    for (const auto& c : p.components) step(c);
    return *n;
  }

  // Visits every node from "/" down along `p`, shallowest first; returns the node of `p`
  // itself, or null when the trie holds no such path.
  // `N` is Node or const Node.
  template <class N, class F>
  static N* walk(N& root, const SymbolicPath& p, F&& visit) {
    N* n = &root;
    visit(*n);
    auto step = [&](const std::string& name) {
      auto it = n->children.find(name);
      n = it == n->children.end() ? nullptr : it->second.get();
      if (n) visit(*n);
      return n != nullptr;
    };
    if (!p.anchor.empty() && !step(p.anchor)) return nullptr;
    for (const auto& c : p.components)
      if (!step(c)) return nullptr;
    return n;
  }

  Node root_;
};

}  // namespace zpolicy::compiler
