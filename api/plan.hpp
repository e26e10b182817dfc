#pragma once

// The runner's plan as the public Plan: what `zpolicy plan` prints. Internal to api/.

#include <optional>
#include <string>

#include "compiler/run_plan.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy::api {

// Everything an executor needs, nothing left to derive: for sandbox-exec the argv the
// runner would build from the profile and parameters (runner/macos_argv). nullopt with
// `error` set when that argv cannot be built (the runner would refuse with exit 125).
std::optional<Plan> public_plan(const compiler::RunPlan& p, std::string& error);

}  // namespace zpolicy::api
