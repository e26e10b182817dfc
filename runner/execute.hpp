#pragma once

#include <ostream>

#include "compiler/run_plan.hpp"
#include "runner/run_report.hpp"

namespace zpolicy::runner {

class HostMountTable;

// Executes a plan built by compiler::plan_confined / plan_unconfined, and nothing else:
// the argv, descriptors and environment it names. For bwrap it first creates the
// placeholders the verified policy assumed (runner/placeholders) and refuses (exit 125,
// nothing started) if the host no longer matches what was verified. Returns the
// command's status, or zpolicy's own exit code (DESIGN.md "Command line"); status
// messages never claim that nothing ran unless bwrap's status stream proves it. What the
// run observed (the proxy's refusals) goes to `report` too, when given. `mounts`: the
// host's mount table the plan was resolved through (prepare), looked at again when bwrap
// has set the sandbox up; none (a plan made earlier) opens one here, and then every
// existing deny root's and protected path's names are looked at again.
int execute(const compiler::RunPlan& plan, std::ostream& err, RunReport* report = nullptr,
            HostMountTable* mounts = nullptr);

}  // namespace zpolicy::runner
