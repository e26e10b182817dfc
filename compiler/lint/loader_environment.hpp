#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zpolicy::compiler {

// The backend (bwrap) starts on the host, outside the sandbox it is about to make, with the
// command's environment, and the dynamic loader acts on it before anything is confined: a
// library named by LD_PRELOAD, LD_AUDIT or found on LD_LIBRARY_PATH runs as the caller with
// no sandbox. Returns why `env` (NAME=VALUE strings) would have it load from a place a
// sandbox can write: an entry inside one of the canonical `writable` roots (its longest
// existing prefix resolved, so a symlink into a root counts), or an empty or relative
// entry (the backend's working directory is the workspace). Red team R7-E1.
std::optional<std::string> loader_reaches_writable_root(const std::vector<std::string>& env,
                                                        const std::vector<std::string>& writable);

}  // namespace zpolicy::compiler
