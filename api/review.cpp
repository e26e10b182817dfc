// `diff` and `check --within`: two policies compared by meaning (compiler/review).
#include "api/request.hpp"
#include "compiler/review/policy_diff.hpp"

namespace zpolicy {
namespace {

PolicyLine line_of(const ir::SourceLoc& loc) { return {loc.file, loc.line, loc.col}; }

Difference public_of(const compiler::review::Difference& d) {
  Difference out;
  for (auto t : d.targets) out.targets.push_back(t == ir::Target::Linux ? Target::Linux : Target::Macos);
  out.area = compiler::review::to_string(d.area);
  out.subject = d.subject;
  out.path_class = d.path_class;
  out.operations = d.operations;
  out.paths = d.paths;
  out.widening = d.direction == compiler::review::Direction::Widening;
  out.before = {d.before.verdict, d.before.reason, line_of(d.before.loc)};
  out.after = {d.after.verdict, d.after.reason, line_of(d.after.loc)};
  return out;
}

std::string name_of(const Request& r) {
  if (r.policy_file) return *r.policy_file;
  if (r.policy_text) return r.policy_name;
  return ir::kBuiltinFile;
}

// Both policies, or the reasons either does not load (exit 2).
bool load_both(const Request& first, const Request& second, DiffResult& out,
               std::optional<api::Loaded>& a, std::optional<api::Loaded>& b) {
  ir::Diagnostics diags;
  a = api::load_request(first, diags);
  b = api::load_request(second, diags);
  if (a && b && !diags.has_errors()) return true;
  api::add_all(out.diagnostics, diags);
  out.exit_code = kExitUsage;
  return false;
}

}  // namespace

std::string PolicyLine::str() const {
  if (file.empty() || line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

size_t DiffResult::widenings() const {
  size_t n = 0;
  for (const auto& d : differences) n += d.widening ? 1 : 0;
  return n;
}

DiffResult diff(const Request& before, const Request& after) {
  DiffResult out;
  out.before = name_of(before);
  out.after = name_of(after);
  std::optional<api::Loaded> a, b;
  if (!load_both(before, after, out, a, b)) return out;
  for (const auto& d : compiler::review::diff_policies({a->policy, a->mode}, {b->policy, b->mode}))
    out.differences.push_back(public_of(d));
  out.exit_code = out.differences.empty() ? kExitOk : kExitDifference;
  return out;
}

DiffResult check_within(const Request& policy, const Request& ceiling) {
  DiffResult out;
  out.within = true;
  out.before = name_of(ceiling);
  out.after = name_of(policy);
  std::optional<api::Loaded> p, c;
  if (!load_both(policy, ceiling, out, p, c)) return out;
  // The request's mode narrows the policy, so only its modes up to that one are runs.
  ir::Policy narrowed = p->policy;
  narrowed.mode.value = p->mode;
  ir::Policy ceiling_policy = c->policy;
  ceiling_policy.mode.value = c->mode;
  for (auto& e : compiler::review::escapes(narrowed, ceiling_policy)) {
    out.differences.push_back(public_of(e.difference));
    out.differences.back().mode = ir::to_string(e.mode);
  }
  out.exit_code = out.differences.empty() ? kExitOk : kExitVerify;
  return out;
}

}  // namespace zpolicy
