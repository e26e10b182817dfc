#include "runner/state_dir_exposure.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "compiler/resolve/mount_names.hpp"
#include "ir/path.hpp"

namespace zpolicy::runner {

std::string state_dir_exposed(const ir::Resolved& resolved, const std::string& dir) {
  char buf[PATH_MAX];
  // Unnamed, it cannot be checked: refuse rather than trust it.
  if (!realpath(dir.c_str(), buf)) return dir + " (which cannot be resolved)";
  const auto mounts = compiler::read_mountinfo();
  if (mounts.empty()) return dir + " (the host's mount table cannot be read)";
  // A name is seen at the same path inside: roots are bound where they are. Every name in a
  // writable root is refused; through a read root too the sandbox could flock the lock and
  // stall every other run (red team A11B-3): a name there no deny root masks is refused.
  auto under_deny = [&](const std::string& name) {
    return std::any_of(resolved.deny.begin(), resolved.deny.end(),
                       [&](const ir::ResolvedPath& d) { return ir::path_within(d.path, name); });
  };
  for (const auto& [name, original] : compiler::mount_aliases(buf, mounts)) {
    struct stat a, b;
    if (stat(original.c_str(), &a) != 0 || stat(name.c_str(), &b) != 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino)
      continue;
    for (const auto& w : resolved.write)
      if (ir::path_within(w.path, name)) return name + " (in writable root " + w.path + ")";
    if (under_deny(name)) continue;
    for (const auto& rd : resolved.read)
      if (ir::path_within(rd.path, name)) return name + " (in read root " + rd.path + ")";
  }
  return "";
}

}  // namespace zpolicy::runner
