#include "compiler/review/policy_diff.hpp"

#include <algorithm>

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

}  // namespace

std::vector<Difference> diff_policies(const ModedPolicy& before, const ModedPolicy& after) {
  const ir::Resolved a = resolve_portable(before.policy, before.mode);
  const ir::Resolved b = resolve_portable(after.policy, after.mode);
  std::vector<Difference> both = diff_process({before.policy, a}, {after.policy, b});
  for (auto& d : diff_network(a, b)) both.push_back(std::move(d));
  for (auto& d : diff_paths(a, b)) both.push_back(std::move(d));
  for (auto& d : both) d.targets = {ir::Target::Linux, ir::Target::Macos};
  for (auto& d : diff_syscalls({a.syscalls, default_loc(before.policy)},
                               {b.syscalls, default_loc(after.policy)})) {
    d.targets = {ir::Target::Linux};
    both.push_back(std::move(d));
  }
  std::stable_sort(both.begin(), both.end(), [](const Difference& x, const Difference& y) {
    return static_cast<int>(x.area) < static_cast<int>(y.area);
  });
  return both;
}

std::vector<Escape> escapes(const ir::Policy& policy, const ir::Policy& ceiling) {
  std::vector<Escape> out;
  for (ir::Mode mode : {ir::Mode::ReadOnly, ir::Mode::WorkspaceWrite, ir::Mode::DangerFullAccess}) {
    if (!ir::narrower_or_equal(mode, policy.mode.value)) continue;
    for (auto& d : diff_policies({ceiling, ceiling.mode.value}, {policy, mode}))
      if (d.direction == Direction::Widening) out.push_back({mode, std::move(d)});
  }
  return out;
}

}  // namespace zpolicy::compiler::review
