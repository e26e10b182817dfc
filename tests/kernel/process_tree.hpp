#pragma once

// The processes of a sandbox started by a launcher (zpolicy run, or a plan executor):
// bwrap's monitor is the launcher's child, the sandbox's init the monitor's. For tests
// that stop or kill the launcher while bwrap waits to be released.
#include <sys/types.h>

#include <fstream>
#include <string>
#include <vector>

namespace zpolicy::tests::kernel {

inline std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

// The sandbox's init, once there is one; 0 before.
inline pid_t sandbox_init(pid_t launcher) {
  for (pid_t monitor : children_of(launcher))
    for (pid_t init : children_of(monitor)) return init;
  return 0;
}

// Whether `pid` is blocked in read(FD, BUF, 1): bwrap's wait on --block-fd (its other
// blocking read before setup, on an eventfd, reads 8 bytes).
inline bool blocked_on_release(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/syscall");
  std::string nr, fd, buf, count;
  return in >> nr >> fd >> buf >> count && nr == "0" && count == "0x1";
}

inline bool gone_or_zombie(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return true;
  const auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] == 'Z' ||
         line[paren + 2] == 'X';
}

}  // namespace zpolicy::tests::kernel
