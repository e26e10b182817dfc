#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

// Relations between paths by their text, for the verifiers that keep paths as the
// artifact spells them (the SBPL verifier and its nested-places proof). The paths are
// normalized (SymbolicPath::parse's reading: no "//", no "." or "..", no trailing '/'),
// absolute ("/a/b") or anchored at a symbolic root ("${HOME}/a"); the relative paths
// below a place ("a/b") that parent_of also walks are spelled the same way. The
// analyzer's own, so that it shares no path logic with the emitters it checks.
namespace zpolicy::compiler {

// Whether `path` is `root` or lies below it. "/" holds every absolute path and every
// symbolic one (a symbolic root lies somewhere below "/", as SymbolicPath::contains
// reads it), and no other text: an address or a sysctl name is no path.
inline bool within(std::string_view root, std::string_view path) {
  if (path == root) return true;
  if (root == "/") return path.starts_with('/') || path.starts_with("${");
  return path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/';
}

// The directory that holds `path`: "/" for "/a", "${HOME}" for "${HOME}/a", "a" for "a/b";
// none for "/", for a bare symbolic root (whose place is unknown) and for a single name.
inline std::optional<std::string_view> parent_of(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos || path == "/") return std::nullopt;
  return path.substr(0, slash == 0 ? 1 : slash);
}

// `path` re-rooted from `root` to `place` where `root` holds it; else `path` itself.
// Callers bind symbolic roots to places below "/": neither `root` nor `place` is "/".
inline std::string rebased(std::string_view path, std::string_view root, std::string_view place) {
  if (!within(root, path)) return std::string(path);
  return std::string(place) + std::string(path.substr(root.size()));
}

// Whether `sorted` (in byte order) holds `c` or a path below it. Those below it are the run
// that starts with `c` + "/": the first entry at or after `c` alone does not tell, since
// "/a-1" sorts between "/a" and "/a/x".
template <class Sorted>
bool holds_at_or_below(const Sorted& sorted, std::string_view c) {
  if (std::binary_search(sorted.begin(), sorted.end(), c)) return true;
  const std::string below = std::string(c) + "/";
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), std::string_view(below));
  return it != sorted.end() && std::string_view(*it).starts_with(below);
}

// A child of `n` that `sorted` (in byte order) neither holds nor holds a path below: the
// first of `n`/STEM, `n`/STEM-1, `n`/STEM-2, ...
template <class Sorted>
std::string fresh_child(const Sorted& sorted, std::string_view n, std::string_view stem) {
  std::string base(n == "/" ? std::string_view() : n);
  base.append("/").append(stem);
  for (size_t i = 0;; ++i)
    if (std::string c = i ? base + "-" + std::to_string(i) : base; !holds_at_or_below(sorted, c))
      return c;
}

// The deepest path that holds both `a` and `b` (within()): "/" where they share no
// directory.
inline std::string_view common_holder(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  const size_t k =
      static_cast<size_t>(std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin());
  if (k == a.size() && (k == b.size() || b[k] == '/')) return a;
  if (k == b.size() && a[k] == '/') return b;
  const size_t slash = k == 0 ? std::string_view::npos : a.rfind('/', k - 1);
  if (slash == std::string_view::npos || slash == 0) return "/";
  return a.substr(0, slash);
}

}  // namespace zpolicy::compiler
