#include "tests/fuzz/budget_bench.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "tests/fuzz/crash_guard.hpp"
#include "tests/fuzz/run_input.hpp"

namespace zpolicy::fuzz {
namespace {

constexpr double kBudgetSeconds = 2.0;
constexpr double kBudgetMiB = 512.0;

struct Measured {
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // user + system: what the budget is judged by, since a shared
                           // machine's load stretches wall time, not this
  double peak_mib = 0;
  bool failed = false;
};

Measured measure(const Corpus& corpus, const Input& input, const std::string& path,
                 const std::string& what, const BenchOptions& options) {
  std::fflush(nullptr);  // or the child's exit prints the parent's buffer again
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child == 0) {
#if !defined(__SANITIZE_ADDRESS__)
    // A blow-up stops at 4 GiB rather than taking the shared machine's memory (ASan
    // reserves far more address space than it uses, so it keeps no such limit).
    const rlimit as{rlim_t{4} << 30, rlim_t{4} << 30};
    ::setrlimit(RLIMIT_AS, &as);
#endif
    int code = 0;
    try {
      CrashGuard guard(input.bytes, path, what, options.timeout_seconds);
      const Outcome o = run_input(corpus, input, options.workspace);
      if (o.broken) {
        std::cerr << "zpolicy_fuzz: " << *o.broken << " on " << what << "\n";
        code = 1;
      }
    } catch (const std::exception& e) {
      std::cerr << "zpolicy_fuzz: exception escaped on " << what << ": " << e.what() << "\n";
      code = 1;
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  rusage usage{};
  ::wait4(child, &status, 0, &usage);
  Measured m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  m.peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
  m.failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  return m;
}

}  // namespace

int run_budget_bench(const Corpus& corpus, const BenchOptions& options, const std::string& program) {
  bool any_failed = false;
  std::printf("%-8s %9s %10s %9s %9s %9s  %s\n", "kind", "iteration", "bytes", "wall s",
              "CPU s", "peak MiB", "over budget");
  for (Kind kind : options.kinds) {
    size_t over = 0;
    double worst_seconds = 0, worst_cpu = 0, worst_mib = 0;
    for (uint64_t i = 0; i < options.iterations; ++i) {
      const Input input = corpus.generate_hostile(kind, options.seed, i);
      const std::string stem = std::string("bench-") + to_string(kind) + "-s" +
                               std::to_string(options.seed) + "-i" + std::to_string(i);
      const std::string path = options.crash_dir + "/" + file_name(input, stem);
      const std::string what = std::string(to_string(kind)) + " bench iteration " +
                               std::to_string(i) + ", seed " + std::to_string(options.seed);
      const Measured m = measure(corpus, input, path, what, options);
      worst_seconds = std::max(worst_seconds, m.seconds);
      worst_cpu = std::max(worst_cpu, m.cpu_seconds);
      worst_mib = std::max(worst_mib, m.peak_mib);
      const bool over_budget = m.cpu_seconds > kBudgetSeconds || m.peak_mib > kBudgetMiB;
      if (over_budget) {
        ++over;
        save_input(input.bytes, path);
      }
      any_failed |= m.failed;
      if (over_budget || m.failed)
        std::printf("%-8s %9llu %10zu %9.2f %9.2f %9.1f  %s%s\n", to_string(kind),
                    static_cast<unsigned long long>(i), input.bytes.size(), m.seconds,
                    m.cpu_seconds, m.peak_mib,
                    over_budget ? path.c_str() : "", m.failed ? " FAILED" : "");
    }
    std::printf("%-8s %llu inputs, %zu over the 2 s / 512 MiB budget; slowest %.2f s wall, "
                "%.2f s CPU; largest peak %.1f MiB\n",
                to_string(kind), static_cast<unsigned long long>(options.iterations), over,
                worst_seconds, worst_cpu, worst_mib);
    std::fflush(stdout);
  }
  if (any_failed) std::printf("a child failed: replay its input with %s --replay FILE\n", program.c_str());
  return any_failed ? 1 : 0;
}

}  // namespace zpolicy::fuzz
