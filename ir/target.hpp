#pragma once

#include <optional>
#include <string>

namespace zpolicy::ir {

// The sandbox backends a policy compiles for (DESIGN.md "target").
enum class Target { Linux, Macos };
std::optional<Target> parse_target(const std::string& s);
const char* to_string(Target t);

// One compiled artifact file (DESIGN.md "Artifact files").
struct Artifact {
  std::string name;
  std::string content;
  bool binary = false;
};

}  // namespace zpolicy::ir
