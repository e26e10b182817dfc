// `run` and `plan`: the command-line form of a run request checked here, then the
// runner, which decides the plan (runner::prepare) and executes it.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <sstream>

#include "api/request.hpp"
#include "compiler/resolve/resolve.hpp"
#include "ir/diagnostic.hpp"
#include "ir/duration.hpp"
#include "ir/path.hpp"
#include "runner/run.hpp"
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

std::string current_directory() {
  char buf[PATH_MAX];
  return getcwd(buf, sizeof buf) ? std::string(buf) : std::string();
}

// The directories bwrap needs to exist, each with the writable root it is created from
// (runner/placeholders.cpp walks them the same way).
std::vector<Placeholder> placeholders_of(const ir::Resolved& verified) {
  ir::Resolved r = verified;
  std::vector<Placeholder> out;
  for (const auto* p : compiler::placeholder_candidates(r)) {
    const ir::ResolvedPath* root = nullptr;
    for (const auto& w : r.write)
      if (ir::path_within(w.path, p->path)) root = &w;
    if (root) out.push_back({p->path, root->path});
  }
  return out;
}

Plan public_plan(const compiler::RunPlan& p) {
  Plan out;
  out.backend = compiler::to_string(p.backend);
  out.exe = p.exe;
  out.argv = p.argv;
  out.env = p.env;
  // The runner starts the backend where it was started itself.
  out.cwd = p.cwd.empty() ? current_directory() : p.cwd;
  for (const auto& f : p.fds) out.fds.push_back({f.child_fd, f.artifact, f.bytes});
  if (p.status_fd >= 0) out.status_fd = p.status_fd;
  if (p.backend == compiler::Backend::Bwrap && p.verified) {
    out.placeholders = placeholders_of(*p.verified);
    for (const auto& b : p.bind_sources) {
      PlanBind bind{b.fd, b.path, std::nullopt, std::nullopt};
      for (const auto* list : {&p.verified->read, &p.verified->write, &p.verified->pin,
                               &p.verified->protect})
        for (const auto& r : *list)
          if (r.path == b.path && r.identity && !bind.dev) {
            bind.dev = r.identity->dev;
            bind.ino = r.identity->ino;
          }
      out.binds.push_back(std::move(bind));
    }
  }
  if (p.timeout) out.timeout_ms = p.timeout->count();
  out.sbpl_profile = p.sbpl_profile;
  out.sbpl_params = p.sbpl_params;
  for (const auto& l : p.accepted) out.accepted.push_back(l.str());
  return out;
}

}  // namespace

int run(const RunRequest& request, std::ostream& messages) {
  auto req = runner_request(request, messages);
  if (!req) return kExitUsage;
  return runner::run(*req, messages);
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
  out.plan = public_plan(std::get<compiler::RunPlan>(prepared));
  return out;
}

}  // namespace zpolicy
