#include "runner/host_mount_events.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace zpolicy::runner {

HostMountEvents::HostMountEvents() : fd_(open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) {}

HostMountEvents::~HostMountEvents() {
  if (fd_ >= 0) close(fd_);
}

bool HostMountEvents::changed() const {
  if (fd_ < 0) return true;
  // The kernel marks the file POLLPRI (and POLLERR) once the namespace's mount table
  // changes after the open (proc(5), /proc/PID/mounts).
  pollfd p{fd_, POLLPRI, 0};
  const int n = poll(&p, 1, 0);
  return n < 0 || (n > 0 && (p.revents & (POLLPRI | POLLERR | POLLNVAL)));
}

}  // namespace zpolicy::runner
