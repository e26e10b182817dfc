#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace zpolicy::runner
