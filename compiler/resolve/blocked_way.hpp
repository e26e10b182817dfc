#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zpolicy::compiler {

// For a protected path `rel` below writable root `root`: how many of its components to
// protect instead, when the path cannot be created as it stands. A component strictly
// before the last that exists on the host and is not a directory (`data` a regular file, a
// FIFO or a socket, when `data/agent-sessions` is protected): the path cannot exist while
// it is there, and the sandbox could only create it by replacing the file, so the file is
// what needs protecting. Likewise a directory, the root included (0: the root becomes
// read-only), in which the caller cannot create the next missing name (no write or search
// permission): the sandbox could only do so after a chmod. Symlinks are not reported:
// resolution refuses a protected path that crosses one.
std::optional<size_t> blocked_way_length(const std::string& root,
                                         const std::vector<std::string>& rel);

}  // namespace zpolicy::compiler
