// `explain`: one path and operation, the rule the policy applies and what each target's
// compiled artifact does there, answered by the independent evaluators.
#include <algorithm>
#include <filesystem>

#include "api/bound_refusal.hpp"
#include "api/request.hpp"
#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/mount_table.hpp"
#include "compiler/analyzer/probes.hpp"
#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"

namespace zpolicy {
namespace {

namespace fs = std::filesystem;

std::optional<compiler::FsOp> parse_op(const std::string& s) {
  for (auto op : compiler::kAllFsOps)
    if (s == compiler::to_string(op)) return op;
  return std::nullopt;
}

std::string artifact_content(const compiler::Compiled& c, const std::string& name) {
  for (const auto& a : c.artifacts)
    if (a.name == name) return a.content;
  return {};
}

// `text` with a leading `prefix` (a whole component) replaced by `by`.
std::optional<std::string> replace_prefix(const std::string& text, std::string_view prefix,
                                          const std::string& by) {
  if (text == prefix) return by;
  if (text.starts_with(prefix) && text[prefix.size()] == '/') return by + text.substr(prefix.size());
  return std::nullopt;
}

// The path the question names, in the spelling of the artifacts it is asked of. Bound,
// that is the host object the kernel reaches: relative to the current directory, `~` and
// the variables bound, symlinks followed (but not the last one for delete, which removes
// the link itself). Portable, a relative path lies in ${WORKSPACE} and `~` is ${HOME}.
std::optional<std::string> question_path(const std::string& text,
                                         const std::optional<compiler::HostFacts>& host,
                                         compiler::FsOp op, std::vector<std::string>& notes) {
  if (text.empty()) return std::nullopt;
  std::string spelled = text;
  if (auto home = replace_prefix(text, "~", host ? host->home : "${HOME}")) spelled = *home;
  else if (text.front() != '/' && text.front() != '$')
    spelled = (host ? host->cwd : "${WORKSPACE}") + "/" + text;
  if (!host) return spelled;
  for (const auto& [var, value] : {std::pair<std::string_view, const std::string&>{"${WORKSPACE}", host->workspace},
                                   {"${HOME}", host->home},
                                   {"${TMPDIR}", host->tmpdir}})
    if (auto bound = replace_prefix(spelled, var, value)) spelled = *bound;
  if (spelled.front() != '/') return std::nullopt;
  fs::path p = fs::path(spelled).lexically_normal();
  std::error_code ec;
  fs::path reached;
  if (op == compiler::FsOp::Delete && p.has_parent_path() && p != p.root_path()) {
    const fs::path name = p.filename().empty() ? p.parent_path().filename() : p.filename();
    const fs::path dir = fs::weakly_canonical(p.filename().empty() ? p.parent_path().parent_path()
                                                                   : p.parent_path(),
                                              ec);
    reached = dir / name;
  } else {
    reached = fs::weakly_canonical(p, ec);
  }
  if (ec) return p.string();
  if (!fs::exists(fs::symlink_status(reached, ec)))
    notes.push_back(reached.string() +
                    " does not exist on this host: the answer is for the host as it is now");
  std::string out = reached.string();
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  std::string normal = p.string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  if (out != normal) notes.push_back(normal + " is reached through a symlink: answered for " + out);
  return out;
}

// The Linux answer: the policy's intent as the bwrap verifier reads it, then the argv's
// mount plan replayed by the independent evaluator.
ExplainAnswer explain_linux(const compiler::Compiled& c, const compiler::SymbolicPath& path,
                            compiler::FsOp op) {
  ExplainAnswer out;
  out.target = Target::Linux;
  const auto e = compiler::Intent(c.resolved).expect(path, op);
  out.policy = compiler::to_string(e.expect);
  out.rule = e.reason;
  out.line = api::line_of(e.rule);
  auto parsed = compiler::parse_bwrap_args(
      artifact_content(c, "bwrap.args"),
      std::make_shared<compiler::PathTable>(compiler::path_spelling(c.resolved)));
  if (!parsed) {
    out.artifact = "the argv does not parse: " + parsed.error().message;
    return out;
  }
  auto table = compiler::MountTable::replay(*parsed, [](size_t) { return true; });
  if (!table) {
    out.artifact = "bwrap would refuse the argv (line " + std::to_string(table.error().loc.line) +
                   "): " + table.error().message;
    return out;
  }
  auto result = table->access(path, op);
  out.artifact = compiler::to_string(result.outcome);
  out.trace = std::move(result.trace);
  return out;
}

// The analyzer names the precedence models each answer holds under ("last-match/...,
// deny-wins/...: denied by rule 17 ..."); the answer without them.
std::string without_models(const std::string& line) {
  const auto colon = line.find(": ");
  return colon == std::string::npos ? line : line.substr(colon + 2);
}

ExplainAnswer explain_macos(const compiler::Compiled& c, const std::string& path,
                            compiler::FsOp op) {
  ExplainAnswer out;
  out.target = Target::Macos;
  const std::string params_text = artifact_content(c, "params.txt");  // the parameters view it
  const auto params = compiler::parse_params_text(params_text);
  if (!params) {
    out.artifact = "cannot evaluate: " + params.error().message;
    return out;
  }
  // Seatbelt has no single "delete": unlinking and renaming away are file-write-unlink.
  const char* operation =
      op == compiler::FsOp::Delete ? "file-write-unlink" : compiler::to_string(op);
  auto e = compiler::explain_sbpl(c.resolved, artifact_content(c, "profile.sb"), *params, operation,
                                  path);
  if (!e) {
    out.artifact = "cannot evaluate: " + e.error().message;
    return out;
  }
  // The intent the Seatbelt verifier holds the profile to, which is what decides whether
  // the profile passes; it may be stricter than Linux's (a directory above a protected
  // path cannot be renamed away on macOS).
  const auto intent = e->policy.intent;
  out.policy = intent == compiler::Expect::Allow    ? "allowed"
               : intent == compiler::Expect::Either ? "either answer passes verification"
                                                    : "denied";
  out.rule = e->policy.why;
  if (!e->policy.loc.file.empty()) out.line = api::line_of(e->policy.loc);
  out.artifact = e->allowed ? "allowed" : "denied";
  out.models_agree = e->models_agree;
  // The first line holds last-match, the reading `allowed` is.
  if (!e->trace.empty()) out.trace.push_back(without_models(e->trace.front()));
  if (!e->models_agree) out.models = std::move(e->trace);
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
  auto loaded = api::load_request(request, diags);
  std::optional<compiler::SymbolicPath> path;
  {
    // Without a loaded request the path is still checked, as a portable one.
    const auto spelled = question_path(path_text, loaded ? loaded->host : std::nullopt,
                                       op.value_or(compiler::FsOp::Write), out.notes);
    // Bound, the question is a host path, and a name in it may start with "${" (H17-10).
    if (spelled)
      path = compiler::SymbolicPath::parse(*spelled, loaded && loaded->host
                                                         ? compiler::PathSpelling::Bound
                                                         : compiler::PathSpelling::Portable);
    // '$HOME/x' quoted on a shell line: the variable was meant, and the question would be
    // about a name no host has.
    const bool shell_variable = path_text.size() > 1 && path_text[0] == '$' && path_text[1] != '{';
    if (!path)
      diags.error({"<command line>"},
                  "invalid path '" + path_text +
                      (shell_variable
                           ? "' (a variable is spelled ${NAME}: ${HOME}, ${WORKSPACE} or "
                             "${TMPDIR}; a name that starts with '$' is ./$…)"
                           : "' (a path, relative to the current directory, or starting with ~, "
                             "${WORKSPACE}, ${HOME} or ${TMPDIR}; no '..' in a portable one)"));
  }
  if (!loaded || diags.has_errors()) {
    api::add_all(out.diagnostics, diags);
    out.notes.clear();
    out.exit_code = kExitUsage;
    return out;
  }
  // A bound policy is a policy for this host, and this host is Linux.
  if (loaded->host && !target) targets = {compiler::Target::Linux};
  // Seatbelt names no longer path (the verifier's limit on policy paths), and answering
  // for one would cost the square of its depth.
  if (std::find(targets.begin(), targets.end(), compiler::Target::Macos) != targets.end() &&
      path->str().size() > compiler::kSbplMaxPathBytes) {
    diags.error({"<command line>"}, "the path is " + std::to_string(path->str().size()) +
                                        " bytes; macOS names paths of at most " +
                                        std::to_string(compiler::kSbplMaxPathBytes) +
                                        " (MAXPATHLEN): explain it with --target linux");
    api::add_all(out.diagnostics, diags);
    out.notes.clear();
    out.exit_code = kExitUsage;
    return out;
  }
  if (auto refused = api::bound_refusal(*loaded, request, out.notes)) return std::move(*refused);

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
        "') are expanded only against a host; bind to a workspace for what they match there");
  for (auto t : targets) {
    auto c = compiler::compile(policy, t, loaded->mode, loaded->host, diags);
    if (!c) {
      api::add_all(out.diagnostics, diags);
      out.exit_code = kExitUsage;
      return out;
    }
    // Refused before emission (compiler::inexpressible): no artifact to answer from.
    if (c->artifacts.empty()) {
      for (const auto& f : c->findings) out.diagnostics.push_back(api::diagnostic_of(f));
      out.exit_code = kExitVerify;
      return out;
    }
    out.answers.push_back(t == compiler::Target::Linux ? explain_linux(*c, *path, *op)
                                                       : explain_macos(*c, path->str(), *op));
  }
  return out;
}

}  // namespace zpolicy
