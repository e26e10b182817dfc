#include "ir/target.hpp"

namespace zpolicy::ir {

std::optional<Target> parse_target(const std::string& s) {
  if (s == "linux") return Target::Linux;
  if (s == "macos") return Target::Macos;
  return std::nullopt;
}

const char* to_string(Target t) { return t == Target::Linux ? "linux" : "macos"; }

}  // namespace zpolicy::ir
