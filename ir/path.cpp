#include "ir/path.hpp"

namespace zpolicy::ir {

const char* variable_name(PathRoot r) {
  switch (r) {
    case PathRoot::Workspace:
      return "${WORKSPACE}";
    case PathRoot::Home:
      return "${HOME}";
    case PathRoot::Tmpdir:
      return "${TMPDIR}";
    case PathRoot::Absolute:
    case PathRoot::Relative:
      return "";
  }
  return "";
}

std::string PolicyPath::str() const {
  std::string out = variable_name(root);
  if (root == PathRoot::Relative) {
    for (size_t i = 0; i < components.size(); ++i) out += (i ? "/" : "") + components[i];
    return out.empty() ? "." : out;
  }
  for (const auto& c : components) out += "/" + c;
  if (out.empty()) out = "/";
  return out;
}

PolicyPath PolicyPath::join(const PolicyPath& rel) const {
  PolicyPath out = *this;
  out.components.insert(out.components.end(), rel.components.begin(), rel.components.end());
  return out;
}

bool PolicyPath::contains(const PolicyPath& other) const {
  if (root != other.root || other.components.size() < components.size()) return false;
  for (size_t i = 0; i < components.size(); ++i)
    if (components[i] != other.components[i]) return false;
  return true;
}

std::optional<PolicyPath> parse_policy_path(std::string_view text, bool allow_relative,
                                            PathError* error) {
  auto fail = [&](std::string why) -> std::optional<PolicyPath> {
    if (error) error->reason = std::move(why);
    return std::nullopt;
  };
  if (text.empty()) return fail("empty path");
  for (char c : text) {
    if (c == '\0') return fail("path contains a NUL byte");
    if (c == '\n' || c == '\r') return fail("path contains a newline");
  }
  PolicyPath p;
  std::string_view rest = text;
  if (rest == "~" || rest.starts_with("~/")) {
    p.root = PathRoot::Home;
    rest.remove_prefix(1);
  } else if (rest.starts_with("${")) {
    auto close = rest.find('}');
    if (close == std::string_view::npos) return fail("unterminated variable in '" + std::string(text) + "'");
    std::string_view name = rest.substr(2, close - 2);
    if (name == "WORKSPACE") p.root = PathRoot::Workspace;
    else if (name == "HOME") p.root = PathRoot::Home;
    else if (name == "TMPDIR") p.root = PathRoot::Tmpdir;
    else
      return fail("unknown variable '${" + std::string(name) +
                  "}' (known: ${WORKSPACE}, ${HOME}, ${TMPDIR}, ~)");
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() != '/')
      return fail("a variable must be followed by '/' or end the path");
  } else if (rest.front() == '/') {
    p.root = PathRoot::Absolute;
  } else if (rest.front() == '~') {
    return fail("'~user' paths are not supported; use ~/ or ${HOME}");
  } else if (rest.front() == '$') {
    return fail("'" + std::string(text) +
                "': shell variables are not expanded in a policy; the variables are ${WORKSPACE}, "
                "${HOME}, ${TMPDIR} and ~");
  } else {
    if (!allow_relative) return fail("relative path '" + std::string(text) + "'; an absolute path or a variable is required");
    p.root = PathRoot::Relative;
  }
  if (rest.find('$') != std::string_view::npos)
    return fail("a variable may only start a path");
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t next = rest.find('/', pos);
    if (next == std::string_view::npos) next = rest.size();
    std::string_view comp = rest.substr(pos, next - pos);
    if (comp == "..") return fail("'..' is not allowed in a path");
    if (!comp.empty() && comp != ".") p.components.emplace_back(comp);
    pos = next + 1;
  }
  if (p.root == PathRoot::Relative && p.components.empty())
    return fail("relative path names nothing");
  return p;
}

bool path_within(std::string_view root, std::string_view path) {
  if (root == "/") return true;
  return path == root ||
         (path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/');
}

}  // namespace zpolicy::ir
