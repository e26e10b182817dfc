#include "runner/host_mount_table.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace zpolicy::runner {

HostMountTable::HostMountTable() : fd_(open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) {}

HostMountTable::~HostMountTable() {
  if (fd_ >= 0) close(fd_);
}

unsigned long HostMountTable::marks() {
  if (fd_ < 0) return ++marks_;  // nothing can be told: every look is a change
  // The kernel marks the file POLLPRI (and POLLERR) once the namespace's mount table
  // changes after the open or the last poll, and the poll clears the mark (proc(5),
  // /proc/PID/mounts): counted, so that each caller compares with its own look.
  pollfd p{fd_, POLLPRI, 0};
  const int n = poll(&p, 1, 0);
  if (n < 0 || (n > 0 && (p.revents & (POLLPRI | POLLERR | POLLNVAL)))) ++marks_;
  return marks_;
}

const std::vector<compiler::MountEntry>& HostMountTable::now() {
  // Polled before the read: a change after the poll is in the read or marks the next one.
  const unsigned long at = marks();
  if (read_ && at == read_at_) return table_;
  table_.clear();
  std::string text;
  if (fd_ >= 0) {
    char buf[16384];
    for (off_t off = 0;;) {
      const ssize_t n = pread(fd_, buf, sizeof buf, off);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        text.clear();
        break;
      }
      if (n == 0) break;
      text.append(buf, static_cast<size_t>(n));
      off += n;
    }
  }
  table_ = compiler::parse_mountinfo(text);
  if (!read_) {
    first_ = table_;
    first_at_ = at;
  }
  read_ = true;
  read_at_ = at;
  return table_;
}

}  // namespace zpolicy::runner
