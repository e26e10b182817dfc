#include "tests/fuzz/crash_guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>

#if defined(__SANITIZE_ADDRESS__)
extern "C" void __sanitizer_set_death_callback(void (*callback)(void));
extern "C" void __sanitizer_print_stack_trace();
#endif

namespace zpolicy::fuzz {
namespace {

// What the handlers read. Set before each input runs, from memory that stays put while
// it runs: a handler may only make async-signal-safe calls, so nothing is formatted or
// allocated there.
struct Current {
  const std::string* bytes = nullptr;
  const std::string* path = nullptr;
  const std::string* what = nullptr;
};
std::atomic<const Current*> current{nullptr};
const std::string* program_name = nullptr;

void say(const char* s) {
  for (size_t n = std::strlen(s); n > 0;) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w, n -= static_cast<size_t>(w);
  }
}

void say(const std::string* s) {
  if (s) say(s->c_str());
}

// Saves the input and prints how to replay it; safe in a signal handler.
void report(const char* why) {
  const Current* c = current.exchange(nullptr);
  if (!c) return;
  say("\nzpolicy_fuzz: ");
  say(why);
  say(" on ");
  say(c->what);
  const int fd = ::open(c->path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    const char* p = c->bytes->data();
    for (size_t n = c->bytes->size(); n > 0;) {
      const ssize_t w = ::write(fd, p, n);
      if (w <= 0) break;
      p += w, n -= static_cast<size_t>(w);
    }
    ::close(fd);
    say("\nzpolicy_fuzz: input saved; replay with: ");
    say(program_name);
    say(" --replay ");
    say(c->path);
    say("\n");
  } else {
    say("\nzpolicy_fuzz: could not save the input to ");
    say(c->path);
    say("\n");
  }
}

void on_fatal_signal(int sig) {
  report(sig == SIGABRT ? "abort" : "fatal signal");
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void on_timeout(int sig) {
  report(sig == SIGPROF ? "hang (over the per-input CPU time limit)"
                        : "hang (over the per-input wall limit)");
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_print_stack_trace();
#endif
  ::_exit(1);
}

#if defined(__SANITIZE_ADDRESS__)
void on_sanitizer_death() { report("sanitizer report"); }
#endif

void handle(int sig, void (*handler)(int), bool alternate_stack) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sa.sa_flags = alternate_stack ? SA_ONSTACK : 0;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
}

}  // namespace

void CrashGuard::install(const std::string& program) {
  program_name = new std::string(program);
  handle(SIGALRM, on_timeout, false);
  handle(SIGPROF, on_timeout, false);
  handle(SIGABRT, on_fatal_signal, false);
#if defined(__SANITIZE_ADDRESS__)
  // ASan reports SEGV, BUS and FPE (a stack overflow too) and then calls back.
  __sanitizer_set_death_callback(on_sanitizer_death);
#else
  // A stack overflow leaves no stack to report from: the handlers get their own.
  static char alternate[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alternate;
  ss.ss_size = sizeof alternate;
  ::sigaltstack(&ss, nullptr);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) handle(sig, on_fatal_signal, true);
#endif
}

CrashGuard::CrashGuard(const std::string& bytes, const std::string& path, const std::string& what,
                       unsigned timeout_seconds) {
  current.store(new Current{&bytes, &path, &what});
  // The limit is on CPU time, which a busy shared machine does not stretch; the wall
  // limit, ten times longer, catches a wait that burns none.
  itimerval cpu{};
  cpu.it_value.tv_sec = timeout_seconds;
  ::setitimer(ITIMER_PROF, &cpu, nullptr);
  ::alarm(10 * timeout_seconds);
}

CrashGuard::~CrashGuard() {
  const itimerval off{};
  ::setitimer(ITIMER_PROF, &off, nullptr);
  ::alarm(0);
  delete current.exchange(nullptr);
}

bool save_input(const std::string& bytes, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  return static_cast<bool>(out);
}

}  // namespace zpolicy::fuzz
