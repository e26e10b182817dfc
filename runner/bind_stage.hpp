#pragma once

#include <string>
#include <vector>

#include "runner/stage_protections.hpp"

namespace zpolicy::runner {

// Where the guard's child pins the run's bind sources: a directory of every Linux system,
// which only root can rename, and which bwrap never looks up by name while it sets up (it
// uses /oldroot/dev, /oldroot/proc and /tmp); covered in that child's namespace only.
inline constexpr char kBindStage[] = "/sys";

// A bind descriptor of the run: its number in the guard's child, the verified path it
// was opened at, and whether the verified argv binds it writable (--bind-fd).
struct StagedSource {
  int fd;
  std::string path;
  bool writable;
};

// Pins every bind source of a run where bwrap can resolve it to nothing else (red team
// A14-L1; docs/run.md "Binding by descriptor").
//
// bwrap (0.8.0 as Debian ships it, a backport of 0.10's --bind-fd) turns a bind descriptor
// back into a name: it realpath()s /proc/self/fd/N before it sets up, mounts /oldroot +
// that path by name, and only checks afterwards that the destination, itself looked up by
// name, has the descriptor's identity. Whoever could rename a component of the path (the
// host, another sandbox that writes the workspace's parent) exchanged the workspace with
// a symlink to the caller's home while bwrap mounted it and back before the check: the home
// was mounted writable in the sandbox's namespace, and bwrap made directories in it.
//
// So the guard's child, before it execs bwrap, in a mount namespace of its own copied from
// the guard's (the guard clones it with CLONE_NEWNS; private: nothing of it reaches the
// guard's, which the runner's looks read, nor the host's, and no other process mounts in
// it), for each (descriptor number, verified
// path) of `sources`: reopens the path following no symlink, requires the object the host's
// descriptor holds (st_dev, st_ino), and takes a detached copy of the mount tree there
// (open_tree OPEN_TREE_CLONE | AT_RECURSIVE, the root's included), all before the stage
// exists, so that none of them shows it; then mounts a tmpfs on kBindStage, attaches each
// copy at an entry named after its descriptor's number, makes the tmpfs read-only (no entry
// can be renamed or made), and leaves each descriptor on its copy: the same object, so
// bwrap's own identity check still holds, and the path bwrap resolves it to, kBindStage/N,
// names a mount of this namespace alone, below a directory only root can rename. bwrap's
// copy of this namespace ends with its setup (its /oldroot), and the sandbox's "/" is the
// root's copy, taken before the stage: the sandbox sees no trace of it.
//
// The same namespace is what bwrap's /oldroot shows while it sets up, and bwrap follows
// symlinks in the destinations it creates (ensure_file, ensure_dir, mkdir_with_parents):
// a destination in a writable root swapped for a symlink that climbs out of its new root
// into /oldroot made it create an empty file or directory, as the caller, wherever the
// swapper chose on the host (red team E1d). So, once the copies are taken, every mount of
// the namespace is made read-only (mount_setattr AT_RECURSIVE), as is every mount of each
// copy but those of the writable binds. Made writable again: /proc only (a procfs, where
// nothing can be created, and where bwrap writes its user namespace's maps). The devices
// bwrap's --dev binds stay read-only: read and written as before, but no sandbox can
// chmod or touch the host's nodes (red team R16-1). bwrap can then create an entry
// through /oldroot only inside a writable root of the run. (Not a
// fresh minimal root instead: docs/decisions.md.)
//
// Inside a writable root, a protected directory or a deny root was read-only only once
// bwrap had mounted its protection in the new root, and never in the root's copy here: a
// destination swapped for a symlink into `.git/hooks/` (through the new root's name or
// through /oldroot/kBindStage/N) made bwrap create an empty entry below the host's `.git`;
// one whose target appeared between bwrap's stat() and its creat() truncated a protected
// file. So, once the copies are attached, each of `protections` (runner/
// stage_protections.hpp) is mounted in its writable root's copy: the object found at its
// name there, following no symlink and never leaving the copy, must be the one recorded,
// and is bound onto itself read-only. bwrap's recursive bind of the copy takes those
// mounts into the new root, where bwrap's own protections later cover them: a creation
// below a protected path, by either name, from the moment the writable root is mounted,
// meets EROFS. (Each shows the object bwrap then mounts over it, read-only, at a
// destination of the verified argv, so the sandbox's table gains a mount below one it
// already had there, which the runner's checks accept.) A protection that cannot be
// mounted refuses the run.
//
// Called in that namespace. System calls and stack buffers only (the child of a fork of a
// process that may have other threads). Returns nullptr, or why not (a static string) with `failed` set to the
// path of the source it was at (or nullptr).
const char* stage_bind_sources(const std::vector<StagedSource>& sources,
                               const std::vector<StagedProtection>& protections,
                               const char*& failed);

}  // namespace zpolicy::runner
