#pragma once

// The processes of a sandbox started by a launcher (zpolicy run, or a plan executor):
// bwrap's monitor is the launcher's child (zpolicy: its guard's), the sandbox's init the
// monitor's. For tests that stop or kill the launcher around bwrap's release.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace zpolicy::tests::kernel {

// The parent of `pid` from /proc/PID/stat, or 0 when it is gone.
inline pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  const auto paren = line.rfind(')');
  if (paren == std::string::npos || paren + 4 >= line.size()) return 0;
  return static_cast<pid_t>(std::atol(line.c_str() + paren + 4));
}

// Found through every process's parent: the kernel's own list (/proc/PID/task/TID/children)
// exists only with CONFIG_PROC_CHILDREN.
inline std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t p = static_cast<pid_t>(std::atol(name.c_str()));
    if (parent_of(p) == pid) out.push_back(p);
  }
  return out;
}

// The --block-fd of the bwrap monitor `monitor` (from its argv), or -1.
inline int block_fd_of(pid_t monitor) {
  std::ifstream in("/proc/" + std::to_string(monitor) + "/cmdline");
  std::string arg;
  for (bool next = false; std::getline(in, arg, '\0');) {
    if (next) return std::stoi(arg);
    next = arg == "--block-fd";
  }
  return -1;
}

inline std::string pid_namespace_of(pid_t pid) {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/pid", ec).string();
}

// The sandbox's init, once there is one (0 before): the launcher's first descendant in a
// pid namespace of its own. zpolicy starts bwrap's monitor below its guard, a plan
// executor starts it directly; the init is the monitor's child.
inline pid_t sandbox_init(pid_t launcher) {
  const std::string host = pid_namespace_of(launcher);
  std::vector<pid_t> level{launcher};
  for (int depth = 0; depth < 3 && !level.empty(); ++depth) {
    std::vector<pid_t> next;
    for (pid_t p : level)
      for (pid_t c : children_of(p)) {
        const std::string ns = pid_namespace_of(c);
        if (!ns.empty() && ns != host) return c;
        next.push_back(c);
      }
    level = next;
  }
  return 0;
}

// Whether `pid` is blocked in read(FD, BUF, 1): bwrap's wait on --block-fd (its other
// blocking read before setup, on an eventfd, reads 8 bytes).
inline bool blocked_on_release(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/syscall");
  std::string nr, fd, buf, count;
  return in >> nr >> fd >> buf >> count && nr == "0" && count == "0x1";
}

// Bytes waiting in the pipe behind descriptor `fd` of `pid` (read through a second reader
// of that pipe, without taking them), or -1.
inline int pipe_bytes(pid_t pid, int fd) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const int reader = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (reader < 0) return -1;
  int n = -1;
  if (ioctl(reader, FIONREAD, &n) != 0) n = -1;
  close(reader);
  return n;
}

// The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), or 'X' when it is gone.
inline char process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 'X';
  const auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? 'X' : line[paren + 2];
}

inline bool gone_or_zombie(pid_t pid) {
  const char state = process_state(pid);
  return state == 'Z' || state == 'X';
}

}  // namespace zpolicy::tests::kernel
