#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
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
//
// One object serves one resolution: what the host says of each path on the way (lstat,
// and access for write and search) is asked once and kept in a tree of the names walked,
// so that protected paths sharing a prefix walk it once. Walked anew for each path, 700
// protected paths nested every second level of a 1 400-deep workspace tree cost 2.6 M
// system calls, 3.5 s (session 20).
class BlockedWays {
 public:
  std::optional<size_t> length(const std::string& root, const std::vector<std::string>& rel);

 private:
  // What the host said of one path.
  struct Facts {
    int error = 0;  // lstat's errno; 0 when it succeeded
    mode_t type = 0;
    std::optional<bool> can_change;  // access(W_OK | X_OK) == 0, asked when needed
  };
  class Walk;

  // The node of `name` below `node`, made when first asked for.
  size_t child(size_t node, const std::string& name);

  std::vector<std::optional<Facts>> facts_;  // by node; none until asked of the host
  std::map<std::pair<size_t, std::string>, size_t> children_;
  std::map<std::string, size_t> roots_;
};

}  // namespace zpolicy::compiler
