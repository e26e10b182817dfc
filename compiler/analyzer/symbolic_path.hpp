#pragma once

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zpolicy::compiler {

// How an artifact spells its paths. A portable one's may start at a symbolic root
// ("${HOME}/x"), and no name after it may start with "${", which once rebased could not
// be told from a root. A bound one's are host paths, every one absolute, in which '$',
// '{' and '}' are characters like any other: `/home/u/${proj}` is a directory, and
// `${HOME}/x` no path but a relative one, which bwrap would resolve against its working
// directory (red team H17-10, Z19-3).
enum class PathSpelling { Portable, Bound };

// A normalized absolute path as it appears in an artifact or the resolved IR: either a
// host path ("/home/u/.ssh") or one anchored at an opaque symbolic root
// ("${HOME}/.ssh"), as portable artifacts spell them. A symbolic root stands for some
// directory below "/" whose place is unknown: "/" contains it, no other concrete path
// is known to contain it or to be contained by it.
struct SymbolicPath {
  std::string anchor;  // "" for "/", otherwise "${NAME}"
  std::vector<std::string> components;

  // Accepts "/a/b" and, spelled portably, "${VAR}" and "${VAR}/a" (VAR of letters,
  // digits and '_'); collapses "//" and "."; rejects "..", relative paths, NUL and
  // newlines, and, spelled portably, a component after the first that starts with "${",
  // which could not be told from an anchor once rebased (rebase()). A '$' anywhere else
  // is a character of a host name ("/home/u/a$b"), and any '$' is in a bound path.
  static std::optional<SymbolicPath> parse(std::string_view text,
                                           PathSpelling spelling = PathSpelling::Portable);
  // The reading parse() does, for callers that keep the names elsewhere: calls
  // on_anchor with "${VAR}" if there is one, then on_component with each component in
  // order, and returns false where parse() refuses `text`, possibly after some calls.
  template <class OnAnchor, class OnComponent>
  static bool read(std::string_view text, PathSpelling spelling, OnAnchor&& on_anchor,
                   OnComponent&& on_component);

  std::string str() const;
  bool is_root() const { return anchor.empty() && components.empty(); }
  // The containing directory; none for "/" and for a bare symbolic root, whose parent
  // is unknown.
  std::optional<SymbolicPath> parent() const;
  SymbolicPath child(std::string_view name) const;
  // True when `other` is this path or lies below it.
  bool contains(const SymbolicPath& other) const;
  // `other` re-rooted from `from` onto this path; `from` must contain `other`. Read as
  // portable paths: a first component spelled like a root becomes that root again
  // (PathTable::rebase reads a bound table's names as names).
  SymbolicPath rebase(const SymbolicPath& from, const SymbolicPath& other) const;

  friend bool operator==(const SymbolicPath&, const SymbolicPath&) = default;
  friend auto operator<=>(const SymbolicPath&, const SymbolicPath&) = default;
};

template <class OnAnchor, class OnComponent>
bool SymbolicPath::read(std::string_view text, PathSpelling spelling, OnAnchor&& on_anchor,
                        OnComponent&& on_component) {
  const bool portable = spelling == PathSpelling::Portable;
  std::string_view rest = text;
  if (portable && rest.starts_with("${")) {
    auto close = rest.find('}');
    if (close == std::string_view::npos || close == 2) return false;
    // A symbolic root's name is a variable's: bwrap would read "${A/../etc}" as a host
    // path the kernel resolves, which the analyzer must not take for an opaque root.
    for (const char c : rest.substr(2, close - 2))
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    on_anchor(rest.substr(0, close + 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() != '/') return false;
  } else if (!rest.starts_with("/")) {
    return false;
  }
  // One pass over the characters, splitting at each '/'.
  size_t start = 0;
  for (size_t i = 0; i <= rest.size(); ++i) {
    if (i < rest.size() && rest[i] != '/') {
      const char c = rest[i];
      if (c == '\0' || c == '\n' || c == '\r') return false;
      continue;
    }
    const std::string_view comp = rest.substr(start, i - start);
    if (comp == ".." || (portable && comp.starts_with("${"))) return false;
    if (!comp.empty() && comp != ".") on_component(comp);
    start = i + 1;
  }
  return true;
}

}  // namespace zpolicy::compiler
