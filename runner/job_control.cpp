#include "runner/job_control.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace zpolicy::runner {

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

std::optional<ProcessStat> process_stat(const std::string& pid) {
  ProcessStat p;
  if (std::sscanf(stat_fields("/proc/" + pid).c_str(), "%c %d %d %d %u %d", &p.state, &p.parent,
                  &p.group, &p.session, &p.tty, &p.foreground) != 6)
    return std::nullopt;
  return p;
}

std::optional<bool> any_process(const std::function<bool(const ProcessStat&)>& match) {
  DIR* proc = opendir("/proc");
  if (!proc) return std::nullopt;
  bool found = false;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    const auto p = process_stat(e->d_name);
    if (p && match(*p)) {
      found = true;
      break;
    }
  }
  closedir(proc);
  return found;
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
// Else any other member of the group, as the kernel looks (red team C20-2): `(zpolicy run …
// &)` in a script, a job of its shell, leaves zpolicy's parent gone (its parent is init)
// while the script waits on in the group, whose parent is the shell. The ancestors alone
// took that group for orphaned: a copy under `stty tostop` dropped the output and the run
// ended 0, where the kernel stops the job.
bool stoppable() {
  const pid_t group = getpgrp(), session = getsid(0);
  pid_t parent = getppid();
  for (int depth = 0; parent > 0 && depth < 64; ++depth) {
    if (getsid(parent) != session) break;
    if (getpgid(parent) != group) return true;
    const auto up = process_stat(std::to_string(parent));
    parent = up ? up->parent : 0;
  }
  // A zombie's parent no longer counts, nor does init (the kernel's
  // will_become_orphaned_pgrp).
  return any_process([&](const ProcessStat& p) {
           return p.group == group && p.state != 'Z' && p.state != 'X' && p.parent > 1 &&
                  getsid(p.parent) == session && getpgid(p.parent) != group;
         })
      .value_or(false);
}

}  // namespace zpolicy::runner
