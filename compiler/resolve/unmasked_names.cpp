#include "compiler/resolve/unmasked_names.hpp"

#include <algorithm>

#include "ir/path.hpp"

namespace zpolicy::compiler {

std::vector<UnmaskedName> names_the_masks_lack(const ir::Resolved& r,
                                               const std::vector<MountEntry>& before,
                                               const std::vector<MountEntry>& after) {
  std::vector<UnmaskedName> out;
  if (before == after) return out;
  auto look = [&](const ir::ResolvedPath& p, bool deny) {
    if (p.kind == ir::HostKind::Missing || p.kind == ir::HostKind::Unknown) return;
    for (auto& [name, original] : mount_aliases(p.path, after)) {
      const bool reachable =
          deny ? ir::within_any(r.read, name) || ir::within_any(r.write, name)
               : ir::within_any(r.write, name) && !ir::within_any(r.protect, name);
      if (reachable && !ir::within_any(r.deny, name))
        out.push_back({std::move(name), std::move(original), deny});
    }
  };
  for (const auto& d : r.deny) look(d, true);
  for (const auto& p : r.protect) look(p, false);
  std::sort(out.begin(), out.end(), [](const UnmaskedName& a, const UnmaskedName& b) {
    return a.name != b.name ? a.name < b.name : a.original < b.original;
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace zpolicy::compiler
