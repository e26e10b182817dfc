// `run` and `plan`: the command-line form of a run request checked here, then the
// runner, which decides the plan (runner::prepare); run(plan) executes it (runner::execute),
// and `run` of a request is the two.

#include <algorithm>
#include <cctype>
#include <mutex>
#include <sstream>

#include "api/plan.hpp"
#include "api/request.hpp"
#include "ir/diagnostic.hpp"
#include "ir/duration.hpp"
#include "runner/execute.hpp"
#include "runner/run.hpp"
#include "runner/status_file.hpp"
#include "zpolicy/json.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy {
namespace {

// The runner's request with its policy loaded, or nullopt with the reasons printed to
// `messages`.
std::optional<runner::RunRequest> runner_request(const RunRequest& request,
                                                 std::ostream& messages) {
  ir::Diagnostics diags;
  runner::RunRequest req;
  // The workspace is bound by the runner, after its preflight.
  Request policy;
  policy.policy_file = request.policy_file;
  policy.mode = request.mode;
  if (auto loaded = api::load_request(policy, diags)) {
    req.policy = std::move(loaded->policy);
    req.mode = loaded->mode;
  }
  req.policy_path = request.policy_file;
  req.workspace = request.workspace;
  req.accept = request.accept;
  req.command = request.command;
  req.status_file = request.status_file;
  if (request.timeout) {
    auto d = ir::parse_duration(*request.timeout);
    if (auto* ms = std::get_if<std::chrono::milliseconds>(&d))
      req.timeout = *ms;
    else if (std::get<ir::DurationError>(d) == ir::DurationError::Malformed)
      diags.error({"<command line>"}, "invalid --timeout '" + *request.timeout +
                                          "' (expected e.g. 500ms, 120s, 10m, 2h; a bare "
                                          "number is seconds)");
    else
      diags.error({"<command line>"}, "--timeout must be more than 0 and at most 7 days");
  }
  for (const auto& e : request.env) {
    const std::string name = e.substr(0, e.find('='));
    const bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                       std::all_of(name.begin(), name.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                       });
    if (!valid)
      diags.error({"<command line>"}, "invalid --env '" + e +
                                          "' (expected NAME or NAME=VALUE, NAME of letters, "
                                          "digits and '_')");
  }
  req.env = request.env;
  if (diags.has_errors()) {
    messages << diags.str();
    return std::nullopt;
  }
  return req;
}

}  // namespace

int run(const RunRequest& request, std::ostream& messages) {
  return run_with_status(request, messages).exit_code;
}

namespace {

// run(plan) with what the run observed besides the exit code.
RunStatus execute_plan(const Plan& plan, std::ostream& messages) {
  RunStatus status;
  status.exit_code = kExitUsage;
  if (!plan.verified) {
    messages << "zpolicy: run: this plan was not made by plan() in this process, so nothing "
                "says it was verified; nothing ran\n";
    return status;
  }
  Plan shown = plan;
  shown.verified.reset();
  if (!(shown == plan.verified->shown)) {
    messages << "zpolicy: run: the plan was changed after plan() verified it; make a new one "
                "(RunRequest holds what may be chosen); nothing ran\n";
    return status;
  }
  // The supervisor owns this process's signal handlers while it runs.
  static std::mutex one_at_a_time;
  const std::lock_guard lock(one_at_a_time);
  runner::RunReport report;
  status.exit_code = runner::execute(plan.verified->plan, messages, &report);
  for (const auto& r : report.network_refusals)
    status.network_refusals.push_back({r.host, r.port, r.reason, r.detail});
  status.network_refusals_omitted = report.network_refusals_omitted;
  status.nothing_ran = !report.may_have_run;
  return status;
}

}  // namespace

int run(const Plan& plan, std::ostream& messages) {
  return execute_plan(plan, messages).exit_code;
}

RunStatus run_with_status(const RunRequest& request, std::ostream& messages) {
  // Not plan() then run(plan): the runner proves the seccomp program while bwrap starts
  // (docs/run.md "When the seccomp program is proved"), which a plan handed out cannot
  // wait for. Both execute through runner::execute.
  RunStatus status;
  auto req = runner_request(request, messages);
  runner::RunReport report;
  if (req) {
    status.exit_code = runner::run(*req, messages, &report);
  } else {
    status.exit_code = kExitUsage;
    // Nothing ran, so nothing could forge it: the refusal is a status like any other.
    if (request.status_file)
      if (auto file = runner::StatusFile::open(*request.status_file, nullptr, messages);
          auto* opened = std::get_if<runner::StatusFile>(&file))
        report.status_file.emplace(std::move(*opened));
  }
  for (const auto& r : report.network_refusals)
    status.network_refusals.push_back({r.host, r.port, r.reason, r.detail});
  status.network_refusals_omitted = report.network_refusals_omitted;
  status.nothing_ran = !report.may_have_run;
  if (report.status_file) report.status_file->write(run_status_json(status), messages);
  return status;
}

PlanResult plan(const RunRequest& request) {
  PlanResult out;
  std::ostringstream messages;
  auto req = runner_request(request, messages);
  if (!req) {
    out.exit_code = kExitUsage;
    out.messages = messages.str();
    return out;
  }
  auto prepared = runner::prepare(*req, messages);
  out.messages = messages.str();
  if (const int* refused = std::get_if<int>(&prepared)) {
    out.exit_code = *refused;
    return out;
  }
  std::string error;
  out.plan = api::runnable_plan(std::get<compiler::RunPlan>(std::move(prepared)), error);
  if (!out.plan) {
    out.exit_code = kExitInternal;
    out.messages += "zpolicy: " + error + "; no plan\n";
  }
  return out;
}

}  // namespace zpolicy
