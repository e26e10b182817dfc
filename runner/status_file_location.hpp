#pragma once

#include <string>

#include "compiler/run_plan.hpp"

namespace zpolicy::runner {

// The writable bind of `plan` through which the command could reach a directory the
// kernel looks `path` (a status file) up in: the one that holds it, and every directory
// on the way, symlinks' own directories included (red team R7-S1); empty when none can. A file there can be renamed away
// and replaced by the command, and the caller would read what the sandbox wrote (red team
// R5-S2). Reachable means: the directory is, by identity, a writable bind or lies below
// one (a bind-mount alias of the workspace counts); or it lies in a filesystem region a
// writable bind shows inside the sandbox, through the bind itself or through a mount
// below it, which bwrap binds along (red team R6-S1).
std::string writable_root_holding(const compiler::RunPlan& plan, const std::string& path);

}  // namespace zpolicy::runner
