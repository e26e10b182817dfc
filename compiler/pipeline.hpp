#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve/resolve.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"
#include "ir/resolved.hpp"
#include "ir/target.hpp"

namespace zpolicy::compiler {

using ir::Artifact;
using ir::ArtifactSet;
using ir::parse_target;
using ir::Target;
using ir::to_string;

// Emits the artifacts of a target from a resolved policy. Pure.
std::vector<Artifact> emit_artifacts(const ir::Resolved& r, Target target,
                                     ArtifactSet set = ArtifactSet::All);

// Binds or keeps symbolic: the resolved policy `compile` and `verify` work from. A
// target is bound only to facts of a host of its own system (host.os). Bound for
// Linux, missing protected paths are taken as the placeholders `run` will create, so
// that the result is exactly what `run` executes; macOS creates none. Errors (and
// danger-full-access, which has nothing to compile) are diagnostics.
std::optional<ir::Resolved> resolve_for_target(const ir::Policy& policy, Target target,
                                               ir::Mode mode, const std::optional<HostFacts>& host,
                                               ir::Diagnostics& diags);

struct Compiled {
  ir::Resolved resolved;
  std::vector<Artifact> artifacts;
  std::vector<ir::Diagnostic> findings;  // from the independent verifier; non-empty = exit 3
};

// What compile() proves before it returns: every artifact, or for Linux only the mount
// plan (bwrap.args, bwrap.fds), leaving the seccomp filter to the caller, which must prove
// it with verify_linux_part(LinuxPart::Filter) before anything loads it (`run` does so
// while bwrap sets up the sandbox; docs/run.md "When the seccomp program is proved").
enum class Proof { All, MountPlanOnly };

// policy -> resolved -> artifacts -> verification of the artifacts `proof` names. A
// policy the target cannot express (analyzer's inexpressible()) is refused before
// emission: findings and no artifacts.
std::optional<Compiled> compile(const ir::Policy& policy, Target target, ir::Mode mode,
                                const std::optional<HostFacts>& host, ir::Diagnostics& diags,
                                ArtifactSet set = ArtifactSet::All, Proof proof = Proof::All);

// `verify POLICY DIR`: the independent verifier on artifacts made elsewhere
// (verify_artifacts), and for Linux the review listing held to the byte: seccomp.txt must
// be exactly what `compile` writes for the policy (issue 19 §3). The verifier already
// proves that the listing says nothing false of seccomp.bpf; this leaves no word of it
// free, so a listing that passes is the one zpolicy prints, of a program the listing
// check found to be the one in seccomp.bpf.
std::vector<ir::Diagnostic> verify_given_artifacts(const ir::Resolved& r, Target target,
                                                   const std::vector<Artifact>& artifacts);

}  // namespace zpolicy::compiler
