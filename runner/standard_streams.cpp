#include "runner/standard_streams.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace zpolicy::runner {
namespace {

const char* const kNames[] = {"stdin", "stdout", "stderr"};

// /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom: the memory devices that
// name nothing of the host (not /dev/mem, /dev/port or /dev/kmsg of the same major).
bool harmless_memory_device(dev_t rdev) {
  if (major(rdev) != 1) return false;
  const unsigned minor_number = minor(rdev);
  return minor_number == 3 || minor_number == 5 || minor_number == 7 || minor_number == 8 ||
         minor_number == 9;
}

bool passes_as_is(int fd, const struct stat& st) {
  if (S_ISSOCK(st.st_mode)) return true;
  if (S_ISCHR(st.st_mode)) return isatty(fd) || harmless_memory_device(st.st_rdev);
  if (S_ISFIFO(st.st_mode)) {
    // An anonymous pipe; a named FIFO lives on a filesystem of the host.
    struct statfs fs;
    return fstatfs(fd, &fs) == 0 && fs.f_type == PIPEFS_MAGIC;
  }
  return false;
}

// What is left of `fd` from its current offset, in a sealed memfd at offset 0: reopened
// through /proc/self/fd it is that memfd, which no one can write.
int sealed_copy(int fd) {
  const int copy = memfd_create("zpolicy-stdin", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (copy < 0) return -1;
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (n == 0) {
      if (fcntl(copy, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0 &&
          lseek(copy, 0, SEEK_SET) == 0)
        return copy;
      break;
    }
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = write(copy, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        close(copy);
        return -1;
      }
      done += w;
    }
  }
  const int saved = errno;
  close(copy);
  errno = saved;
  return -1;
}

// Copies everything from `from` into `to` until end of file; a failed write drops the
// rest, as a full disk would for the command itself.
void copy_until_end(int from, int to) {
  char buf[64 * 1024];
  bool writable = true;
  for (;;) {
    const ssize_t n = read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t done = 0; writable && done < n;) {
      const ssize_t w = write(to, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) writable = false;
      else done += w;
    }
  }
  close(from);
}

}  // namespace

StandardStreams::~StandardStreams() { finish(); }

bool StandardStreams::prepare(std::string& why) {
  for (int fd = 0; fd <= 2; ++fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) continue;  // closed: the sandbox gets it closed too
    if (passes_as_is(fd, st)) continue;
    if (S_ISREG(st.st_mode) && fd == 0) {
      const int copy = sealed_copy(fd);
      if (copy < 0) {
        why = std::string("cannot copy the file on stdin: ") + std::strerror(errno);
        return false;
      }
      fds_.push_back({copy, fd});
      continue;
    }
    if (S_ISREG(st.st_mode)) {
      int p[2];
      if (pipe2(p, O_CLOEXEC) != 0) {
        why = std::string("cannot make a pipe for ") + kNames[fd] + ": " + std::strerror(errno);
        return false;
      }
      fds_.push_back({p[1], fd});
      copies_.emplace_back(copy_until_end, p[0], fd);
      continue;
    }
    why = std::string(kNames[fd]) + " is " +
          (S_ISDIR(st.st_mode)    ? "a directory"
           : S_ISBLK(st.st_mode)  ? "a block device"
           : S_ISCHR(st.st_mode)  ? "a character device that is not a terminal"
           : S_ISFIFO(st.st_mode) ? "a named FIFO"
                                  : "a file of another type") +
          ", which the sandbox could open again on the host through /proc/self/fd/" +
          std::to_string(fd) + "; redirect it through a pipe (cat FILE | zpolicy run ...)";
    return false;
  }
  return true;
}

void StandardStreams::finish() {
  for (const auto& [here, there] : fds_) close(here);
  fds_.clear();
  for (auto& t : copies_) t.join();
  copies_.clear();
}

}  // namespace zpolicy::runner
