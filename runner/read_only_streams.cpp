#include "runner/read_only_streams.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "compiler/resolve/openat2.hpp"

namespace zpolicy::runner {
namespace {

bool same_stream(const ReadOnlyStream& a, const ReadOnlyStream& b) {
  return a.rdev == b.rdev && a.dev == b.dev && a.ino == b.ino && a.flags == b.flags &&
         a.memory_device == b.memory_device && a.tty == b.tty;
}

// `s.path` opened O_PATH following no symlink, if it is the stream's node; else -1 with
// `why` set.
int find_node(const ReadOnlyStream& s, const char*& why) {
  using compiler::Resolve;
  const int found = s.path.empty()
                        ? -1
                        : compiler::openat2(AT_FDCWD, s.path.c_str(), O_PATH | O_NOFOLLOW,
                                            Resolve::NoSymlinks | Resolve::NoMagicLinks);
  struct stat st;
  const bool same = found >= 0 && fstat(found, &st) == 0 && S_ISCHR(st.st_mode) &&
                    st.st_rdev == s.rdev &&
                    (s.memory_device || (st.st_dev == s.dev && st.st_ino == s.ino));
  if (same) return found;
  if (found >= 0) close(found);
  why = s.memory_device
            ? "the sandbox's mount namespace has no such device at its /dev name"
            : "the terminal is not found by its name in the sandbox's mount namespace (a "
              "terminal of another devpts instance, or replaced since)";
  return -1;
}

// The node `found` holds, opened through a read-only copy of its mount with the stream's
// flags; -1 with `why` set.
int open_read_only(const ReadOnlyStream& s, int found, const char*& why) {
  const int copy = open_tree(found, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (copy < 0) {
    why = "cannot copy the mount of its device";
    return -1;
  }
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY;
  int opened = -1;
  if (mount_setattr(copy, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) {
    why = "cannot make the copy of its device's mount read-only";
  } else {
    // No open by descriptor exists but through its magic link.
    char link[32] = "/proc/self/fd/";
    const size_t prefix = std::strlen(link);
    *std::to_chars(link + prefix, link + sizeof link - 1, copy).ptr = '\0';
    opened = open(link, s.flags | O_NOCTTY | O_CLOEXEC);
    unsigned int tty = 0;
    if (opened < 0) {
      why = errno == EACCES ? "the caller may not open its device again (its permissions)"
            : errno == EBUSY ? "its terminal is in exclusive mode (TIOCEXCL)"
                             : "cannot open its device through the read-only copy";
    } else if (!s.memory_device && (ioctl(opened, TIOCGDEV, &tty) != 0 || tty != s.tty)) {
      why = "its node opens another terminal here (/dev/tty is the opener's controlling "
            "terminal, /dev/console the console's)";
      close(opened);
      opened = -1;
    }
  }
  close(copy);
  return opened;
}

}  // namespace

const char* reopen_read_only(const std::vector<ReadOnlyStream>& streams, int& failed) {
  for (size_t i = 0; i < streams.size(); ++i) {
    const ReadOnlyStream& s = streams[i];
    size_t earlier = 0;
    while (earlier < i && !same_stream(streams[earlier], s)) ++earlier;
    if (earlier < i) {
      if (dup2(streams[earlier].fd, s.fd) != s.fd) {
        failed = s.fd;
        return "cannot place it";
      }
      continue;
    }
    const char* why = nullptr;
    const int found = find_node(s, why);
    const int opened = found >= 0 ? open_read_only(s, found, why) : -1;
    if (found >= 0) close(found);
    // dup2 clears close-on-exec: bwrap and the command inherit it.
    if (opened >= 0 && dup2(opened, s.fd) != s.fd) why = "cannot place it";
    if (opened >= 0) close(opened);
    if (why && s.required) {
      failed = s.fd;
      return why;
    }
  }
  return nullptr;
}

}  // namespace zpolicy::runner
