#pragma once

#include <string>

namespace zpolicy::fuzz {

// Keeps the input under test where a crash can still reach it: on a fatal signal, a
// sanitizer report (ASan and UBSan call the death callback after printing theirs), an
// uncaught exception or the per-input wall limit, the input is written to `path` and
// the replay command printed, then the process dies as it would have.
class CrashGuard {
 public:
  // Installs the handlers once; `program` is argv[0], for the replay command.
  static void install(const std::string& program);

  // From here until the guard is destroyed, a crash saves `bytes` to `path`; a run
  // over `timeout_seconds` of CPU time (or ten times that of wall time) is a hang. `what` names the input in the report
  // ("bwrap iteration 523, seed 1"). The arguments must outlive the guard.
  CrashGuard(const std::string& bytes, const std::string& path, const std::string& what,
             unsigned timeout_seconds);
  ~CrashGuard();
  CrashGuard(const CrashGuard&) = delete;
  CrashGuard& operator=(const CrashGuard&) = delete;
};

// Writes `bytes` to `path` (for failures that do return: a broken promise, an exception).
bool save_input(const std::string& bytes, const std::string& path);

}  // namespace zpolicy::fuzz
