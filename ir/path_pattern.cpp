#include "ir/path_pattern.hpp"

namespace zpolicy::ir {

bool PatternComponent::matches(std::string_view name) const {
  if (kind == Kind::Literal) return name == pieces.front();
  if (kind == Kind::AnyDepth) return true;
  // pieces = p0 * p1 * ... * pn: the name starts with p0 and ends with pn, and the middle
  // pieces occur in order between them; taking each at its first occurrence is optimal.
  const std::string& first = pieces.front();
  const std::string& last = pieces.back();
  if (name.size() < first.size() + last.size() || !name.starts_with(first) || !name.ends_with(last))
    return false;
  size_t at = first.size();
  const size_t end = name.size() - last.size();
  for (size_t i = 1; i + 1 < pieces.size(); ++i) {
    const size_t found = name.substr(0, end).find(pieces[i], at);
    if (found == std::string_view::npos) return false;
    at = found + pieces[i].size();
  }
  return true;
}

std::string PatternComponent::str() const {
  if (kind == Kind::AnyDepth) return "**";
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) out += (i ? "*" : "") + pieces[i];
  return out;
}

std::string PathPattern::str() const {
  std::string out = variable_name(root);
  for (size_t i = 0; i < components.size(); ++i)
    out += (i || root != PathRoot::Relative ? "/" : "") + components[i].str();
  return out;
}

PolicyPath PathPattern::literal_prefix() const {
  PolicyPath p{root, {}};
  for (const auto& c : components) {
    if (c.kind != PatternComponent::Kind::Literal) break;
    p.components.push_back(c.pieces.front());
  }
  return p;
}

PathPattern PathPattern::below(const PolicyPath& base) const {
  PathPattern out{base.root, {}};
  for (const auto& c : base.components)
    out.components.push_back({PatternComponent::Kind::Literal, {c}});
  out.components.insert(out.components.end(), components.begin(), components.end());
  return out;
}

bool PathPattern::has_any_depth() const {
  for (const auto& c : components)
    if (c.kind == PatternComponent::Kind::AnyDepth) return true;
  return false;
}

bool looks_like_pattern(std::string_view text) {
  return text.find_first_of("*?[") != std::string_view::npos;
}

std::optional<PathPattern> parse_path_pattern(std::string_view text, bool allow_relative,
                                              PathError* error) {
  auto fail = [&](std::string why) -> std::optional<PathPattern> {
    if (error) error->reason = std::move(why);
    return std::nullopt;
  };
  const std::string quoted = "'" + std::string(text) + "'";
  auto path = parse_policy_path(text, allow_relative, error);
  if (!path) return std::nullopt;
  PathPattern out{path->root, {}};
  for (const auto& comp : path->components) {
    if (comp.find('?') != std::string::npos)
      return fail("pattern " + quoted + ": '?' is not supported (only '*' and '**')");
    if (comp.find('[') != std::string::npos)
      return fail("pattern " + quoted +
                  ": '[' (character classes) is not supported (only '*' and '**')");
    if (comp.find('\\') != std::string::npos)
      return fail("pattern " + quoted + ": '\\' (escapes) is not supported in a pattern");
    if (comp == "**") {
      if (!out.components.empty() && out.components.back().kind == PatternComponent::Kind::AnyDepth)
        return fail("pattern " + quoted + ": '**/**' is redundant; write '**' once");
      out.components.push_back({PatternComponent::Kind::AnyDepth, {}});
      continue;
    }
    if (comp.find("**") != std::string::npos)
      return fail("pattern " + quoted +
                  ": '**' must be a whole component ('**/NAME'), not part of '" + comp + "'");
    PatternComponent c{PatternComponent::Kind::Literal, {}};
    size_t pos = 0;
    for (size_t star = comp.find('*'); star != std::string::npos; star = comp.find('*', pos)) {
      c.kind = PatternComponent::Kind::Wildcard;
      c.pieces.push_back(comp.substr(pos, star - pos));
      pos = star + 1;
    }
    c.pieces.push_back(comp.substr(pos));
    out.components.push_back(std::move(c));
  }
  if (!out.components.empty() && out.components.back().kind == PatternComponent::Kind::AnyDepth)
    return fail("pattern " + quoted +
                ": '**' cannot end a pattern (everything below a directory is protected by "
                "naming the directory itself)");
  return out;
}

}  // namespace zpolicy::ir
