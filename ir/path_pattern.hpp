#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/path.hpp"

namespace zpolicy::ir {

// One component of a path pattern. A pattern is never a string with stars in it: the
// frontend decides once what each component means, and everything after works on this.
struct PatternComponent {
  enum class Kind {
    Literal,   // a name, matched exactly
    Wildcard,  // `*`, `*.env`, `a*b*`: any one name; the stars never match '/'
    AnyDepth,  // `**`: zero or more directories
  };
  Kind kind = Kind::Literal;
  // Literal: one piece, the name. Wildcard: the literal text between the stars
  // ("*.env" -> {"", ".env"}, "*" -> {"", ""}). AnyDepth: empty.
  std::vector<std::string> pieces;

  bool matches(std::string_view name) const;  // Literal and Wildcard only
  std::string str() const;
  friend bool operator==(const PatternComponent&, const PatternComponent&) = default;
  friend auto operator<=>(const PatternComponent&, const PatternComponent&) = default;
};

// A `protect` or `deny` entry with at least one Wildcard or AnyDepth component, anchored
// like a PolicyPath. `**` is never the last component and never follows another `**`.
struct PathPattern {
  PathRoot root = PathRoot::Relative;
  std::vector<PatternComponent> components;

  // "**/.git", "${WORKSPACE}/packages/*/.env": the policy's own spelling, normalized.
  std::string str() const;
  bool is_relative() const { return root == PathRoot::Relative; }
  // The leading Literal components as a path (the directory the expansion starts at;
  // for a relative pattern, relative to each writable root).
  PolicyPath literal_prefix() const;
  // The pattern anchored below `base` (a relative pattern joined to a writable root).
  PathPattern below(const PolicyPath& base) const;
  bool has_any_depth() const;

  friend bool operator==(const PathPattern&, const PathPattern&) = default;
  friend auto operator<=>(const PathPattern&, const PathPattern&) = default;
};

// Whether `text` uses a pattern character ('*', '?' or '['): such an entry is either a
// valid pattern or an error, never a literal name.
bool looks_like_pattern(std::string_view text);

// Parses a `protect`/`deny` entry that looks_like_pattern(). Refuses, with the reason in
// `error`, '?' and '[' (no character classes), `**` that is not a whole component
// (`a**b`), `**` as the last component or twice in a row, and '\' (no escapes), besides
// everything parse_policy_path refuses.
std::optional<PathPattern> parse_path_pattern(std::string_view text, bool allow_relative,
                                              PathError* error);

}  // namespace zpolicy::ir
