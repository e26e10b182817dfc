#pragma once
// A fanotify permission gate on the exec of bwrap, for tests that make a race with bwrap's
// setup deterministic: the runner has opened and checked every bind source when it execs
// bwrap, and bwrap has not set anything up yet.
#include <sys/types.h>

#include <atomic>
#include <functional>
#include <thread>

namespace zpolicy::tests::kernel {

// Holds every exec of bwrap until it is judged; at the first exec by a child of the
// process given to watch() (the `zpolicy run` under test; or a grandchild: zpolicy starts
// bwrap below its guard), runs `act` before allowing it; bwrap() is then that process.
// Any other exec (none is expected while a test runs) is allowed at once.
class ExecGate {
 public:
  explicit ExecGate(std::function<void()> act);
  ~ExecGate();
  ExecGate(const ExecGate&) = delete;
  ExecGate& operator=(const ExecGate&) = delete;
  void watch(pid_t zpolicy) { zpolicy_ = zpolicy; }
  bool acted() const { return acted_; }
  pid_t bwrap() const { return bwrap_; }

 private:
  void serve();
  std::function<void()> act_;
  int fan_ = -1;
  std::atomic<pid_t> zpolicy_{0}, bwrap_{0};
  std::atomic<bool> acted_{false}, stop_{false};
  std::thread thread_;
};

}  // namespace zpolicy::tests::kernel
