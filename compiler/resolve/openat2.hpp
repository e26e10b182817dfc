#pragma once

#include <sys/types.h>

namespace zpolicy::compiler {

// What a lookup by openat2(2) refuses to cross (its `resolve` flags), combined with `|`.
// Each caller names every one it relies on, even where one implies another.
enum class Resolve : unsigned {
  // RESOLVE_NO_SYMLINKS: any symlink on the way (ELOOP), magic links too. With O_PATH and
  // O_NOFOLLOW a symlink as the last component is opened itself; without, it is ELOOP.
  NoSymlinks = 1u << 0,
  // RESOLVE_NO_MAGICLINKS: /proc's links to open files and namespaces (ELOOP).
  NoMagicLinks = 1u << 1,
  // RESOLVE_BENEATH: any way out of `dir` (an absolute path or link, ".." above it; EXDEV).
  Beneath = 1u << 2,
  // RESOLVE_IN_ROOT: `dir` is "/": ".." and absolute link targets stay below it.
  InRoot = 1u << 3,
};

constexpr Resolve operator|(Resolve a, Resolve b) {
  return static_cast<Resolve>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

// openat(2) of `path` relative to `dir` (AT_FDCWD: the working directory) with `flags`
// (O_CLOEXEC is added) and `mode`, by openat2(2) with `resolve`. The descriptor, or -1 with
// errno set. No fallback: where openat2 cannot be used it fails with ENOSYS (a kernel before
// 5.6, or a seccomp filter answering so) or EPERM (a seccomp filter written before it
// existed), and each caller decides what that means, most of them a refusal. Makes one
// system call and allocates nothing: the runner calls it between clone and exec.
int openat2(int dir, const char* path, int flags, Resolve resolve, mode_t mode = 0);

}  // namespace zpolicy::compiler
