#include "compiler/review/policy_diff.hpp"

#include <algorithm>
#include <optional>

#include "compiler/resolve/resolve.hpp"
#include "compiler/review/network_diff.hpp"
#include "compiler/review/path_diff.hpp"
#include "compiler/review/process_diff.hpp"
#include "compiler/review/syscall_diff.hpp"

namespace zpolicy::compiler::review {
namespace {

// The line of the answer a filter gives calls no rule names.
ir::SourceLoc default_loc(const ir::Policy& p) {
  if (p.syscalls.style == ir::SyscallSpec::Style::AllowList && !p.syscalls.action.loc.file.empty())
    return p.syscalls.action.loc;
  return {ir::kBuiltinFile, 0, 0};
}

// The difference of two policies already resolved.
std::vector<Difference> diff_resolved(const ir::Policy& before, const ir::Resolved& a,
                                      const ir::Policy& after, const ir::Resolved& b) {
  std::vector<Difference> both = diff_process({before, a}, {after, b});
  for (auto& d : diff_network(a, b)) both.push_back(std::move(d));
  for (auto& d : diff_paths(a, b)) both.push_back(std::move(d));
  for (auto& d : both) d.targets = {ir::Target::Linux, ir::Target::Macos};
  for (auto& d :
       diff_syscalls({a.syscalls, default_loc(before)}, {b.syscalls, default_loc(after)})) {
    d.targets = {ir::Target::Linux};
    both.push_back(std::move(d));
  }
  std::stable_sort(both.begin(), both.end(), [](const Difference& x, const Difference& y) {
    return static_cast<int>(x.area) < static_cast<int>(y.area);
  });
  return both;
}

}  // namespace

std::optional<std::vector<Difference>> diff_policies(const ModedPolicy& before,
                                                     const ModedPolicy& after,
                                                     ir::Diagnostics& diags) {
  // Both sides, so that a review names every policy it refuses.
  const auto a = resolve_portable(before.policy, before.mode, diags);
  const auto b = resolve_portable(after.policy, after.mode, diags);
  if (!a || !b) return std::nullopt;
  return diff_resolved(before.policy, *a, after.policy, *b);
}

std::optional<std::vector<Escape>> escapes(const ir::Policy& policy, const ir::Policy& ceiling,
                                           ir::Diagnostics& diags) {
  const auto c = resolve_portable(ceiling, ceiling.mode.value, diags);
  std::vector<Escape> out;
  for (ir::Mode mode : {ir::Mode::ReadOnly, ir::Mode::WorkspaceWrite, ir::Mode::DangerFullAccess}) {
    if (!ir::narrower_or_equal(mode, policy.mode.value)) continue;
    // The first mode (read-only, which every policy admits) reports the policy's errors
    // beside the ceiling's.
    const auto p = resolve_portable(policy, mode, diags);
    if (!c || !p) return std::nullopt;
    for (auto& d : diff_resolved(ceiling, *c, policy, *p))
      if (d.direction == Direction::Widening) out.push_back({mode, std::move(d)});
  }
  return out;
}

}  // namespace zpolicy::compiler::review
