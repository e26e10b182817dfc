// `explain`: one path and operation, the rule the policy applies and what each target's
// compiled artifact does there, answered by the independent evaluators.
#include "api/request.hpp"
#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/mount_table.hpp"
#include "compiler/analyzer/probes.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"

namespace zpolicy {
namespace {

std::optional<compiler::FsOp> parse_op(const std::string& s) {
  for (auto op : compiler::kAllFsOps)
    if (s == compiler::to_string(op)) return op;
  return std::nullopt;
}

std::string artifact(const compiler::Compiled& c, const std::string& name) {
  for (const auto& a : c.artifacts)
    if (a.name == name) return a.content;
  return {};
}

// The Linux answer: the policy's intent as the bwrap verifier reads it, then the argv's
// mount plan replayed by the independent evaluator.
ExplainAnswer explain_linux(const compiler::Compiled& c, const compiler::SymbolicPath& path,
                            compiler::FsOp op) {
  ExplainAnswer out;
  out.target = Target::Linux;
  const auto e = compiler::Intent(c.resolved).expect(path, op);
  out.policy = std::string(compiler::to_string(e.expect)) + " — " + e.reason + " (" +
               e.rule.str() + ")";
  auto parsed = compiler::parse_bwrap_args(artifact(c, "bwrap.args"));
  if (!parsed.argv) {
    out.artifact = "the argv does not parse: " + parsed.error->message;
    return out;
  }
  auto table = compiler::MountTable::replay(*parsed.argv, [](size_t) { return true; });
  if (auto* err = std::get_if<compiler::MountTable::ReplayError>(&table)) {
    out.artifact = "bwrap would refuse the argv (line " + std::to_string(err->line) +
                   "): " + err->message;
    return out;
  }
  auto result = std::get<compiler::MountTable>(table).access(path, op);
  out.artifact = compiler::to_string(result.outcome);
  out.trace = std::move(result.trace);
  return out;
}

ExplainAnswer explain_macos(const compiler::Compiled& c, const std::string& path,
                            compiler::FsOp op) {
  ExplainAnswer out;
  out.target = Target::Macos;
  std::string error;
  const std::string params_text = artifact(c, "params.txt");  // the parameters view it
  auto params = compiler::parse_params_text(params_text, &error);
  // Seatbelt has no single "delete": unlinking and renaming away are file-write-unlink.
  const char* operation =
      op == compiler::FsOp::Delete ? "file-write-unlink" : compiler::to_string(op);
  std::optional<compiler::SbplExplanation> e;
  if (params)
    e = compiler::explain_sbpl(c.resolved, artifact(c, "profile.sb"), *params, operation, path,
                               &error);
  if (!e) {
    out.artifact = "cannot evaluate: " + error;
    return out;
  }
  // The intent the Seatbelt verifier holds the profile to, which is what decides whether
  // the profile passes; it may be stricter than Linux's (a directory above a protected
  // path cannot be renamed away on macOS).
  const auto intent = e->policy.intent;
  out.policy = std::string(intent == compiler::Expect::Allow    ? "allowed"
                           : intent == compiler::Expect::Either ? "either answer passes verification"
                                                                : "denied") +
               " — " + e->policy.why;
  if (!e->policy.loc.file.empty()) out.policy += " (" + e->policy.loc.str() + ")";
  out.artifact = std::string(e->allowed ? "allowed" : "denied") +
                 (e->models_agree ? "" : " (precedence models disagree)");
  out.trace = std::move(e->trace);
  return out;
}

}  // namespace

Explanation explain(const Request& request, const std::string& path_text,
                    const std::string& operation, const std::optional<std::string>& target) {
  Explanation out;
  ir::Diagnostics diags;
  auto op = parse_op(operation);
  if (!op) diags.error({"<command line>"}, "invalid --op (expected read, write, create or delete)");
  std::vector<compiler::Target> targets = {compiler::Target::Linux, compiler::Target::Macos};
  if (target) {
    auto t = compiler::parse_target(*target);
    if (!t) diags.error({"<command line>"}, "invalid --target (expected linux or macos)");
    else targets = {*t};
  }
  auto path = compiler::SymbolicPath::parse(path_text);
  if (!path)
    diags.error({"<command line>"}, "invalid path '" + path_text +
                                        "' (absolute, or starting with ${WORKSPACE}, ${HOME}, ${TMPDIR})");
  auto loaded = api::load_request(request, diags);
  if (!loaded || diags.has_errors()) {
    api::add_all(out.diagnostics, diags);
    out.exit_code = kExitUsage;
    return out;
  }
  // A bound policy is a policy for this host, and this host is Linux.
  if (loaded->host && !target) targets = {compiler::Target::Linux};

  out.query = std::string(compiler::to_string(*op)) + " " + path->str();
  // Portable output names a pattern as one symbolic entry, which the answers compare as
  // text: say so rather than let "allowed" stand for a matched path.
  const auto& policy = loaded->policy;
  if (!loaded->host && (!policy.protect_patterns.empty() || !policy.deny_patterns.empty()))
    out.notes.push_back(
        "patterns (e.g. '" +
        (policy.protect_patterns.empty() ? policy.deny_patterns : policy.protect_patterns)
            .front()
            .value.str() +
        "') are expanded only against a host; add --workspace DIR for what they match there");
  for (auto t : targets) {
    auto c = compiler::compile(policy, t, loaded->mode, loaded->host, diags);
    if (!c) {
      api::add_all(out.diagnostics, diags);
      out.exit_code = kExitUsage;
      return out;
    }
    out.answers.push_back(t == compiler::Target::Linux ? explain_linux(*c, *path, *op)
                                                       : explain_macos(*c, path->str(), *op));
  }
  return out;
}

}  // namespace zpolicy
