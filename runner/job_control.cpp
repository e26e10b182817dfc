#include "runner/job_control.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace zpolicy::runner {
namespace {

// The parent of `pid` from /proc/PID/stat, or 0.
pid_t parent_of(pid_t pid) {
  char state = 0;
  int parent = 0;
  return std::sscanf(stat_fields("/proc/" + std::to_string(pid)).c_str(), "%c %d", &state,
                     &parent) == 2
             ? parent
             : 0;
}

}  // namespace

// The fields follow the command name, which may hold ')' itself: after the last one.
std::string stat_fields(const std::string& path) {
  char buf[512];
  const int fd = open((path + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return {};
  buf[n] = 0;
  const char* paren = std::strrchr(buf, ')');
  return paren && paren[1] == ' ' ? std::string(paren + 2) : std::string();
}

bool in_background() {
  for (int fd = 0; fd <= 2; ++fd) {
    const pid_t foreground = tcgetpgrp(fd);
    if (foreground >= 0) return foreground != getpgrp();
  }
  return false;
}

bool in_foreground() {
  for (int fd = 0; fd <= 2; ++fd) {
    const pid_t foreground = tcgetpgrp(fd);
    if (foreground >= 0) return foreground == getpgrp();
  }
  return false;
}

// Shown by this process or an ancestor in its group whose parent is in another group of
// the session: a script that runs zpolicy (no job control, so in the script's own group)
// counts through the script, whose parent is the shell. Looking at zpolicy's parent alone
// took every run in a script for orphaned, and killed it at `bg` (red team A19-5).
bool stoppable() {
  const pid_t group = getpgrp(), session = getsid(0);
  pid_t parent = getppid();
  for (int depth = 0; parent > 0 && depth < 64; ++depth) {
    if (getsid(parent) != session) return false;
    if (getpgid(parent) != group) return true;
    parent = parent_of(parent);
  }
  return false;
}

}  // namespace zpolicy::runner
