#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/review/difference.hpp"

namespace zpolicy::compiler::review {

// The Linux artifacts of one side: bwrap.args and seccomp.bpf, as compiled (or edited).
struct LinuxArtifacts {
  std::string bwrap_args;
  std::string seccomp_bpf;
};

// Why a side cannot be compared: the artifact, its line (or instruction), the reason.
struct ArtifactError {
  bool after = false;  // which side
  std::string artifact;
  int line = 0;
  std::string message;
};

// What the newer artifacts grant that the older do not, and the reverse, judged by the
// analyzer's evaluators (docs/review.md "Artifacts"):
// * the filesystem: both mount tables replayed, every path either argv names, a fresh
//   name below each and "/" plus a fresh top-level path, every operation, at the path
//   and for the host object wherever it is reachable;
// * bwrap's namespace and lockdown switches (--unshare-net, --new-session, ...);
// * the seccomp programs exactly, over the common refinement of both programs' paths
//   (program_diff.hpp).
// Differences come in a fixed order. An artifact that does not parse, or a program the
// path walk cannot follow exactly, is an error.
std::variant<std::vector<Difference>, ArtifactError> diff_linux_artifacts(
    const LinuxArtifacts& before, const LinuxArtifacts& after);

// The macOS artifacts of one side.
struct MacosArtifacts {
  std::string profile_sb;
  std::string params_txt;
};

// The same for Seatbelt profiles: each profile with its parameters, asked under every
// precedence model (an answer counts as allowed when any model allows it) for read,
// write, create, unlink and exec at every path a filter of either profile names, its
// parent, a fresh name below it, `/` and a fresh top-level path, and for outbound
// connections to localhost and to a public name.
std::variant<std::vector<Difference>, ArtifactError> diff_macos_artifacts(
    const MacosArtifacts& before, const MacosArtifacts& after);

}  // namespace zpolicy::compiler::review
