#include "runner/bind_stage.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace zpolicy::runner {
namespace {

// `n` in decimal, NUL-terminated, in `out` (at least 12 bytes).
void decimal(char* out, int n) {
  char digits[12];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0);
  for (int i = 0; i < count; ++i) out[i] = digits[count - 1 - i];
  out[count] = '\0';
}

// `path` (absolute, canonical) opened O_PATH in this namespace, following no symlink.
int reopen(const char* path) {
  open_how how{};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
}

// Descriptor `fd` replaced by a detached copy of the mount tree at `path` in this
// namespace, which must show the object `fd` holds.
bool replace_by_copy(int fd, const char* path) {
  const int found = reopen(path);
  if (found < 0) return false;
  struct stat want, got;
  const bool same = fstat(fd, &want) == 0 && fstat(found, &got) == 0 && !S_ISLNK(got.st_mode) &&
                    want.st_dev == got.st_dev && want.st_ino == got.st_ino;
  // A copy, not a bind: nothing is attached yet, so no copy holds the stage or another.
  const int copy =
      same ? open_tree(found, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH)
           : -1;
  close(found);
  if (copy < 0) return false;
  const bool moved = dup2(copy, fd) == fd;
  close(copy);
  return moved;
}

// The copy descriptor `fd` holds attached at its entry in the stage (`stage`, its
// directory): a directory for a directory, an empty file for anything else.
const char* attach(int stage, int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return "cannot stat its copy";
  char name[12];
  decimal(name, fd);
  if (S_ISDIR(st.st_mode)) {
    if (mkdirat(stage, name, 0700) != 0) return "cannot make its entry in the stage";
  } else {
    const int made = openat(stage, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (made < 0) return "cannot make its entry in the stage";
    close(made);
  }
  if (move_mount(fd, "", stage, name, MOVE_MOUNT_F_EMPTY_PATH) != 0)
    return "cannot attach it in the stage";
  return nullptr;
}

}  // namespace

const char* stage_bind_sources(const std::vector<std::pair<int, std::string>>& sources,
                               const char*& failed) {
  failed = nullptr;
  if (sources.empty()) return nullptr;
  // Every copy is made before the stage exists: the root's then shows the host's
  // kBindStage, and none shows the stage.
  for (const auto& [fd, path] : sources) {
    failed = path.c_str();
    if (!replace_by_copy(fd, path.c_str()))
      return "it is not the object that was verified in the sandbox's mount namespace "
             "(replaced, or reached through a symlink, since)";
  }
  failed = nullptr;
  if (mount("zpolicy-stage", kBindStage, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") !=
      0)
    return "cannot mount the stage";
  const int stage = open(kBindStage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (stage < 0) return "cannot open the stage";
  for (const auto& [fd, path] : sources) {
    if (const char* why = attach(stage, fd)) {
      failed = path.c_str();
      close(stage);
      return why;
    }
  }
  close(stage);
  // Nothing renames an entry (or makes one) in a read-only mount.
  if (mount(nullptr, kBindStage, nullptr,
            MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return "cannot make the stage read-only";
  return nullptr;
}

}  // namespace zpolicy::runner
