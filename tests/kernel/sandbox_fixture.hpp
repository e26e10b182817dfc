#pragma once

// Host-side harness for the kernel tests: a fresh workspace and HOME per test, the real
// `zpolicy run` started as root or as an unprivileged user, and observations made from
// the host (files, sockets, processes) rather than trusting what the sandbox reports.

#include <sys/syscall.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace zpolicy::tests::kernel {

// Who starts `zpolicy run`: root on the host, or uid/gid 65534 through setpriv.
enum class Caller { Root, Nobody };
std::ostream& operator<<(std::ostream& os, Caller c);
inline const std::vector<Caller> kCallers{Caller::Root, Caller::Nobody};
uid_t uid_of(Caller c);

// Printed by Sandbox::sh after the escape attempts, so a test can tell "the attempt
// failed inside a running sandbox" from "the sandbox never ran".
inline constexpr const char* kDoneMarker = "zpolicy-kernel-test: script finished";

// Exported by the harness to every run; it must never be visible inside.
inline constexpr const char* kSecretName = "ZPOLICY_KT_SECRET";
inline constexpr const char* kSecretValue = "hunter2-must-not-leak";

// The programs the tests start, staged by the suite's global fixture into a root-owned
// 0755 directory under /var/tmp: the build tree may lie where `nobody` cannot enter (a
// checkout under /root, mode 700, or a `mktemp -d` clone), and /var/tmp is visible,
// read-only, inside the sandbox.
const std::string& zpolicy_binary();
const std::string& seccomp_probe();
// examples/c/run_command.c: `zpolicy run` as an embedder of the C API does it (run(plan)).
const std::string& embedder_binary();

inline constexpr const char* kHostPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

struct RunResult {
  int exit_code = -1;      // zpolicy's status; 128+N when it was killed by signal N
  bool hit_limit = false;  // the harness killed it after RunSpec::limit
  double seconds = 0;
  std::string out, err;

  bool completed() const;  // exit 0 and the done marker printed
  std::string describe() const;
};

struct RunSpec {
  std::vector<std::string> options;  // `zpolicy run` options, before "--"
  std::vector<std::string> command;
  std::vector<std::string> extra_env;  // NAME=VALUE added to (or replacing in) the caller's env
  std::optional<std::string> cwd;      // default: the workspace
  // Run as root before the caller's own argv (setpriv ... zpolicy ...), which is
  // appended as its arguments: e.g. {"unshare", "-m", "sh", "-c", "...; exec \"$@\"", "sh"}.
  std::vector<std::string> root_prefix;
  // What runs in place of `zpolicy run` (given the same options, "--" and the command):
  // {embedder_binary()}. Empty: zpolicy run.
  std::vector<std::string> launcher;
  std::chrono::milliseconds limit{30000};
  int stdin_fd = -1;  // zpolicy's stdin (e.g. a pty); -1: /dev/null
};

