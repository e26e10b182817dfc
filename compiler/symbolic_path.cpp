#include "compiler/symbolic_path.hpp"

#include <algorithm>

namespace zpolicy::compiler {

std::optional<SymbolicPath> SymbolicPath::parse(std::string_view text) {
  SymbolicPath p;
  std::string_view rest = text;
  if (rest.starts_with("${")) {
    auto close = rest.find('}');
    if (close == std::string_view::npos || close == 2) return std::nullopt;
    p.anchor = std::string(rest.substr(0, close + 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() != '/') return std::nullopt;
  } else if (!rest.starts_with("/")) {
    return std::nullopt;
  }
  p.components.reserve(static_cast<size_t>(std::count(rest.begin(), rest.end(), '/')));
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t next = rest.find('/', pos);
    if (next == std::string_view::npos) next = rest.size();
    std::string_view comp = rest.substr(pos, next - pos);
    if (comp == "..") return std::nullopt;
    for (char c : comp)
      if (c == '\0' || c == '\n' || c == '\r' || c == '$') return std::nullopt;
    if (!comp.empty() && comp != ".") p.components.emplace_back(comp);
    pos = next + 1;
  }
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
