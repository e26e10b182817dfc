#include "compiler/resolve/mount_objects.hpp"

#include <algorithm>

#include "ir/path.hpp"

namespace zpolicy::compiler {

std::vector<std::string> mount_points_within(const std::vector<std::string>& roots,
                                             const std::vector<MountEntry>& table) {
  std::vector<std::string> out;
  for (const auto& m : table)
    if (std::any_of(roots.begin(), roots.end(),
                    [&](const std::string& r) { return ir::path_within(r, m.point); }))
      out.push_back(m.point);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<std::string> first_mount_changed(const std::vector<MountObject>& judged,
                                               const std::vector<MountObject>& now) {
  auto j = judged.begin();
  auto n = now.begin();
  while (j != judged.end() || n != now.end()) {
    if (n == now.end() || (j != judged.end() && j->point < n->point))
      return "'" + j->point + "' (no longer a mount point)";
    if (j == judged.end() || n->point < j->point)
      return "'" + n->point + "' (mounted since the policy was resolved)";
    // A point the table lists and nobody could look up shows something unknown, on
    // either side: never the same object (red team A14B-8).
    if (!j->found || !n->found)
      return "'" + j->point + "' (" +
             (j->found || n->found ? "looked up in one namespace only" : "could not be looked up") +
             ")";
    if (!(*j == *n)) {
      const char* why = j->dev != n->dev || j->ino != n->ino ? "another directory shows there"
                        : j->fs_type != n->fs_type || j->fs_id != n->fs_id
                            ? "another filesystem shows there"
                            : "mounted with other access";
      return "'" + j->point + "' (" + why + ")";
    }
    ++j;
    ++n;
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
