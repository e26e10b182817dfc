#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace zpolicy::runner {

// A standard stream that passes to the sandbox as a device (a terminal's own side, a memory
// device: runner/standard_streams.hpp) and that the guard's child hands over opened again
// through a read-only mount of the same node (red team R16-2). The caller's own open file
// is on the host's writable mount (its devpts, its devtmpfs): through it, or through
// /proc/self/fd/N opened again, a sandbox whose uid owns the node (the caller's pty; as
// root, /dev/null) changed the host's node with fchmod, chmod, chown or utimensat. On a
// read-only mount every one of those fails (EROFS), while reading, writing and the
// terminal's ioctls work as before: an open for writing of a device needs no writable
// mount. The terminal is the same terminal (one tty, whatever file opened it): its
// settings, foreground process group and what zpolicy saves and restores are its own.
struct ReadOnlyStream {
  int fd = -1;  // 0, 1 or 2
  // The caller's node: a terminal is opened again only at that very node; a memory device
  // at the namespace's own device of that number (`path`, /dev/null ...), as bwrap's --dev
  // gives the sandbox its own.
  dev_t dev = 0;
  ino_t ino = 0;
  dev_t rdev = 0;
  bool memory_device = false;
  // A terminal's own device (TIOCGDEV, as the kernel encodes it), which the file opened
  // again must be too: the node may name whichever terminal its opener has. /dev/tty opens
  // the opener's controlling terminal, the guard's child's, not the one the caller's file
  // was opened on, and handed the sandbox a terminal the caller had not given it (red
  // team R16B-1); /dev/console is whatever the console is now, /dev/tty0 the foreground
  // virtual console. 0 when unknown (no terminal matches).
  unsigned int tty = 0;
  std::string path;  // where the caller's mount namespace shows the node (absolute)
  int flags = 0;     // the access mode, O_APPEND and O_NONBLOCK of the caller's open file
  // The node is the caller's (its uid owns it): a sandbox holding the caller's file could
  // change it, so a run whose stream cannot be opened again is refused. Otherwise the
  // caller's file passes when it cannot (the caller's terminal owned by another user: a
  // sandbox without ownership or capability over the node can set none of its attributes
  // but its times to now, as every write to a terminal does).
  bool required = false;
};

// Called in the guard's child (runner/sandbox_guard.hpp), in its mount namespace, before
// bwrap's exec: for each of `streams`, reopens `path` following no symlink, requires the
// node (`rdev`, and `dev`, `ino` unless a memory device), takes a detached copy of its
// mount (open_tree OPEN_TREE_CLONE), makes it read-only (mount_setattr), opens the node
// through it with `flags` and O_NOCTTY, requires a terminal's `tty`, and puts that on
// `fd`. A stream equal to an
// earlier one gets the earlier's file. System calls and stack buffers only. Returns
// nullptr, or why a required stream could not be opened so (a static string), with
// `failed` its number.
const char* reopen_read_only(const std::vector<ReadOnlyStream>& streams, int& failed);

}  // namespace zpolicy::runner
