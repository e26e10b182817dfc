#pragma once

#include <sys/types.h>

#include <optional>

#include "runner/child_exec.hpp"

namespace zpolicy::runner {

// The guard between the runner and bwrap (red team R5-K3, R6-K1; docs/run.md "The guard").
// bwrap's init arms its parent-death signal only at points of bwrap's choosing, so a
// runner and a monitor that die before then leave the init without anyone to kill it:
// waiting forever on an eventfd with the run's bind descriptors, or running the command
// with no timeout. The guard is a fork of the runner (no exec) and a child subreaper: it
// starts bwrap in its own process group, so that the runner's kill of that group still
// reaches the whole sandbox; an init orphaned by its monitor becomes the guard's child.
// When the runner dies (the guard's parent-death signal, SIGTERM), when any other signal
// but SIGCHLD and the job-control ones reaches it, or when bwrap's monitor has exited, it
// SIGKILLs every process left below it (an init first: its pid namespace dies with it),
// reaps them, and only then reports: the monitor's wait status, or the signal that ended
// the run, four bytes on `relay`. Then it holds the descriptors SpawnSpec::linger names
// until the runner closes its end of `relay` (or dies), and exits: the last close of a
// removed placeholder (its inode freed, its block discarded) is the guard's, after the
// run, not the runner's. `relay` is one end of a stream socket
// pair: the runner writes the pid of the sandbox's init on it as soon as bwrap names it
// (tell_guard_init), so that after the monitor's exit the guard kills that init instead of
// walking /proc for what is left. The child holds no descriptor of the runner's but the
// ones `c` names and `relay` (close-on-exec, so bwrap never sees it). bwrap starts in a
// copy of the guard's own mount namespace, whose mounts are private
// (runner/private_mounts.hpp): none the host makes during the run reaches the sandbox; a
// guard that cannot make it starts nothing. In that copy the guard's child pins the bind
// sources first (runner/bind_stage.hpp); when it cannot, it says why on the run's standard
// error and the guard exits without a report: nothing started.
//
// Returns the guard's pid, or -1 if it could not be started.
pid_t start_guard(ChildSetup& c, int relay);

// Names the sandbox's init to the guard on the runner's end of the relay (never blocks,
// never raises SIGPIPE: a guard already gone needs no name).
void tell_guard_init(int relay, pid_t init);

// What a guard that exited reported on the read end of its relay: the wait status of
// bwrap's monitor (or of the signal that ended the run); nothing when the guard never
// started bwrap or was killed itself.
std::optional<int> relayed_status(int relay_read);

}  // namespace zpolicy::runner
