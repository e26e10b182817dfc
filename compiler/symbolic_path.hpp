#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zpolicy::compiler {

// A normalized absolute path as it appears in an artifact or the resolved IR: either a
// host path ("/home/u/.ssh") or one anchored at an opaque symbolic root
// ("${HOME}/.ssh"), as portable artifacts spell them. A symbolic root stands for some
// directory below "/" whose place is unknown: "/" contains it, no other concrete path
// is known to contain it or to be contained by it.
struct SymbolicPath {
  std::string anchor;  // "" for "/", otherwise "${NAME}"
  std::vector<std::string> components;

  // Accepts "/a/b", "${VAR}", "${VAR}/a"; collapses "//" and "."; rejects "..",
  // relative paths, NUL and newlines.
  static std::optional<SymbolicPath> parse(std::string_view text);

  std::string str() const;
  bool is_root() const { return anchor.empty() && components.empty(); }
  // The containing directory; none for "/" and for a bare symbolic root, whose parent
  // is unknown.
  std::optional<SymbolicPath> parent() const;
  SymbolicPath child(std::string_view name) const;
  // True when `other` is this path or lies below it.
  bool contains(const SymbolicPath& other) const;
  // `other` re-rooted from `from` onto this path; `from` must contain `other`.
  SymbolicPath rebase(const SymbolicPath& from, const SymbolicPath& other) const;

  friend bool operator==(const SymbolicPath&, const SymbolicPath&) = default;
  friend auto operator<=>(const SymbolicPath&, const SymbolicPath&) = default;
};

}  // namespace zpolicy::compiler
