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

// A target's artifacts: all of DESIGN.md "Artifact files" (what `compile` writes), or
// what `run` hands a backend: without the review listing seccomp.txt, and on Linux with
// every bind by descriptor (`--bind-fd FD DEST` in bwrap.args, the path each FD holds in
// bwrap.fds), so that bwrap mounts the objects the runner opened and checked.
enum class ArtifactSet { All, Enforced };

}  // namespace zpolicy::ir
