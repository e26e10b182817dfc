// `diff` and `check --within`: two policies compared by meaning (compiler/review).
#include "api/request.hpp"
#include "compiler/review/artifact_diff.hpp"
#include "compiler/review/policy_diff.hpp"

namespace zpolicy {
namespace {

Difference public_of(const compiler::review::Difference& d) {
  Difference out;
  for (auto t : d.targets) out.targets.push_back(t == ir::Target::Linux ? Target::Linux : Target::Macos);
  out.area = compiler::review::to_string(d.area);
  out.subject = d.subject;
  out.path_class = d.path_class;
  out.operations = d.operations;
  out.paths = d.paths;
  out.widening = d.direction == compiler::review::Direction::Widening;
  out.before = {d.before.verdict, d.before.reason, api::line_of(d.before.loc)};
  out.after = {d.after.verdict, d.after.reason, api::line_of(d.after.loc)};
  return out;
}

std::string name_of(const Request& r) {
  if (r.policy_file) return *r.policy_file;
  if (r.policy_text) return r.policy_name;
  return ir::kBuiltinFile;
}

// A review that cannot resolve a policy (compile would refuse it too): exit 2, its reasons.
DiffResult refused_diff(DiffResult& out, const ir::Diagnostics& diags) {
  api::add_all(out.diagnostics, diags);
  out.exit_code = kExitUsage;
  return out;
}

// Both policies, or the reasons either does not load (exit 2).
bool load_both(const Request& first, const Request& second, DiffResult& out,
               std::optional<api::Loaded>& a, std::optional<api::Loaded>& b) {
  ir::Diagnostics diags;
  a = api::load_request(first, diags);
  b = api::load_request(second, diags);
  if (a && b && !diags.has_errors()) return true;
  refused_diff(out, diags);
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
  ir::Diagnostics diags;
  const auto differences =
      compiler::review::diff_policies({a->policy, a->mode}, {b->policy, b->mode}, diags);
  if (!differences) return refused_diff(out, diags);
  for (const auto& d : *differences) out.differences.push_back(public_of(d));
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
  ir::Diagnostics diags;
  auto found = compiler::review::escapes(narrowed, ceiling_policy, diags);
  if (!found) return refused_diff(out, diags);
  for (auto& e : *found) {
    out.differences.push_back(public_of(e.difference));
    out.differences.back().mode = ir::to_string(e.mode);
  }
  out.exit_code = out.differences.empty() ? kExitOk : kExitVerify;
  return out;
}

DiffResult diff_artifacts(Target target, const std::vector<Artifact>& before,
                          const std::vector<Artifact>& after) {
  DiffResult out;
  out.before = "before";
  out.after = "after";
  auto refuse = [&](std::string file, int line, std::string message) {
    out.diagnostics.push_back({"", Severity::Error, std::move(file), line, 0, std::move(message), {}});
    out.exit_code = kExitUsage;
    return out;
  };
  const std::vector<Artifact>* given[2] = {&before, &after};
  // The side's artifact `name`, or nullptr when it is missing.
  auto find = [&](int side, const char* name) -> const std::string* {
    for (const auto& a : *given[side])
      if (a.name == name) return &a.content;
    return nullptr;
  };
  const auto names = artifact_names(target);
  for (int i = 0; i < 2; ++i)
    for (const auto& name : names)
      if (name != "seccomp.txt" && !find(i, name.c_str()))
        return refuse(i ? out.after : out.before, 0, "no " + name + " to compare");
  std::variant<std::vector<compiler::review::Difference>, compiler::review::ArtifactError> diffs;
  if (target == Target::Linux)
    diffs = compiler::review::diff_linux_artifacts({*find(0, "bwrap.args"), *find(0, "seccomp.bpf")},
                                                   {*find(1, "bwrap.args"), *find(1, "seccomp.bpf")});
  else
    diffs = compiler::review::diff_macos_artifacts({*find(0, "profile.sb"), *find(0, "params.txt")},
                                                   {*find(1, "profile.sb"), *find(1, "params.txt")});
  if (const auto* e = std::get_if<compiler::review::ArtifactError>(&diffs))
    return refuse((e->after ? out.after : out.before) + "/" + e->artifact, e->line, e->message);
  for (const auto& d : std::get<std::vector<compiler::review::Difference>>(diffs)) {
    out.differences.push_back(public_of(d));
    auto& added = out.differences.back();
    added.before.line.file = out.before + "/" + added.before.line.file;
    added.after.line.file = out.after + "/" + added.after.line.file;
  }
  out.exit_code = out.differences.empty() ? kExitOk : kExitDifference;
  return out;
}

}  // namespace zpolicy
