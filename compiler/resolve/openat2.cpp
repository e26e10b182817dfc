#include "compiler/resolve/openat2.hpp"

#include <fcntl.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#include <cerrno>

namespace zpolicy::compiler {

int openat2(int dir, const char* path, int flags, Resolve resolve, mode_t mode) {
#if defined(__linux__) && defined(SYS_openat2)
  const auto has = [resolve](Resolve r) {
    return (static_cast<unsigned>(resolve) & static_cast<unsigned>(r)) != 0;
  };
  open_how how{};
  how.flags = static_cast<unsigned>(flags | O_CLOEXEC);
  how.mode = mode;
  how.resolve = (has(Resolve::NoSymlinks) ? RESOLVE_NO_SYMLINKS : 0) |
                (has(Resolve::NoMagicLinks) ? RESOLVE_NO_MAGICLINKS : 0) |
                (has(Resolve::Beneath) ? RESOLVE_BENEATH : 0) |
                (has(Resolve::InRoot) ? RESOLVE_IN_ROOT : 0);
  return static_cast<int>(syscall(SYS_openat2, dir, path, &how, sizeof how));
#else
  (void)dir;
  (void)path;
  (void)flags;
  (void)resolve;
  (void)mode;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace zpolicy::compiler
