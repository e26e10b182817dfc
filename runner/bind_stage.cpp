#include "runner/bind_stage.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdint>

#include "compiler/resolve/openat2.hpp"

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
  using compiler::Resolve;
  return compiler::openat2(AT_FDCWD, path, O_PATH | O_NOFOLLOW,
                           Resolve::NoSymlinks | Resolve::NoMagicLinks);
}

// MOUNT_ATTR_RDONLY set on the mount at `path` from `fd` (AT_EMPTY_PATH: `fd` itself),
// and on every mount below it with AT_RECURSIVE, or cleared (`set` false).
bool read_only(int fd, const char* path, unsigned flags, bool set = true) {
  mount_attr attr{};
  (set ? attr.attr_set : attr.attr_clr) = MOUNT_ATTR_RDONLY;
  return mount_setattr(fd, path, flags, &attr, sizeof attr) == 0;
}

// Descriptor `fd` replaced by a detached copy of the mount tree at `path` in this
// namespace, which must show the object `fd` holds; every mount of the copy read-only
// unless the verified argv binds it writable. Returns nullptr, or why not.
const char* replace_by_copy(int fd, const char* path, bool writable) {
  const int found = reopen(path);
  struct stat want, got;
  const bool same = found >= 0 && fstat(fd, &want) == 0 && fstat(found, &got) == 0 &&
                    !S_ISLNK(got.st_mode) && want.st_dev == got.st_dev && want.st_ino == got.st_ino;
  // A copy, not a bind: nothing is attached yet, so no copy holds the stage or another.
  const int copy =
      same ? open_tree(found, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH)
           : -1;
  if (found >= 0) close(found);
  if (!same)
    return "it is not the object that was verified in the sandbox's mount namespace "
           "(replaced, or reached through a symlink, since)";
  if (copy < 0) return "cannot copy its mount tree";
  const char* why = !writable && !read_only(copy, "", AT_EMPTY_PATH | AT_RECURSIVE)
                        ? "cannot make its copy read-only"
                    : dup2(copy, fd) != fd ? "cannot hand its copy to bwrap"
                                           : nullptr;
  close(copy);
  return why;
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

// A read-only bind of the object at `p.beneath` in the copy descriptor `p.copy` holds (now
// attached in the stage), onto itself, once it is found to be (`p.dev`, `p.ino`) there,
// following no symlink and never leaving the copy: it lies on that name's dentry in the
// copy, so it moves with the object if the name is renamed, and bwrap's recursive bind of
// the copy into its new root takes it along. Returns nullptr, or why not.
const char* protect(const StagedProtection& p) {
  using compiler::Resolve;
  const int found =
      compiler::openat2(p.copy, p.beneath.c_str(), O_PATH | O_NOFOLLOW,
                        Resolve::Beneath | Resolve::NoSymlinks | Resolve::NoMagicLinks);
  struct stat st;
  const bool same = found >= 0 && fstat(found, &st) == 0 && !S_ISLNK(st.st_mode) &&
                    static_cast<std::uint64_t>(st.st_dev) == p.dev &&
                    static_cast<std::uint64_t>(st.st_ino) == p.ino;
  const int copy =
      same ? open_tree(found, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH)
           : -1;
  const char* why =
      !same      ? "it is not the object that was verified in the copy of its writable root "
                   "(replaced, or reached through a symlink, since)"
      : copy < 0 ? "cannot copy its mount tree"
      : !read_only(copy, "", AT_EMPTY_PATH | AT_RECURSIVE)
          ? "cannot make its copy read-only"
      : move_mount(copy, "", found, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0
          ? "cannot mount its protection in the copy of its writable root"
          : nullptr;
  if (copy >= 0) close(copy);
  if (found >= 0) close(found);
  return why;
}

// Every mount of this namespace read-only but its /proc, a procfs where nothing can be
// created and through which bwrap writes its user namespace's maps and
// max_user_namespaces. The devices bwrap's --dev binds from /oldroot/dev (bubblewrap.c
// setup_newroot) stay read-only too: their reads and writes need no writable mount, and a
// sandbox started by root owns them, so a writable one let it chmod or touch the host's
// /dev/null (red team R16-1).
const char* seal_namespace() {
  if (!read_only(AT_FDCWD, "/", AT_RECURSIVE))
    return "cannot make the mounts of bwrap's namespace read-only";
  const int proc = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (proc < 0) return "cannot open /proc";
  struct statfs fs;
  // Anything but a procfs there, and the mount made writable again could be another.
  const bool procfs = fstatfs(proc, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
  const bool writable = procfs && read_only(proc, "", AT_EMPTY_PATH, false);
  close(proc);
  if (!procfs) return "/proc is not a procfs";
  if (!writable) return "cannot keep /proc writable";
  return nullptr;
}

}  // namespace

const char* stage_bind_sources(const std::vector<StagedSource>& sources,
                               const std::vector<StagedProtection>& protections,
                               const char*& failed) {
  failed = nullptr;
  // Every copy is made before the stage exists: the root's then shows the host's
  // kBindStage, and none shows the stage.
  for (const StagedSource& s : sources) {
    failed = s.path.c_str();
    if (const char* why = replace_by_copy(s.fd, s.path.c_str(), s.writable)) return why;
  }
  failed = nullptr;
  if (const char* why = seal_namespace()) return why;
  if (sources.empty()) return nullptr;
  if (mount("zpolicy-stage", kBindStage, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") !=
      0)
    return "cannot mount the stage";
  const int stage = open(kBindStage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (stage < 0) return "cannot open the stage";
  for (const StagedSource& s : sources) {
    if (const char* why = attach(stage, s.fd)) {
      failed = s.path.c_str();
      close(stage);
      return why;
    }
  }
  close(stage);
  // After the attach: a mount goes onto an attached tree, which the copies now are.
  for (const StagedProtection& p : protections) {
    if (const char* why = protect(p)) {
      failed = p.path.c_str();
      return why;
    }
  }
  // Nothing renames an entry (or makes one) in a read-only mount.
  if (mount(nullptr, kBindStage, nullptr,
            MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return "cannot make the stage read-only";
  return nullptr;
}

}  // namespace zpolicy::runner
