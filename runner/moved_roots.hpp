#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "ir/resolved.hpp"

namespace zpolicy::runner {

// A deny root is masked by a mount bwrap puts on its name, and the run watches the names
// on its way (runner/host_name_watch) from before it opens the bind sources: a rename there
// later stops the sandbox. One made between resolution and the watch (the deny root's
// parent moved and the name made again, or the parent of a host bind that shows it) raised
// no event, nor did a mount over a parent before the guard's unshare; the mask went onto
// whatever the name showed by then while the deny root stayed readable under the name it
// had been given (red team A13-1). A writable root is bound from its descriptor, but judged
// by its name: renamed in that window, the mounts the host made in it since were judged
// under the new name, outside every writable root, and reached the sandbox through the
// descriptor unjudged (A13D-1). So each existing path of `paths` must still be the object
// resolution saw in the namespace bwrap copied, the guard's (runner/sandbox_guard.hpp;
// looked up below /proc/GUARD/root, following no symlink). The first one that is not, as
// "'PATH' (...)"; none when all are.
std::optional<std::string> first_moved(const std::vector<ir::ResolvedPath>& paths, pid_t guard);

}  // namespace zpolicy::runner