// A RunSpec::root_prefix that runs `script` with `sh -c` in a mount namespace of its own
// (private propagation: nothing it mounts reaches the host), `args` as its $1..., then
// whatever argv follows as "$@" (the script ends in `exec "$@"` or runs it).
inline std::vector<std::string> in_private_mount_namespace(const std::string& script,
                                                           std::vector<std::string> args = {}) {
  std::vector<std::string> argv = {"/usr/bin/unshare", "-m", "--propagation", "private",
                                   "/bin/sh",          "-c", script,          "sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// A RunSpec::root_prefix under which the host shows `src` at `point` too (`mount --bind`),
// as a host's own bind mount would, for what runs after it only.
inline std::vector<std::string> host_bind_mount(const std::string& src, const std::string& point) {
  return in_private_mount_namespace("mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"",
                                    {src, point});
}

// The argv of strace running what follows it (its processes and their children), each
// process's first system call of each of `calls` held `usec` microseconds on entry, nothing
// printed: the window in which a test's host script acts.
inline std::vector<std::string> strace_holding(const std::vector<std::string>& calls, long usec) {
  std::string traced;
  for (const auto& call : calls) traced += (traced.empty() ? "" : ",") + call;
  std::vector<std::string> argv = {"/usr/bin/strace", "-f", "-qq", "-o", "/dev/null", "-e",
                                   "trace=" + traced};
  for (const auto& call : calls)
    argv.insert(argv.end(),
                {"-e", "inject=" + call + ":delay_enter=" + std::to_string(usec) + ":when=1"});
  return argv;
}
inline std::vector<std::string> strace_holding(const std::string& call, long usec) {
  return strace_holding(std::vector<std::string>{call}, usec);
}

// What the host does while a run starts, for host_acts_while_held.
struct HeldCall {
  std::string syscall;  // strace's name of the call held, e.g. "unshare"
  long nr;              // its number, as /proc/PID/syscall shows it
  // A grep pattern for the arguments /proc/PID/syscall shows after the number; e.g. the
  // guard's first unshare: "0x\\(100\\)\\?20000 " (CLONE_NEWNS, with CLONE_NEWUSER or not).
  std::string args_pattern;
};

// Shell functions for a RunSpec::root_prefix in which the host acts while the run starts
// (`sh -c '<these>( ... ) & exec "$@"'`): `mine PID` is true when PID descends from the
// prefix's shell, whose pid the program it execs keeps; `held NR ARGS [WORD]` when one of
// those processes is in system call NR with arguments matching the grep pattern ARGS (and
// WORD in its command line). The walk up forks nothing: the held call lasts 0.3 s, and on
// a loaded machine a fork per parent took longer. Only this run's processes count: other suites'
// runs, side by side with this one (tests/kernel/private_host_state.sh), make the same calls.
// The functions' variables are the calling script's globals (POSIX sh has no `local`), so
// they are named `_zp_own_*`, which no test uses: a `p` of theirs once overwrote a test's own.
inline constexpr const char* kShellOwnProcesses =
    "mine() { _zp_own_p=$1; while [ -n \"$_zp_own_p\" ] && [ \"$_zp_own_p\" -gt 1 ]; do "
    "[ \"$_zp_own_p\" = \"$$\" ] && return 0; _zp_own_q=$_zp_own_p; _zp_own_p=; "
    "while read -r _zp_own_k _zp_own_v; do "
    "[ \"$_zp_own_k\" = PPid: ] && _zp_own_p=$_zp_own_v && break; done "
    "</proc/$_zp_own_q/status 2>/dev/null; done; return 1; }; "
    "held() { for _zp_own_f in $(grep -ls \"^$1 $2\" /proc/[0-9]*/syscall); do "
    "_zp_own_d=${_zp_own_f%/syscall}; mine ${_zp_own_d#/proc/} || continue; "
    "[ -z \"$3\" ] || grep -qs \"$3\" $_zp_own_d/cmdline || continue; "
    "return 0; done; return 1; }; ";

// The guard's first unshare (CLONE_NEWNS, with CLONE_NEWUSER or not): the end of the
// window in which what the host mounts reaches the sandbox.
inline const HeldCall kGuardUnshare{"unshare", SYS_unshare, "0x\\(100\\)\\?20000 "};

// A RunSpec::root_prefix in which the host acts while a run starts: a mount namespace of
// the test's own with shared propagation (standing for the host's; its mounts end with
// it). `before` runs first (sh, `args` as its $1...); then strace holds each process's
// first `held` call 0.3 s, and its first call of every name in `also_held` 0.2 s, while
// `script` (the same arguments) runs in the background as soon as a zpolicy process is in
// the held call. The script may wait for another call with `w NR PATTERN`.
inline std::vector<std::string> host_acts_while_held(const HeldCall& held,
                                                     const std::string& script,
                                                     std::vector<std::string> args,
                                                     const std::string& before = ":",
                                                     std::vector<std::string> also_held = {}) {
  // Only zpolicy's processes count (the guard's child execs bwrap from zpolicy's image),
  // not this script's own.
  const std::string wait_for =
      std::string(kShellOwnProcesses) +
      "w() { _zp_own_i=0; while [ $_zp_own_i -lt 500 ]; do "
      "held \"$1\" \"$2\" zpolicy && return 0; sleep 0.01; _zp_own_i=$((_zp_own_i+1)); done; }; ";
  std::vector<std::string> argv = {"/usr/bin/unshare",
                                   "-m",
                                   "--propagation",
                                   "shared",
                                   "/bin/sh",
                                   "-c",
                                   before + " || exit 99; ( " + wait_for + "w " +
                                       std::to_string(held.nr) + " '" + held.args_pattern + "'; " +
                                       script + " ) >/dev/null 2>&1 & shift " +
                                       std::to_string(args.size()) + "; exec \"$@\"",
                                   "sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string traced = held.syscall;
  for (const auto& s : also_held) traced += "," + s;
  argv.insert(argv.end(),
              {"/usr/bin/strace", "-f", "--seccomp-bpf", "-qq", "-o", "/dev/null", "-e",
               "trace=" + traced, "-e", "inject=" + held.syscall + ":delay_enter=300000:when=1"});
  for (const auto& s : also_held)
    argv.insert(argv.end(), {"-e", "inject=" + s + ":delay_enter=200000:when=1"});
  return argv;
}

// A started `zpolicy run`; `pid` is zpolicy's own process (setpriv execs into it).
struct Running {
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;
  std::chrono::steady_clock::time_point started, deadline;
};

class Sandbox {
 public:
  explicit Sandbox(Caller caller);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  Caller caller() const { return caller_; }
  // A root-owned 0755 directory outside /tmp (which is private inside the sandbox), so
  // every host path below it is visible, read-only, from inside.
  const std::string& base() const { return base_; }
  const std::string& workspace() const { return workspace_; }  // owned by the caller
  const std::string& home() const { return home_; }            // owned by the caller
  std::string ws(const std::string& rel) const { return workspace_ + "/" + rel; }

  // Host-side setup; whatever is created is owned by the caller.
  void make_dir(const std::string& path) const;
  void write_file(const std::string& path, const std::string& content, mode_t mode = 0644) const;
  // Runs argv on the host (no sandbox) as the caller; throws unless it exits 0.
  RunResult host_command(const std::vector<std::string>& argv) const;
  // Removes `path` (recursively) when the sandbox goes, for host paths outside base().
  void remove_later(const std::string& path) { extra_.push_back(path); }
  // A root-owned policy file in base(), readable by every caller.
  std::string write_policy(const std::string& name, const std::string& yaml) const;

  Running start(const RunSpec& spec) const;
  RunResult finish(Running& running) const;
  RunResult run(const RunSpec& spec) const;
  // `zpolicy run OPTIONS -- sh -c SCRIPT`, the script followed by printing kDoneMarker.
  RunResult sh(const std::string& script, const std::vector<std::string>& options = {}) const;

 private:
  Caller caller_;
  std::string base_, workspace_, home_;
  std::vector<std::string> extra_;
};

// A process started on the host as `caller`, outside any sandbox; killed and reaped
// when it goes out of scope.
class HostProcess {
 public:
  HostProcess(Caller caller, const std::vector<std::string>& argv);
  ~HostProcess();
  HostProcess(const HostProcess&) = delete;
  HostProcess& operator=(const HostProcess&) = delete;
  pid_t pid() const { return pid_; }
  bool alive();  // not exited (reaps it if it has)

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// Host-side observations.
bool exists(const std::string& path);  // lstat: a dangling symlink exists
std::optional<std::string> read_file(const std::string& path);
// The lines of a file (a compiled bwrap.args has an argument a line), none when it cannot
// be read; and a file written anew from lines, the test failing when it cannot be written.
// Tests edit compiled artifacts with them.
std::vector<std::string> read_lines(const std::string& path);
void write_lines(const std::string& path, const std::vector<std::string>& lines);
// A file of the source tree (a script a test stages where the unprivileged caller can read
// it), read whole; the test fails when it cannot be read.
std::string source_file(const std::string& rel);
// Every entry below `root` (type, mode, owner, links, file mtime and content, link target),
// sorted: two equal snapshots mean nothing below root was written, created, renamed,
// deleted or chmod'ed.
std::string snapshot(const std::string& root);
// Host pids whose argv is exactly `argv`. Every suite's processes are in /proc (the suites
// run side by side): an argv looked for is one no other suite's process has, such as a
// script ending in this_suites_mark() or a unique_sleep_seconds().
std::vector<pid_t> processes_with_argv(const std::vector<std::string>& argv);
// A shell comment line naming this test process, the same on every call: the end of a
// script whose processes are looked for by argv.
std::string this_suites_mark();
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit);
// A token unique in this test run, for markers, argv and socket names.
std::string unique_token();
// A `sleep` argument unique in this test run, so its processes can be found in /proc.
std::string unique_sleep_seconds();

}  // namespace zpolicy::tests::kernel
