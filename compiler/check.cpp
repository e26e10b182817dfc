#include "compiler/check.hpp"

#include "compiler/lint/syscall_lint.hpp"
#include "compiler/pipeline.hpp"

namespace zpolicy::compiler {

std::vector<ir::Diagnostic> check_policy(const ir::Policy& policy, const LintContext& ctx) {
  std::vector<ir::Diagnostic> items = lint_policy(policy, ctx);
  ir::Diagnostics syscall_diags;
  lint_syscall_rules(policy.syscalls, syscall_diags);
  for (auto d : syscall_diags.all()) {
    d.code = kSyscallLintId;
    items.push_back(std::move(d));
  }

  for (ir::Mode mode : {ir::Mode::ReadOnly, ir::Mode::WorkspaceWrite}) {
    if (!ir::narrower_or_equal(mode, policy.mode.value)) continue;
    for (auto target : {Target::Linux, Target::Macos}) {
      std::vector<std::optional<HostFacts>> bindings = {std::nullopt};
      if (ctx.host && target == Target::Linux) bindings.push_back(ctx.host);
      const std::string rule_id = std::string("verify-") + to_string(target);
      for (const auto& binding : bindings) {
        ir::Diagnostics cd;
        auto compiled = compile(policy, target, mode, binding, cd);
        for (auto d : cd.all()) {
          d.code = rule_id;
          items.push_back(std::move(d));
        }
        if (!compiled) continue;
        for (auto f : compiled->findings) {
          f.message = std::string(ir::to_string(mode)) + (binding ? " bound" : "") + ": " +
                      f.disagreement();
          items.push_back(std::move(f));
        }
      }
    }
  }
  return items;
}

bool has_errors(const std::vector<ir::Diagnostic>& items) {
  for (const auto& i : items)
    if (i.severity == ir::Severity::Error) return true;
  return false;
}

}  // namespace zpolicy::compiler
