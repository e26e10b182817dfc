#include "compiler/analyzer/symbolic_path.hpp"

#include <algorithm>

namespace zpolicy::compiler {

std::optional<SymbolicPath> SymbolicPath::parse(std::string_view text, PathSpelling spelling) {
  SymbolicPath p;
  p.components.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '/')));
  const bool ok = read(
      text, spelling, [&](std::string_view anchor) { p.anchor = std::string(anchor); },
      [&](std::string_view comp) { p.components.emplace_back(comp); });
  if (!ok) return std::nullopt;
  return p;
}

std::string SymbolicPath::str() const {
  std::string out = anchor;
  for (const auto& c : components) out += "/" + c;
  return out.empty() ? "/" : out;
}

std::optional<SymbolicPath> SymbolicPath::parent() const {
  if (components.empty()) return std::nullopt;
  SymbolicPath p = *this;
  p.components.pop_back();
  return p;
}

SymbolicPath SymbolicPath::child(std::string_view name) const {
  SymbolicPath p = *this;
  p.components.emplace_back(name);
  return p;
}

bool SymbolicPath::contains(const SymbolicPath& other) const {
  if (is_root()) return true;
  if (anchor != other.anchor || other.components.size() < components.size()) return false;
  for (size_t i = 0; i < components.size(); ++i)
    if (components[i] != other.components[i]) return false;
  return true;
}

SymbolicPath SymbolicPath::rebase(const SymbolicPath& from, const SymbolicPath& other) const {
  SymbolicPath out = *this;
  // "/" contains a symbolic path through its anchor, which is then part of the suffix.
  if (from.is_root() && !other.anchor.empty()) {
    if (out.is_root()) return other;
    out.components.push_back(other.anchor);
  }
  out.components.insert(out.components.end(), other.components.begin() + from.components.size(),
                        other.components.end());
  // Rebasing "/mnt/${HOME}/x" from "/mnt" onto "/" names "${HOME}/x" again.
  if (out.anchor.empty() && !out.components.empty() && out.components.front().starts_with("${")) {
    out.anchor = out.components.front();
    out.components.erase(out.components.begin());
  }
  return out;
}

}  // namespace zpolicy::compiler
