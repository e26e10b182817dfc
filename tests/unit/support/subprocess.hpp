#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace zpolicy::test {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
  long max_rss_kb = 0;
  // The child's ru_maxrss counts its fork-time copy of this process until exec: a peak
  // no higher than this (plus what the child touched before exec) is the harness's, not
  // the program's. Under ASan the harness alone holds some 300 MiB.
  long harness_rss_kb = 0;
};

inline long resident_kb() {
  long pages = 0, resident = 0;
  std::ifstream("/proc/self/statm") >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `argv` with stdout and stderr captured in files under `scratch` (so no pipe can
// fill up), stdin from /dev/null, a CPU-time limit so that a hang fails the test instead
// of stalling the suite, and (outside sanitizer builds, whose shadow memory needs a huge
// address space) a 1 GiB address-space limit so that a runaway allocation fails the test
// instead of the machine.
inline ProcessResult run_process(const std::vector<std::string>& argv, const std::string& scratch,
                                 const std::string& cwd = "", rlim_t cpu_seconds = 20) {
  const std::string out_path = scratch + "/.stdout", err_path = scratch + "/.stderr";
  const long harness_rss_kb = resident_kb();
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
#ifdef ZPOLICY_SANITIZED_BINARY
  // The binary under test is sanitized (tests/CMakeLists.txt; this harness code is not).
  // LeakSanitizer's scan at its exit is about a quarter of each start's CPU
  // (docs/benchmarks.md "CI time"), hundreds of starts per run; the library's own leaks
  // are found by the tests that call it in this process.
  std::string options = "ASAN_OPTIONS=detect_leaks=0";
  for (auto it = env.begin(); it != env.end(); ++it)
    if (it->starts_with("ASAN_OPTIONS=")) {
      options += ":" + it->substr(13);
      env.erase(it);
      break;
    }
  env.push_back(options);
#endif
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) _exit(120);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    rlimit cpu{cpu_seconds, cpu_seconds};
    setrlimit(RLIMIT_CPU, &cpu);
#ifndef ZPOLICY_SANITIZED_BINARY
    rlimit as{rlim_t{1} << 30, rlim_t{1} << 30};
    setrlimit(RLIMIT_AS, &as);
#endif
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(121);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execve(args[0], args.data(), envp.data());
    _exit(122);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
  ProcessResult r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  r.max_rss_kb = usage.ru_maxrss;
  r.harness_rss_kb = harness_rss_kb;
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return r;
}

}  // namespace zpolicy::test
