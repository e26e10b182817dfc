#include "ir/target.hpp"

#include <algorithm>

namespace zpolicy::ir {

std::optional<Target> parse_target(const std::string& s) {
  if (s == "linux") return Target::Linux;
  if (s == "macos") return Target::Macos;
  return std::nullopt;
}

const char* to_string(Target t) { return t == Target::Linux ? "linux" : "macos"; }

std::vector<std::string_view> artifact_lines(std::string_view content) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < content.size();) {
    const size_t nl = std::min(content.find('\n', pos), content.size());
    out.push_back(content.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

}  // namespace zpolicy::ir
