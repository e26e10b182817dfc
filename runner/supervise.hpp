#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/bind_stage.hpp"
#include "runner/read_only_streams.hpp"

namespace zpolicy::runner {

// On timeout every process of the sandbox gets SIGTERM first and this long to exit (a
// test runner writes its report), then the sandbox is killed (docs/run.md "Timeout").
inline constexpr std::chrono::milliseconds kTimeoutGrace{2000};

// One child to start and watch: the bwrap monitor, sandbox-exec, or the command itself
// under danger-full-access.
struct SpawnSpec {
  std::string exe;  // absolute; executed as is, never looked up in PATH
  std::vector<std::string> argv;
  std::vector<std::string> envp;
  std::vector<std::pair<int, int>> fds;  // (fd in this process, fd number in the child)
  std::string cwd;                       // the child's working directory; empty: this process's
  std::optional<std::chrono::milliseconds> timeout;
  std::chrono::milliseconds timeout_grace = kTimeoutGrace;  // SIGTERM, then this, then SIGKILL
  int status_fd = -1;  // read end of bwrap's --json-status-fd pipe, or -1
  // Called once, as soon as bwrap names the sandbox's init (before the command can have
  // started when bwrap waits on --block-fd); false kills the sandbox. `guard`: the guard's
  // pid when `guarded` (its mount namespace is the one bwrap copied), else -1.
  std::function<bool(pid_t init, pid_t guard)> on_started;
  // Started below a guard (runner/sandbox_guard.hpp, Linux): nothing of the sandbox
  // outlives this process, or bwrap's monitor, whenever either dies.
  bool guarded = false;
  // Lets the command start (bwrap's --block-fd), called after on_started held and only if
  // no signal came and the deadline has not passed meanwhile: a run cancelled before its
  // release never starts its command (red team R5-K2). false kills the sandbox.
  std::function<bool()> release;
  // Readable when something may need the run stopped (runner/host_name_watch.hpp); then
  // `tripped` reads what happened and says whether to kill the sandbox.
  int tripwire_fd = -1;
  std::function<bool()> tripped;
  // Guarded runs: descriptors of this process whose last reference the guard drops, after
  // `reported` has run. Closing the last descriptor of a removed placeholder, of a watch,
  // of an unlinked run record frees the object, and the kernel does that work (inode
  // eviction, block discards, an RCU grace period) in the closing process, milliseconds
  // each on some filesystems: done by the guard, which nobody waits for once it has
  // reported, it is off the run's way out (docs/run.md "The guard").
  std::vector<int> linger;
  // Guarded runs: the bind descriptors (number in the child, verified path) the guard's
  // child pins where bwrap resolves them to nothing else before it execs bwrap
  // (runner/bind_stage.hpp).
  std::vector<StagedSource> staged;
  // Guarded runs: the standard streams the guard's child opens again through a read-only
  // mount of their device before it execs bwrap (runner/read_only_streams.hpp).
  std::vector<ReadOnlyStream> read_only_streams;
  // The caller's controlling terminal is one of the command's standard streams: the
  // sandbox is neither released nor let run while zpolicy is a background job
  // (runner/standard_streams.hpp, red team R18-4, A19-1, A19-2).
  bool controlling_terminal = false;
  // Set when a copy of the sandbox's output into the caller's controlling terminal may
  // wait for the foreground: whether one does (`stty tostop` in the background), so that
  // the job stops for it, as for a background writer (StandardStreams::output_held()).
  std::function<bool()> output_held;
  // Guarded runs: the read-only mounts of the verified argv inside its writable binds,
  // which that child mounts in the writable binds' copies as well (red team E1d).
  std::vector<StagedProtection> protections;
  // Guarded runs: called once the guard has reported (nothing of the sandbox is left to
  // rely on anything), before the guard is let go.
  std::function<void()> reported;
};

struct Outcome {
  enum class Kind { Exited, Signaled, TimedOut, SpawnFailed };
  Kind kind = Kind::SpawnFailed;
  int code = 0;  // exit code, or signal number
  // From bwrap's status stream (status_fd): `started` once it reported the sandbox's init
  // (child-pid; before that the command cannot have been exec'd), `setup_finished` once it
  // reported the command's exit (which bwrap does only when the command was exec'd).
  bool started = false;
  bool setup_finished = false;
  int signal = 0;                 // the last SIGINT, SIGTERM or SIGHUP this process received, or 0
  bool killed_by_signal = false;  // a second such signal made us kill the whole tree
  bool start_refused = false;     // on_started or release failed and the sandbox was killed
  bool grace_expired = false;     // timed out, and something outlived the SIGTERM's grace
  // Whether SpawnSpec::release was called (or there was none). bwrap starts nothing before
  // it: the runner holds the --block-fd pipe and the seccomp program until then.
  bool released = false;
  bool tripped = false;  // SpawnSpec::tripped said so, and the sandbox was killed
  // The command holds the caller's terminal and zpolicy was left in its background in a
  // process group the kernel does not stop (orphaned): the sandbox was killed rather than
  // let read the terminal (`signal` is SIGTTIN; red team R18-4, A19-3).
  bool orphaned_in_background = false;
};

// Whether the command of a bwrap run was exec'd, as far as bwrap's status stream and the
// monitor's fate tell. Unknown only when the monitor died before it could report.
enum class Execution { Ran, DidNotRun, Unknown };
Execution execution_of(const Outcome& o);

// Holds the signals whose default action would end this process (those of supervise()'s
// set still at their default) blocked in the calling thread, from before a run changes
// anything such an end leaves behind until supervise() takes them. Left to their default
// there, a SIGINT, SIGTERM or SIGHUP after `run` had truncated the status file and made
// placeholders ended zpolicy: an empty status document, no "nothing ran", placeholders in
// the workspace until a later run or `cleanup` (one made but not yet recorded stayed for
// good), and before the truncation a previous run's document stood (red team A28B-1).
// Held, such a signal stays pending: supervise() takes it as one during the sandbox's
// setup (nothing ran, the sandbox killed, the placeholders removed, the status written),
// and one still pending when the outermost hold ends (a refusal before supervise()) is
// delivered then, by the caller's disposition, after the status document is written.
// Holds nest.
class HeldSignals {
 public:
  HeldSignals();
  ~HeldSignals();
  HeldSignals(const HeldSignals&) = delete;
  HeldSignals& operator=(const HeldSignals&) = delete;

