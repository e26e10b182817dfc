#include "runner/private_mounts.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace zpolicy::runner {
namespace {

int write_file(const char* path, const char* text, size_t length) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = write(fd, text, length);
  const int err = n == static_cast<ssize_t>(length) ? 0 : n < 0 ? errno : EIO;
  close(fd);
  return err;
}

// Writes "ID ID 1" to `path`: `id`, seen from the namespace's parent, is `id` inside it.
int map_to_itself(const char* path, unsigned id) {
  char number[16];
  const size_t n = static_cast<size_t>(std::to_chars(number, number + sizeof number, id).ptr - number);
  char line[40];  // two numbers of at most 10 digits, " ", " 1\n"
  std::memcpy(line, number, n);
  line[n] = ' ';
  std::memcpy(line + n + 1, number, n);
  std::memcpy(line + 2 * n + 1, " 1\n", 3);
  return write_file(path, line, 2 * n + 4);
}

int write_maps(uid_t uid, gid_t gid) {
  // An unprivileged process may map its gid only once setgroups is denied.
  if (int err = map_to_itself("/proc/self/uid_map", uid)) return err;
  static constexpr char kDeny[] = "deny";
  if (int err = write_file("/proc/self/setgroups", kDeny, sizeof kDeny - 1)) return err;
  return map_to_itself("/proc/self/gid_map", gid);
}

int enter_own_user_namespace() {
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return errno;
  // A process that changed its uid without an exec since (an embedder that dropped root)
  // is not dumpable, so its /proc/self files are root's and it could not write its maps.
  // Dumpable only while it writes them, and as it was after.
  const int dumpable = prctl(PR_GET_DUMPABLE);
  if (dumpable < 0 || (dumpable != 1 && prctl(PR_SET_DUMPABLE, 1) != 0)) return errno;
  const int err = write_maps(uid, gid);
  if (dumpable != 1 && prctl(PR_SET_DUMPABLE, dumpable) != 0 && !err) return errno;
  return err;
}

}  // namespace

int enter_private_mount_namespace() {
  if (unshare(CLONE_NEWNS) != 0) {
    if (errno != EPERM) return errno;
    if (int err = enter_own_user_namespace()) return err;
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  return 0;
}

}  // namespace zpolicy::runner
