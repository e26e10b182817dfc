#include "compiler/resolve/sandbox_mounts.hpp"

#include <algorithm>

#include "ir/path.hpp"

namespace zpolicy::compiler {

std::vector<MountEntry> unverified_mounts(const SandboxMountRules& rules,
                                          const std::vector<MountEntry>& judged,
                                          const std::vector<MountEntry>& sandbox) {
  std::vector<MountEntry> out;
  for (const auto& m : sandbox) {
    const bool below = std::any_of(rules.roots.begin(), rules.roots.end(),
                                   [&](const auto& r) { return ir::path_within(r, m.point); });
    if (!below) continue;
    if (std::find(rules.destinations.begin(), rules.destinations.end(), m.point) !=
        rules.destinations.end())
      continue;
    if (std::any_of(rules.bwrap_trees.begin(), rules.bwrap_trees.end(),
                    [&](const auto& t) { return t != m.point && ir::path_within(t, m.point); }))
      continue;
    const bool listed = std::any_of(judged.begin(), judged.end(), [&](const MountEntry& e) {
      return e.point == m.point && same_mount(e, m) && (m.read_only || !e.read_only);
    });
    if (!listed) out.push_back(m);
  }
  return out;
}

}  // namespace zpolicy::compiler
