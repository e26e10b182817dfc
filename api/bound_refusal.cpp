#include "api/bound_refusal.hpp"

#include "compiler/lint/policy_lint.hpp"

namespace zpolicy::api {

std::optional<Explanation> bound_refusal(const Loaded& loaded, const Request& request,
                                         std::vector<std::string>& notes) {
  if (!loaded.host) return std::nullopt;
  compiler::LintContext context;
  context.host = loaded.host;
  if (request.policy_file)
    context.policy_file = request.policy_file->starts_with("/")
                              ? *request.policy_file
                              : loaded.host->cwd + "/" + *request.policy_file;
  // The mode the run would get: --mode read-only makes nothing writable.
  ir::Policy judged = loaded.policy;
  judged.mode.value = loaded.mode;
  Explanation refused;
  std::vector<std::string> other;
  std::string ids;
  for (const auto& l : compiler::lint_policy(judged, context)) {
    if (l.severity != ir::Severity::Error) continue;
    if (l.code == "ZP003" || l.code == "ZP013") {
      refused.diagnostics.push_back(diagnostic_of(l));
      ids += (ids.empty() ? "" : ", ") + l.code;
    } else {
      other.push_back("a run here is refused unless `run --accept " + l.code + "`: " + l.message);
    }
  }
  if (refused.diagnostics.empty()) {
    for (auto& n : other) notes.push_back(std::move(n));
    return std::nullopt;
  }
  ir::Diagnostics why;
  why.error({"<command line>"}, "a run bound to " + loaded.host->workspace + " would be refused (" +
                                    ids +
                                    "), so there is nothing bound to explain; --portable answers "
                                    "for the portable artifacts");
  refused.diagnostics.push_back(diagnostic_of(why.all().front()));
  refused.exit_code = kExitVerify;
  return refused;
}

}  // namespace zpolicy::api
