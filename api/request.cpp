#include "api/request.hpp"

#include "compiler/frontend/default_policy.hpp"
#include "compiler/frontend/policy_parser.hpp"

namespace zpolicy::api {

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

ir::Severity severity_of(Severity s) {
  switch (s) {
    case Severity::Note:
      return ir::Severity::Note;
    case Severity::Warning:
      return ir::Severity::Warning;
    case Severity::Error:
      return ir::Severity::Error;
  }
  return ir::Severity::Error;
}

Diagnostic diagnostic_of(const ir::Diagnostic& d) {
  return {d.code, severity_of(d.severity), d.loc.file, d.loc.line, d.loc.col, d.message, d.trace};
}

void add_all(std::vector<Diagnostic>& out, const ir::Diagnostics& diags) {
  for (const auto& d : diags.all()) out.push_back(diagnostic_of(d));
}

PolicyLine line_of(const ir::SourceLoc& loc) { return {loc.file, loc.line, loc.col}; }

compiler::Target target_of(Target t) {
  return t == Target::Linux ? compiler::Target::Linux : compiler::Target::Macos;
}

namespace {

std::optional<ir::Policy> load(const Request& req, ir::Diagnostics& diags) {
  if (req.policy_file) return compiler::load_policy_file(*req.policy_file, diags);
  if (req.policy_text) return compiler::parse_policy(*req.policy_text, req.policy_name, diags);
  return compiler::default_policy();
}

}  // namespace

std::optional<ir::Mode> requested_mode(const std::optional<std::string>& name,
                                       ir::Diagnostics& diags) {
  if (!name) return std::nullopt;
  auto mode = ir::parse_mode(*name);
  if (!mode)
    diags.error({"<command line>"}, "invalid --mode '" + *name +
                                        "' (expected read-only, workspace-write or "
                                        "danger-full-access)");
  return mode;
}

std::optional<Loaded> load_request(const Request& req, ir::Diagnostics& diags) {
  const auto requested = requested_mode(req.mode, diags);
  auto policy = load(req, diags);
  std::optional<compiler::HostFacts> host;
  if (policy && !diags.has_errors() && req.workspace)
    host = compiler::host_facts(*req.workspace, diags);
  std::optional<ir::Mode> mode;
  if (policy && !diags.has_errors()) mode = compiler::effective_mode(*policy, requested, diags);
  if (!mode || diags.has_errors()) return std::nullopt;
  return Loaded{std::move(*policy), *mode, std::move(host)};
}

}  // namespace zpolicy::api
