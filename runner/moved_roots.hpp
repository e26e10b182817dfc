#pragma once

#include <optional>
#include <string>

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
// descriptor unjudged (A13D-1). So each existing deny root, then each existing writable
// root, of `resolved` must still be the object resolution saw in the namespace bwrap
// copied, the guard's: looked up below `guard_root` (an O_PATH descriptor of
// /proc/GUARD/root, runner/sandbox_guard.hpp), following no symlink. The same object is
// not enough for a file: moved away with a hard link left at its name (`mv src moved;
// mkdir src; ln moved/key src/key`), the mask goes onto the link while the key reads as
// `moved/key` (A13C-2); so a file must also have the link count resolution saw. The first
// that is not, as "deny root 'PATH' (...)" or "writable root 'PATH' (...)"; none when all
// are.
std::optional<std::string> first_moved(const ir::Resolved& resolved, int guard_root);

}  // namespace zpolicy::runner
