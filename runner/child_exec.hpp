#pragma once

#include <signal.h>
#include <sys/types.h>

#include <vector>

#include "runner/supervise.hpp"

namespace zpolicy::runner {

// What a child of the runner needs to exec its program, prepared by the parent: the child
// runs where it must not allocate (in our memory until it execs, or in a fork of a process
// that may have other threads), so it only makes system calls.
struct ChildSetup {
  const SpawnSpec* spec = nullptr;
  sigset_t old_mask;  // the signal mask the program starts with
  pid_t parent = 0;   // the process that starts the child: if it is gone, nothing starts
  bool own_group = true;            // the child leads a process group of its own
  bool descriptors_placed = false;  // spec->fds already hold their child numbers
  bool staging_failed = false;      // the guard's child could not stage spec->staged
  std::vector<char*> argv, envp;
  std::vector<int> moved;  // scratch: one slot per entry of spec->fds
  std::vector<int> lingering;  // scratch: one slot per entry of spec->linger
};

ChildSetup child_setup(const SpawnSpec& spec, const sigset_t& old_mask);

// Puts each of spec->fds at its child number and closes every other descriptor above 2,
// except `keep`, which is moved to the first number above them (close-on-exec) and
// returned, and a copy of each of spec->linger, at the numbers after it (close-on-exec);
// -1 if a descriptor could not be placed. System calls only.
int place_descriptors(ChildSetup& c, int keep);

// The child's side: arms its parent-death signal (SIGKILL), checks that its parent still
// lives, places the descriptors (unless placed), changes directory, resets the watched
// signals and execs. Returns only by _exit: 125 on a setup failure, 126/127 when the
// program cannot be executed / does not exist.
int exec_child(void* setup);

}  // namespace zpolicy::runner
