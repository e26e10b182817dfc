#pragma once

#include <string>
#include <vector>

#include "ir/target.hpp"
#include "ir/diagnostic.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// Checks every artifact of a target against the resolved policy with the independent
// evaluators (bwrap mount-table replay, BPF interpreter, SBPL evaluator); never the
// emitters. Empty: every probe agrees. A missing or unreadable artifact is a finding.
// `set` says which artifacts must be there: a compiled directory has all of them, a run
// hands over only the enforced ones.
// `artifacts_from_elsewhere`: made by another tool, edited by hand, checked in (`zpolicy
// verify`), rather than just emitted by this build; a portable macOS profile is then also
// proven with each symbolic root bound inside each other (SbplBindings::EveryNesting).
std::vector<ir::Diagnostic> verify_artifacts(const ir::Resolved& intent, ir::Target target,
                                             const std::vector<ir::Artifact>& artifacts,
                                             ir::ArtifactSet set = ir::ArtifactSet::All,
                                             bool artifacts_from_elsewhere = false);

// What verify_artifacts() would find in any artifacts of `target` for `intent`, because
// the policy itself cannot be expressed there: for macOS a path longer than MAXPATHLEN,
// or more directories above protected paths and deny roots than a profile could name.
// compile() asks before emitting, so such a policy costs no emission (issue 19 §2: the
// profile of a deep path is quadratic in its depth). Empty for Linux.
std::vector<ir::Diagnostic> inexpressible(const ir::Resolved& intent, ir::Target target);

// The Linux artifacts in the two parts bwrap consumes at different times: the mount plan
// (bwrap.args, bwrap.fds), which it acts on as soon as it starts, and the seccomp filter
// (seccomp.bpf, seccomp.txt), which it reads only after the runner releases it
// (--block-fd). verify_artifacts() for Linux is exactly both parts, in this order.
enum class LinuxPart { Mounts, Filter };
std::vector<ir::Diagnostic> verify_linux_part(const ir::Resolved& intent, LinuxPart part,
                                              const std::vector<ir::Artifact>& artifacts,
                                              ir::ArtifactSet set);

// The names of a target's artifact files (DESIGN.md "Artifact files").
std::vector<std::string> artifact_names(ir::Target target);

}  // namespace zpolicy::compiler
