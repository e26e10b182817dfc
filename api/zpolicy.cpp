#include "zpolicy/zpolicy.hpp"

#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "api/request.hpp"
#include "compiler/analyzer/verify.hpp"
#include "compiler/backend_paths.hpp"
#include "compiler/check.hpp"
#include "compiler/frontend/default_policy.hpp"
#include "compiler/lint/lint_catalog.hpp"
#include "compiler/pipeline.hpp"

namespace zpolicy {
namespace {

std::optional<std::string> canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

// The policy file as it is opened: absolute, but with its symlinks, which the lints follow
// one by one (ZP004).
std::string opened_path(const std::string& path) {
  if (path.starts_with("/")) return path;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + path : path;
}

}  // namespace

std::string Diagnostic::str() const {
  ir::Diagnostic located{code, api::severity_of(severity), {file, line, column}, message};
  std::string out = located.str() + "\n";
  for (const auto& t : trace) out += "    " + t + "\n";
  return out;
}

const char* to_string(Target target) { return compiler::to_string(api::target_of(target)); }

std::optional<Target> parse_target(const std::string& name) {
  auto t = compiler::parse_target(name);
  if (!t) return std::nullopt;
  return *t == compiler::Target::Linux ? Target::Linux : Target::Macos;
}

std::vector<std::string> artifact_names(Target target) {
  std::vector<std::string> out;
  for (const auto& n : compiler::artifact_names(api::target_of(target))) out.emplace_back(n);
  return out;
}

std::string default_policy_text() { return compiler::default_policy_text(); }

TextResult default_policy_text(const std::optional<std::string>& mode_name) {
  TextResult result;
  ir::Diagnostics diags;
  Request request;
  request.mode = mode_name;
  const auto loaded = api::load_request(request, diags);
  api::add_all(result.diagnostics, diags);
  if (!loaded) {
    result.exit_code = kExitUsage;
    return result;
  }
  result.text = compiler::default_policy_text(loaded->mode);
  return result;
}

Result validate(const Request& request) {
  Result result;
  ir::Diagnostics diags;
  if (!api::load_request(request, diags)) result.exit_code = kExitUsage;
  api::add_all(result.diagnostics, diags);
  return result;
}

Result compile(const Request& request, Target target) {
  Result result;
  ir::Diagnostics diags;
  auto loaded = api::load_request(request, diags);
  std::optional<compiler::Compiled> compiled;
  if (loaded)
    compiled = compiler::compile(loaded->policy, api::target_of(target), loaded->mode,
                                 loaded->host, diags);
  api::add_all(result.diagnostics, diags);
  if (!compiled || diags.has_errors()) {
    result.exit_code = kExitUsage;
    return result;
  }
  for (const auto& f : compiled->findings) result.diagnostics.push_back(api::diagnostic_of(f));
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
  ir::Diagnostics diags;
  auto loaded = api::load_request(request, diags);
  std::optional<ir::Resolved> resolved;
  if (loaded)
    resolved = compiler::resolve_for_target(loaded->policy, api::target_of(target), loaded->mode,
                                            loaded->host, diags);
  api::add_all(result.diagnostics, diags);
  if (!resolved || diags.has_errors()) {
    result.exit_code = kExitUsage;
    return result;
  }
  std::vector<compiler::Artifact> arts;
  for (const auto& a : artifacts) arts.push_back({a.name, a.content, a.binary});
  const auto findings = compiler::verify_given_artifacts(*resolved, api::target_of(target), arts);
  for (const auto& f : findings) result.diagnostics.push_back(api::diagnostic_of(f));
  if (!findings.empty()) result.exit_code = kExitVerify;
  return result;
}

Result check(const Request& request) {
  Result result;
  ir::Diagnostics diags;
  auto loaded = api::load_request(request, diags);
  api::add_all(result.diagnostics, diags);
  if (!loaded) {
    result.exit_code = kExitUsage;
    return result;
  }
  compiler::LintContext ctx{
      loaded->host,
      request.policy_file ? std::optional(opened_path(*request.policy_file)) : std::nullopt,
      canonical("/proc/self/exe"), std::string(compiler::kBwrapPath), {}};
  const auto items = compiler::check_policy(loaded->policy, ctx);
  for (const auto& i : items) result.diagnostics.push_back(api::diagnostic_of(i));
  if (compiler::has_errors(items)) result.exit_code = kExitVerify;
  return result;
}

std::vector<LintRule> lint_rules() {
  std::vector<LintRule> out;
  for (const auto& r : compiler::lint_catalog())
    out.push_back({std::string(r.id), std::string(r.name), std::string(r.summary),
                   std::string(r.description), api::severity_of(r.level)});
  return out;
}

}  // namespace zpolicy
