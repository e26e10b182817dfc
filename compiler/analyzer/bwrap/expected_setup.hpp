#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"

namespace zpolicy::compiler {

// What one place of the sandbox's mount namespace holds once bwrap has executed every
// setup operation of an argv: the object the last operation at that destination left
// there, for every destination no later mount covers.
//
// The runner compares these with the real namespace before it lets the command start
// (runner/setup_check.hpp). bwrap resolves each destination by path, during setup, in
// directories that other runs' sandboxes can write: a destination swapped for a
// symlink sends the mount elsewhere, and bwrap's own check of the result is by path too
// (docs/redteam-2026-12.md, E1d). What the verifier proved holds only if this holds.
struct ExpectedObject {
  enum class Kind {
    Bind,       // a mount root showing the object of descriptor `source_fd`
    Tmpfs,      // a mount root of a tmpfs (--tmpfs)
    Dev,        // a mount root of bwrap's /dev, a tmpfs (--dev)
    Proc,       // a mount root of a procfs (--proc)
    Directory,  // a directory, not a mount root (--dir)
    Symlink,    // a symlink whose target is `link_target` (--symlink)
  };
  Kind kind = Kind::Bind;
  std::string dest;  // absolute path in the sandbox
  // Bind: the descriptor bwrap mounted (--bind-fd, --ro-bind-fd). Empty for a bind by
  // path, whose object nothing recorded: such a setup cannot be checked.
  std::optional<int> source_fd;
  // Bind: the host path bound (for a bind by descriptor, the one bwrap.fds gives it).
  std::string source;
  bool read_only = false;   // the mount is read-only (--ro-bind*, --remount-ro)
  std::string link_target;  // Symlink
  int line = 0;             // the operation's line in bwrap.args
};
const char* to_string(ExpectedObject::Kind k);

// The expected objects of `argv`, in operation order. Pure: the argv alone decides.
std::vector<ExpectedObject> expected_setup(const BwrapArgv& argv);

}  // namespace zpolicy::compiler
