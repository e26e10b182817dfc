#include "runner/state_dir_exposure.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "ir/path.hpp"

namespace zpolicy::runner {
namespace {

// Whether two names show the same object now (a later mount may cover a name the table
// still lists).
bool same_object(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

const ir::ResolvedPath* root_holding(const std::vector<ir::ResolvedPath>& roots,
                                     const std::string& name) {
  for (const auto& r : roots)
    if (ir::path_within(r.path, name)) return &r;
  return nullptr;
}

}  // namespace

std::string state_dir_exposed(const ir::Resolved& resolved, const std::string& dir,
                              const std::vector<compiler::MountEntry>& mounts) {
  char buf[PATH_MAX];
  // Unnamed, it cannot be checked: refuse rather than trust it.
  if (!realpath(dir.c_str(), buf)) return dir + " (which cannot be resolved)";
  if (mounts.empty()) return dir + " (the host's mount table cannot be read)";
  // A name is seen at the same path inside: roots are bound where they are. Every name in a
  // writable root is refused; through a read root too the sandbox could flock the lock and
  // stall every other run (red team A11B-3): a name there no deny root masks is refused.
  for (const auto& [name, original] : compiler::mount_aliases(buf, mounts)) {
    if (!same_object(original, name)) continue;
    if (const auto* w = root_holding(resolved.write, name))
      return name + " (in writable root " + w->path + ")";
    if (root_holding(resolved.deny, name)) continue;
    if (const auto* rd = root_holding(resolved.read, name))
      return name + " (in read root " + rd->path + ")";
  }
  return "";
}

std::string usual_state_dir_makeable(const ir::Resolved& resolved, const std::string& usual,
                                     const std::vector<compiler::MountEntry>& mounts) {
  const std::string spelled = usual.substr(0, std::max<size_t>(usual.rfind('/'), 1));
  char buf[PATH_MAX];
  // A /tmp that is a symlink is judged where it leads, as the writable roots are.
  if (!realpath(spelled.c_str(), buf)) return spelled + " (which cannot be resolved)";
  const std::string parent = buf;
  if (const auto* w = root_holding(resolved.write, parent))
    return parent + " (writable root " + w->path + ")";
  if (mounts.empty()) return parent + " (the host's mount table cannot be read)";
  // Only a name of the parent itself (or of a directory above it) can make the usual name;
  // a part of the parent mounted elsewhere cannot.
  for (const auto& [name, original] : compiler::mount_aliases(parent, mounts)) {
    if (original != parent || !same_object(original, name)) continue;
    if (const auto* w = root_holding(resolved.write, name))
      return name + ", the host's other name of " + parent + " (in writable root " + w->path + ")";
  }
  return "";
}

}  // namespace zpolicy::runner
