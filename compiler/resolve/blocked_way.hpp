#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zpolicy::compiler {

// For a protected path `rel` below writable root `root`: the index of the first
// component strictly before the last that exists on the host and is not a directory
// (`data` a regular file, a FIFO or a socket, when `data/agent-sessions` is protected).
// The protected path cannot exist while that file is there, and the sandbox could only
// create it by replacing the file, so the file itself is what needs protecting. Likewise a
// directory the caller cannot create the next missing name in (no write or search
// permission): the sandbox could only do so after a chmod. Symlinks are not reported:
// resolution refuses a protected path that crosses one.
std::optional<size_t> first_non_directory_on_way(const std::string& root,
                                                 const std::vector<std::string>& rel);

}  // namespace zpolicy::compiler
