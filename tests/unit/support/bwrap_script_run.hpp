#pragma once

// Running a shell script in a real bwrap built from a (test) argv, for the tests that hold
// the bwrap analyzer to the kernel: tests/kernel/verify_bwrap_model.cpp (the mount table's
// answers) and the real-bwrap referee of verify_bwrap's verdicts (bwrap_referee.hpp, in the
// mutation and kernel tiers). They bind an argv to a scratch tree and read what the script
// prints.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

namespace zpolicy::test {

inline constexpr const char* kBwrapPath = "/usr/bin/bwrap";

// `text` with ${WORKSPACE}, ${HOME} and ${TMPDIR} bound to ROOT/w, ROOT/h and ROOT/t: the
// scratch tree's workspace, home and temporary directory.
inline std::string bind_scratch_roots(std::string text, const std::string& root) {
  for (auto [var, dir] :
       {std::pair{"${WORKSPACE}", "/w"}, std::pair{"${HOME}", "/h"}, std::pair{"${TMPDIR}", "/t"}})
    for (size_t at = text.find(var); at != std::string::npos; at = text.find(var))
      text.replace(at, std::string(var).size(), root + dir);
  return text;
}

struct ScriptRun {
  int status = -1;     // waitpid's status; -1 when no process could be started
  std::string output;  // standard output (standard error goes to /dev/null)
};

// `/usr/bin/bwrap OPTIONS... -- /bin/sh -c SCRIPT`, as the caller or, through setpriv, as
// nobody (uid and gid 65534, no groups).
inline ScriptRun run_script_in_bwrap(const std::vector<std::vector<std::string>>& options,
                                     const std::string& script, bool as_nobody) {
  std::vector<std::string> args;
  if (as_nobody) args = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  args.push_back(kBwrapPath);
  for (const auto& o : options) args.insert(args.end(), o.begin(), o.end());
  args.insert(args.end(), {"--", "/bin/sh", "-c", script});
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  ScriptRun run;
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return run;
  const pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    return run;
  }
  if (pid == 0) {
    // The test's own directory may be the checkout, which nobody cannot enter (mode 700).
    if (chdir("/") != 0) _exit(127);
    dup2(out[1], 1);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(out[1]);
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;)
    run.output.append(buf, static_cast<size_t>(n));
  close(out[0]);
  waitpid(pid, &run.status, 0);
  return run;
}

}  // namespace zpolicy::test
