#include "compiler/check.hpp"

#include "compiler/lint/syscall_lint.hpp"
#include "compiler/pipeline.hpp"

namespace zpolicy::compiler {

std::vector<CheckItem> check_policy(const ir::Policy& policy, const LintContext& ctx) {
  std::vector<CheckItem> items;
  for (const auto& l : lint_policy(policy, ctx))
    items.push_back({l.id, l.severity, l.loc, l.message, {}});
  ir::Diagnostics syscall_diags;
  lint_syscall_rules(policy.syscalls, syscall_diags);
  for (const auto& d : syscall_diags.all()) items.push_back({"ZP100", d.severity, d.loc, d.message, {}});

  for (ir::Mode mode : {ir::Mode::ReadOnly, ir::Mode::WorkspaceWrite}) {
    if (!ir::narrower_or_equal(mode, policy.mode.value)) continue;
    for (auto target : {Target::Linux, Target::Macos}) {
      std::vector<std::optional<HostFacts>> bindings = {std::nullopt};
      if (ctx.host && target == Target::Linux) bindings.push_back(ctx.host);
      const std::string rule_id = std::string("verify-") + to_string(target);
      for (const auto& binding : bindings) {
        ir::Diagnostics cd;
        auto compiled = compile(policy, target, mode, binding, cd);
        for (const auto& d : cd.all()) items.push_back({rule_id, d.severity, d.loc, d.message, {}});
        if (!compiled) continue;
        for (const auto& f : compiled->findings)
          items.push_back({rule_id, ir::Severity::Error, f.rule,
                           std::string(ir::to_string(mode)) + (binding ? " bound" : "") + ": " +
                               f.kind + ": " + f.probe + ": expected " + f.expected +
                               ", artifact gives " + f.actual,
                           f.trace});
      }
    }
  }
  return items;
}

bool has_errors(const std::vector<CheckItem>& items) {
  for (const auto& i : items)
    if (i.severity == ir::Severity::Error) return true;
  return false;
}

}  // namespace zpolicy::compiler
