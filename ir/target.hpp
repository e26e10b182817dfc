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

// A target's artifacts: all of DESIGN.md "Artifact files", or only those a backend
// enforces (what `run` hands over; without the review listing seccomp.txt).
enum class ArtifactSet { All, Enforced };

}  // namespace zpolicy::ir
