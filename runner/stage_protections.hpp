#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve/mount_names.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::runner {

// A read-only mount the verified argv makes inside a writable bind (a protected path, a
// deny root), which the guard's child mounts in that bind's copy before bwrap runs
// (runner/bind_stage.hpp): the object at `beneath` in the copy descriptor `copy` holds,
// which must be (`dev`, `ino`), bound onto itself read-only.
struct StagedProtection {
  int copy;             // the writable bind's descriptor in the guard's child
  std::string beneath;  // relative to the bind's root, never empty
  std::string path;     // the host path, for what a refusal says
  std::uint64_t dev;
  std::uint64_t ino;
};

// A bind descriptor of the run that the verified argv binds writable.
struct WritableBind {
  int fd;
  std::string path;  // bound onto itself: the host path is the sandbox's
};

// Every protected path and deny root of `live` strictly below a writable bind, once per
// such bind (a protected path below a pin is below the workspace too: both copies show
// it), with the identity resolution or the placeholder step recorded. One without a
// recorded identity does not exist: nothing can be created below it, and there is no
// object to protect.
std::vector<StagedProtection> stage_protections(const std::vector<WritableBind>& writable,
                                                const ir::Resolved& live);

// A filesystem of device nodes (devpts, devtmpfs) inside a writable root: the host's own
// nodes, whatever the name (a chroot's `dev` bound from the host's /dev or /dev/pts). A
// writable copy of such a mount let a sandbox started by root chmod, chown or touch the
// host's nodes: its terminals made writable by every user, a disk readable (red team
// R17-3). `mounts`: the host's table. Each such mount strictly below a writable bind
// (the last at its point: the one that shows) is bound read-only onto itself in that bind's
// copy, as a protected path is, its identity the one its point shows now; device nodes
// need no writable mount to be read and written.
std::vector<StagedProtection> stage_device_mounts(const std::vector<WritableBind>& writable,
                                                  const std::vector<compiler::MountEntry>& mounts);
// The device filesystem (its type) of the mount a writable bind lies on, if it is one:
// the root itself cannot be made read-only in its copy, so the run is refused.
std::optional<std::string> on_device_filesystem(const WritableBind& writable,
                                                const std::vector<compiler::MountEntry>& mounts);

}  // namespace zpolicy::runner
