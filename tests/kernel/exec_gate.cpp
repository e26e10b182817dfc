#include "exec_gate.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "compiler/backend_paths.hpp"
#include "sandbox_fixture.hpp"

namespace zpolicy::tests::kernel {
namespace {

pid_t ppid_from_stat(pid_t pid) {
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return -1;
  const size_t paren = stat->rfind(')');
  if (paren == std::string::npos) return -1;
  char state;
  int ppid = -1;
  return std::sscanf(stat->c_str() + paren + 1, " %c %d", &state, &ppid) == 2 ? ppid : -1;
}

}  // namespace

ExecGate::ExecGate(std::function<void()> act) : act_(std::move(act)) {
  fan_ = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_CLOEXEC);
  BOOST_TEST_REQUIRE(fan_ >= 0, "fanotify_init: " << std::strerror(errno));
  BOOST_TEST_REQUIRE(fanotify_mark(fan_, FAN_MARK_ADD, FAN_OPEN_EXEC_PERM, AT_FDCWD,
                                   compiler::kBwrapPath) == 0,
                     "fanotify_mark: " << std::strerror(errno));
  thread_ = std::thread([this] { serve(); });
}

ExecGate::~ExecGate() {
  stop_ = true;
  thread_.join();
  close(fan_);
}

void ExecGate::serve() {
  alignas(fanotify_event_metadata) char buf[4096];
  while (!stop_) {
    pollfd p{fan_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = read(fan_, buf, sizeof buf);
    auto* ev = reinterpret_cast<fanotify_event_metadata*>(buf);
    for (ssize_t left = n; FAN_EVENT_OK(ev, left); ev = FAN_EVENT_NEXT(ev, left)) {
      if (!acted_) {
        // The run may exec bwrap before the test learns zpolicy's pid: wait for it.
        while (zpolicy_ == 0 && !stop_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const pid_t parent = ppid_from_stat(ev->pid);
        if (parent == zpolicy_ || (parent > 0 && ppid_from_stat(parent) == zpolicy_)) {
          bwrap_ = ev->pid;
          act_();
          acted_ = true;
        }
      }
      fanotify_response r{ev->fd, FAN_ALLOW};
      (void)!write(fan_, &r, sizeof r);
      close(ev->fd);
    }
  }
}

}  // namespace zpolicy::tests::kernel
