#pragma once

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "compiler/run_plan.hpp"
#include "ir/mode.hpp"
#include "ir/policy.hpp"
#include "runner/run_report.hpp"

namespace zpolicy::runner {

class HostMountTable;

// The policy comes loaded, its mode already checked against its ceiling (by the public
// API's one request loader, api/request.hpp).
struct RunRequest {
  ir::Policy policy;
  ir::Mode mode = ir::Mode::ReadOnly;
  std::optional<std::string> policy_path;  // the file `policy` was read from; none for the default
  std::optional<std::string> workspace;    // default: the current directory
  std::optional<std::chrono::milliseconds> timeout;  // may only shorten the policy's
  // --env: NAME=VALUE sets NAME for this run; NAME alone keeps the caller's NAME too.
  std::vector<std::string> env;
  std::vector<std::string> accept;  // lint IDs accepted for this run (compiler::check_accepted)
  std::vector<std::string> command;
  // `run --status-file`: opened by run() (runner/status_file.hpp) before the command starts,
  // refused when the sandbox could reach it, and handed back in RunReport::status_file.
  std::optional<std::string> status_file;
};

// Everything `run` decides before it starts anything: the policy compiled for this host
// through the pipeline `compile --workspace` uses plus the bound lints
// (compiler::plan_confined), or the unconfined plan danger-full-access and a trusted
// `unavailable: run-unconfined` allow. A refusal is printed to `err` and returned as
// the exit code. `zpolicy plan` prints this (every artifact proved); `run` executes it,
// proving the seccomp program while bwrap starts (compiler::FilterProof). `mounts` (Linux):
// the host's mount table resolution and the lints judge, the one the run's execute()
// looks at again; none: they read /proc/self/mountinfo themselves.
std::variant<compiler::RunPlan, int> prepare(
    const RunRequest& request, std::ostream& err,
    compiler::FilterProof when = compiler::FilterProof::BeforePlan,
    HostMountTable* mounts = nullptr);

// Compiles the policy for this host through the pipeline `compile --workspace` uses
// (resolve, emit, verify) plus the bound lints (compiler::plan_confined), refuses on any
// error-level finding, then executes exactly the verified artifacts (runner::execute).
// Returns the command's status, or one of zpolicy's own exit codes (DESIGN.md "Command
// line"); every failure before the command starts refuses to run it. What the run
// observed goes to `report` too, when given.
int run(const RunRequest& request, std::ostream& err, RunReport* report = nullptr);

}  // namespace zpolicy::runner
