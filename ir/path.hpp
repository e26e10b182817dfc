#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zpolicy::ir {

// The symbolic anchor of a policy path. Variables stay symbolic in the IR so that
// portable artifacts are identical on every machine; compiler/resolve binds them.
enum class PathRoot { Absolute, Workspace, Home, Tmpdir, Relative };

const char* variable_name(PathRoot r);  // "${WORKSPACE}", "" for Absolute/Relative

// A normalized policy path: an anchor plus clean components (no "", ".", ".." and no
// NUL or newline, guaranteed by parse_policy_path).
struct PolicyPath {
  PathRoot root = PathRoot::Absolute;
  std::vector<std::string> components;

  // "${WORKSPACE}/a/b", "/etc", "a/b" (relative), "/" for the absolute root.
  std::string str() const;
  bool is_relative() const { return root == PathRoot::Relative; }
  // Appends a relative path's components (for protected subpaths of a writable root).
  PolicyPath join(const PolicyPath& rel) const;
  // True when `other` is this path or lies below it (same anchor, component prefix).
  bool contains(const PolicyPath& other) const;

  friend bool operator==(const PolicyPath&, const PolicyPath&) = default;
  friend auto operator<=>(const PolicyPath&, const PolicyPath&) = default;
};

struct PathError {
  std::string reason;
};

// Parses "${WORKSPACE}/x", "${HOME}", "~/.ssh", "/etc", or (if allow_relative) ".git".
// Rejects unknown variables, "..", NUL, newline and empty strings.
std::optional<PolicyPath> parse_policy_path(std::string_view text, bool allow_relative,
                                            PathError* error);

// Whether `path` is `root` or lies below it, on normalized path text: absolute, or
// anchored at a variable ("${WORKSPACE}/a"). "/" holds every path, symbolic ones too.
bool path_within(std::string_view root, std::string_view path);

}  // namespace zpolicy::ir
