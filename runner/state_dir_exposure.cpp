#include "runner/state_dir_exposure.hpp"

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
  // A name is seen at the same path inside: writable roots are bound where they are.
  for (const auto& name : compiler::other_names(buf, mounts))
    for (const auto& w : resolved.write)
      if (ir::path_within(w.path, name)) return name + " (in writable root " + w.path + ")";
  return "";
}

}  // namespace zpolicy::runner