 private:
  sigset_t found_;
};

// Runs the child in its own process group (with PR_SET_PDEATHSIG on Linux; when guarded,
// below its guard, in the guard's group; the outcome is then the monitor's, as the guard
// reported it), forwards
// SIGINT, SIGTERM and SIGHUP to every process of the sandbox (a second one kills them
// all; before the release, the first one does: nothing ran), and on timeout sends SIGTERM
// the same way (before the release: kills it, nothing ran) and kills the whole tree once the
// timeout's grace is over or a signal comes: the sandbox's pid namespace dies with its
// init; without one (sandbox-exec), the child's process group is killed. A sandbox is
// killed through its init first, so that bwrap's monitor survives long enough to report
// whether the command had been exec'd. The terminal settings of stdin, stdout and stderr
// (those that are terminals) are restored when the child is gone, whatever it did to them.
Outcome supervise(const SpawnSpec& spec);

// The line `run` prints on timeout (exit 124): who got SIGTERM, and whether the sandbox
// (`sandbox`; else the command's process group) ended within the grace or was killed
// after it. `when` qualifies the timeout: "", " before the command started; nothing ran".
std::string timeout_report(const Outcome& o, bool sandbox, const std::string& when = "");

// The exit status `run` reports for an outcome: the child's own, 124 on timeout, 128+N
// when killed by signal N, 125 when it could not be started.
int status_of(const Outcome& o);

}  // namespace zpolicy::runner
