#pragma once

// The runner's plan as the public Plan: what `zpolicy plan` prints. Internal to api/.

#include <optional>
#include <string>

#include "compiler/run_plan.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy::detail {

// Behind a public Plan: the runner's plan it was made from, which run(plan) executes, and
// the public fields as plan() made them, which a plan handed to run(plan) must still have.
struct VerifiedRun {
  compiler::RunPlan plan;
  Plan shown;
};

}  // namespace zpolicy::detail

namespace zpolicy::api {

// Everything an executor needs, nothing left to derive: for sandbox-exec the argv the
// runner would build from the profile and parameters (runner/macos_argv). nullopt with
// `error` set when that argv cannot be built (the runner would refuse with exit 125).
std::optional<Plan> public_plan(const compiler::RunPlan& p, std::string& error);

// The public plan with its verified plan attached (Plan::verified), for run(plan); the
// runner's plan starts the backend in the plan's `cwd`.
std::optional<Plan> runnable_plan(compiler::RunPlan p, std::string& error);

}  // namespace zpolicy::api
