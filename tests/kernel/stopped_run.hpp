#pragma once

#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// R18-3's ^Z (SIGTSTP) runs, for `zpolicy run` and for an executor of its plan: what is
// stopped runs in a process group of its own, and a command that ticks shows whether it
// ran on meanwhile.
namespace zpolicy::tests::kernel {

// A RunSpec::root_prefix that runs what follows in a process group of its own, as a
// shell's job, its parent in the same session (the kernel does not stop an orphaned
// group on SIGTSTP), and exits with its status (128+N for signal N).
inline const std::vector<std::string> kInOwnProcessGroup = {
    "/usr/bin/python3", "-c",
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.setpgid(0, 0)\n"
    "    os.execv(sys.argv[1], sys.argv[1:])\n"
    "st = os.waitpid(pid, 0)[1]\n"
    "sys.exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))\n"};

// A command script that appends a line to `ticks` every 0.25 s, 12 times, then makes `late`.
inline const std::string kTicks =
    "i=0; while [ $i -lt 12 ]; do echo $i >> ticks; sleep 0.25; i=$((i+1)); done; touch late";

// The lines in the file at `path` (none when it cannot be read).
inline size_t lines_in(const std::string& path) {
  const std::string text = read_file(path).value_or("");
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace zpolicy::tests::kernel
