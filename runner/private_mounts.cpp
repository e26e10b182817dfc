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

const char* enter_own_user_namespace() {
  // A process that changed its uid without an exec since (an embedder that dropped root in
  // process) is not dumpable: the kernel keeps what it read as root from the new uid's
  // processes, and its /proc/self files are root's, so it cannot write its maps. Made
  // dumpable for that moment, the guard, a fork with a copy of all of its memory, could be
  // read by any process of the new uid (red team A10-4): the embedder decides instead.
  if (prctl(PR_GET_DUMPABLE) != 1)
    return "this process is not dumpable (it changed its user id without an exec); run "
           "zpolicy from a fresh exec, or make the process dumpable (PR_SET_DUMPABLE) if "
           "it holds nothing its new user may not read";
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 || write_maps(uid, gid) != 0)
    return "cannot make a user namespace of the caller's own";
  return nullptr;
}

}  // namespace

const char* enter_private_mount_namespace() {
  if (unshare(CLONE_NEWNS) != 0) {
    if (errno != EPERM) return "cannot unshare the mount namespace";
    if (const char* why = enter_own_user_namespace()) return why;
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return "cannot make its mounts private";
  return nullptr;
}

}  // namespace zpolicy::runner
