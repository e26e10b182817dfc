#pragma once

#include <string>
#include <vector>

#include "compiler/pipeline.hpp"
#include "compiler/analyzer/finding.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// Checks every artifact of a target against the resolved policy with the independent
// evaluators (bwrap mount-table replay, BPF interpreter, SBPL evaluator); never the
// emitters. Empty: every probe agrees. A missing or unreadable artifact is a finding.
// `set` says which artifacts must be there: a compiled directory has all of them, a run
// hands over only the enforced ones.
std::vector<Finding> verify_artifacts(const ir::Resolved& intent, Target target,
                                      const std::vector<Artifact>& artifacts,
                                      ir::ArtifactSet set = ir::ArtifactSet::All);

// The names of a target's artifact files (DESIGN.md "Artifact files").
std::vector<std::string> artifact_names(Target target);

}  // namespace zpolicy::compiler
