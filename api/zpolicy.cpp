#include "zpolicy/zpolicy.hpp"

#include <climits>
#include <cstdlib>

#include "compiler/analyzer/verify.hpp"
#include "compiler/backend_paths.hpp"
#include "compiler/check.hpp"
#include "compiler/frontend/default_policy.hpp"
#include "compiler/frontend/policy_parser.hpp"
#include "compiler/pipeline.hpp"

namespace zpolicy {
namespace {

Severity severity_of(ir::Severity s) {
  switch (s) {
    case ir::Severity::Note:
      return Severity::Note;
    case ir::Severity::Warning:
      return Severity::Warning;
    case ir::Severity::Error:
      return Severity::Error;
  }
  return Severity::Error;
}

Diagnostic diagnostic_of(std::string code, ir::Severity s, const ir::SourceLoc& loc,
                         std::string message, std::vector<std::string> trace = {}) {
  return {std::move(code), severity_of(s), loc.file, loc.line, loc.col, std::move(message),
          std::move(trace)};
}

void add_all(Result& result, const ir::Diagnostics& diags) {
  for (const auto& d : diags.all())
    result.diagnostics.push_back(diagnostic_of("", d.severity, d.loc, d.message));
}

// A verification finding, worded as `compile` and `verify` print it.
Diagnostic diagnostic_of(const compiler::Finding& f) {
  return diagnostic_of("verify-" + f.target, ir::Severity::Error, f.rule,
                       f.target + ": " + f.kind + ": " + f.probe + ": expected " + f.expected +
                           ", artifact gives " + f.actual,
                       f.trace);
}

compiler::Target target_of(Target t) {
  return t == Target::Linux ? compiler::Target::Linux : compiler::Target::Macos;
}

std::optional<ir::Policy> load(const Request& req, ir::Diagnostics& diags) {
  if (req.policy_file) return compiler::load_policy_file(*req.policy_file, diags);
  if (req.policy_text) return compiler::parse_policy(*req.policy_text, req.policy_name, diags);
  return compiler::default_policy();
}

struct Loaded {
  ir::Policy policy;
  ir::Mode mode;
  std::optional<compiler::HostFacts> host;
};

// The policy, its effective mode and the host binding, or the located reasons why not
// (recorded in `result`, exit code 2).
std::optional<Loaded> load_request(const Request& req, Result& result) {
  ir::Diagnostics diags;
  std::optional<ir::Mode> requested;
  if (req.mode) {
    requested = ir::parse_mode(*req.mode);
    if (!requested)
      diags.error({"<command line>"}, "invalid mode '" + *req.mode +
                                          "' (expected read-only, workspace-write or "
                                          "danger-full-access)");
  }
  auto policy = load(req, diags);
  std::optional<compiler::HostFacts> host;
  if (policy && !diags.has_errors() && req.workspace)
    host = compiler::host_facts(*req.workspace, diags);
  std::optional<ir::Mode> mode;
  if (policy && !diags.has_errors()) mode = compiler::effective_mode(*policy, requested, diags);
  add_all(result, diags);
  if (!mode || diags.has_errors()) {
    result.exit_code = kExitUsage;
    return std::nullopt;
  }
  return Loaded{std::move(*policy), *mode, std::move(host)};
}

std::optional<std::string> canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

}  // namespace

std::string Diagnostic::str() const {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += std::string(": ") +
         (severity == Severity::Error ? "error" : severity == Severity::Warning ? "warning" : "note") +
         ": " + message;
  if (!code.empty()) out += " [" + code + "]";
  out += "\n";
  for (const auto& t : trace) out += "    " + t + "\n";
  return out;
}

std::string default_policy_text() { return compiler::default_policy_text(); }

Result compile(const Request& request, Target target) {
  Result result;
  auto loaded = load_request(request, result);
  if (!loaded) return result;
  ir::Diagnostics diags;
  auto compiled =
      compiler::compile(loaded->policy, target_of(target), loaded->mode, loaded->host, diags);
  add_all(result, diags);
  if (!compiled || diags.has_errors()) {
    result.exit_code = kExitUsage;
    return result;
  }
  for (const auto& f : compiled->findings) result.diagnostics.push_back(diagnostic_of(f));
  if (!compiled->findings.empty()) {
    result.exit_code = kExitVerify;
    return result;
  }
  for (auto& a : compiled->artifacts)
    result.artifacts.push_back({std::move(a.name), std::move(a.content), a.binary});
  return result;
}

Result verify(const Request& request, Target target, const std::vector<Artifact>& artifacts) {
  Result result;
  auto loaded = load_request(request, result);
  if (!loaded) return result;
  ir::Diagnostics diags;
  auto resolved = compiler::resolve_for_target(loaded->policy, target_of(target), loaded->mode,
                                               loaded->host, diags);
  add_all(result, diags);
  if (!resolved || diags.has_errors()) {
    result.exit_code = kExitUsage;
    return result;
  }
  std::vector<compiler::Artifact> arts;
  for (const auto& a : artifacts) arts.push_back({a.name, a.content, a.binary});
  for (const auto& f : compiler::verify_artifacts(*resolved, target_of(target), arts))
    result.diagnostics.push_back(diagnostic_of(f));
  if (result.diagnostics.size() > diags.all().size()) result.exit_code = kExitVerify;
  return result;
}

Result check(const Request& request) {
  Result result;
  auto loaded = load_request(request, result);
  if (!loaded) return result;
  compiler::LintContext ctx{loaded->host,
                            request.policy_file ? canonical(*request.policy_file) : std::nullopt,
                            canonical("/proc/self/exe"), std::string(compiler::kBwrapPath), {}};
  const auto items = compiler::check_policy(loaded->policy, ctx);
  for (const auto& i : items)
    result.diagnostics.push_back(diagnostic_of(i.rule_id, i.severity, i.loc, i.message, i.detail));
  if (compiler::has_errors(items)) result.exit_code = kExitVerify;
  return result;
}

}  // namespace zpolicy
