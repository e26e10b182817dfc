#include "runner/host_mount_table.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace zpolicy::runner {
namespace {

// The whole text of the proc file `fd` from its start (empty when a read fails).
std::string read_from_start(int fd) {
  std::string text;
  if (fd < 0) return text;
  char buf[16384];
  for (off_t off = 0;;) {
    const ssize_t n = pread(fd, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return "";
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    off += n;
  }
}

}  // namespace

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
  table_ = compiler::parse_mountinfo(read_from_start(fd_));
  if (!read_) first_ = table_;
  read_ = true;
  read_at_ = at;
  return table_;
}

std::vector<compiler::MountEntry> mount_table_of(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/mountinfo";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  auto table = compiler::parse_mountinfo(read_from_start(fd));
  if (fd >= 0) close(fd);
  return table;
}

}  // namespace zpolicy::runner
