#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// The entries of a text artifact (bwrap.args, bwrap.fds, seccomp.txt, …), one per line; a
// final newline ends the last entry rather than starting another. The verifier, the
// listing check and the run plan all read artifacts this way, so what runs is what was
// proved.
std::vector<std::string_view> artifact_lines(std::string_view content);

// A target's artifacts: all of DESIGN.md "Artifact files" (what `compile` writes), or
// what `run` hands a backend: without the review listing seccomp.txt, and on Linux with
// every bind by descriptor (`--bind-fd FD DEST` in bwrap.args, the path each FD holds in
// bwrap.fds), so that bwrap mounts the objects the runner opened and checked.
enum class ArtifactSet { All, Enforced };

}  // namespace zpolicy::ir
