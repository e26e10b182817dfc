#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace zpolicy::runner {

// Where this process stands toward its controlling terminal, as the kernel's job control
// sees it: the supervision (supervise.cpp) and the copies to the terminal
// (standard_streams.cpp) both act on it as the kernel would act on a job of the terminal.

// How often the terminal's foreground process group is looked at while the command holds
// the terminal, or a copy's write waits for the foreground: a process group leaves the
// foreground without any signal to it (the script that started `zpolicy run … &` exits and
// its shell takes the terminal back), and nothing else tells (red team A19-3). A line typed
// at the prompt the shell shows then takes longer than this.
constexpr std::chrono::milliseconds kForegroundLook{50};

// Whether this process is a background job of the terminal on its stdin, stdout or stderr
// (its controlling terminal, whose foreground process group is another).
bool in_background();

// Whether this process is the foreground job of the terminal on its stdin, stdout or
// stderr (its controlling terminal).
bool in_foreground();

// Whether a stop signal stops this process: the kernel discards one sent to an orphaned
// process group (no member has its parent in another group of the same session).
bool stoppable();

// The fields of /proc/PATH/stat from the state on, or "" when gone.
std::string stat_fields(const std::string& path);

// The fields of /proc/PID/stat that job control looks at: the state letter, the parent,
// process group and session, the controlling terminal (tty_nr, as TIOCGDEV encodes a
// terminal's device; 0 for none) and that terminal's foreground process group (tpgid).
struct ProcessStat {
  char state = 0;
  pid_t parent = 0, group = 0, session = 0;
  unsigned int tty = 0;
  pid_t foreground = -1;
};

// /proc/PID/stat of the process whose directory in /proc is `pid` (its pid, or "self"), or
// nullopt when it is gone.
std::optional<ProcessStat> process_stat(const std::string& pid);

// Whether some process in /proc is one `match` takes; nullopt when /proc cannot be listed.
std::optional<bool> any_process(const std::function<bool(const ProcessStat&)>& match);

}  // namespace zpolicy::runner
