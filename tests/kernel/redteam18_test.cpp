#include <signal.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "caller_pipe_flags.hpp"
#include "sandbox_fixture.hpp"
#include "stopped_run.hpp"

// Red team round 18 (docs/redteam-2026-12.md "Round 18 (red18)"): `zpolicy run` with the
// built-in default policy, attacked from the workspaces users have. Each case is a
// finding's reproduction, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// Inside the sandbox: rewrites the first bytes of each file named through a shared
// writable mapping (no write(2), no truncate), reporting per file what happened.
const std::string kRewriteMapped = R"(
import mmap, os, sys
for name in sys.argv[1:]:
    try:
        fd = os.open(name, os.O_RDWR)
        m = mmap.mmap(fd, 0)
        m[0:4] = b"PWN!"
        m.flush()
        print(name, "rewritten")
    except OSError as e:
        print(name, e.strerror)
)";

bool has_capability(const std::string& path) {
  return lgetxattr(path.c_str(), "security.capability", nullptr, 0) >= 0;
}

// /proc/PID/stat after the command name: the state letter ('T' stopped) first, then the
// parent's pid; empty when gone.
std::string stat_fields(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(f, line);
  const auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? "" : line.substr(paren + 2);
}

char state_of(pid_t pid) {
  const std::string f = stat_fields(pid);
  return f.empty() ? 0 : f[0];
}

pid_t parent_pid_of(pid_t pid) {
  const std::string f = stat_fields(pid);
  return f.size() > 2 ? static_cast<pid_t>(std::atol(f.c_str() + 2)) : 0;
}

mode_t host_mode_of(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

// An interactive shell on a pseudo-terminal of its own (bash -i, job control on) in the
// workspace, as the caller, that starts `zpolicy run` with the terminal on stdin, its
// command copying every line it reads into `stolen`, in one of two ways: `&` (a background
// job from the start) or in the foreground, a first line typed to it, then ^Z and `bg`.
// Meanwhile the user types a line to the foreground shell. Then `fg`, a last line, EOF.
// Prints what the command read and `jobs`' line.
const char* kBackgroundDriver = R"(import os, pty, select, sys, time
zp, how = sys.argv[1], sys.argv[2]
pid, master = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
def drain(t):
    end = time.time() + t
    while time.time() < end:
        if select.select([master], [], [], 0.1)[0]:
            try: os.read(master, 4096)
            except OSError: return
def typed(text, t=0.8):
    os.write(master, text)
    drain(t)
drain(0.5)
command = zp + " run -- sh -c 'while read -r l; do echo \"$l\" >> stolen; done'"
if how == "amp":
    typed((command + " &\n").encode(), 3.0)
else:
    typed((command + "\n").encode(), 3.0)
    typed(b"first line\n")
    typed(b"\x1a")
    typed(b"bg\n", 1.5)
typed(b"read -r typed; echo shell got $typed\n", 0.5)
typed(b"typed-to-the-shell\n", 1.0)
os.write(master, b"jobs > jobs.txt\n")
drain(0.8)
typed(b"fg\n", 1.5)
typed(b"after fg\n")
typed(b"\x04", 2.0)
typed(b"exit\n", 0.5)
)";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam18)

// R18-1: the kernel strips S_ISUID, S_ISGID and a file capability when a file is written
// (write(2), truncate) by a process without CAP_FSETID, but not when it is written through
// a shared writable mapping. A privileged program already in the workspace (a chroot's or
// an extracted image's setuid-root binaries for a root caller; a build output the user gave
// a file capability with `sudo setcap`) was rewritten by the sandbox with its privilege
// kept: any local user could run the sandbox's code as root. Each such program the
// sandbox's uid could change is now bound read-only (EROFS); an ordinary executable stays
// writable (control).
BOOST_DATA_TEST_CASE(a_privileged_program_in_the_workspace_is_not_rewritten_with_its_privilege,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string program = "#!/bin/sh\nexit 0\n";
  box.make_dir(box.ws("rootfs/usr/bin"));
  box.make_dir(box.ws("build"));
  box.write_file(box.ws("rootfs/usr/bin/passwd"), program, 0755);
  box.write_file(box.ws("rootfs/usr/bin/crontab"), program, 0755);
  box.write_file(box.ws("build/pinger"), program, 0755);
  box.write_file(box.ws("build/tool"), program, 0755);
  box.host_command({"/bin/chmod", "4755", box.ws("rootfs/usr/bin/passwd")});
  box.host_command({"/bin/chmod", "2755", box.ws("rootfs/usr/bin/crontab")});
  const std::string pinger = box.ws("build/pinger");
  const std::string setcap = "/usr/sbin/setcap cap_net_raw+ep '" + pinger + "'";
  BOOST_TEST_REQUIRE(std::system(setcap.c_str()) == 0, setcap);
  BOOST_TEST_REQUIRE(has_capability(pinger));

  RunSpec spec;
  spec.command = {"/usr/bin/python3",       "-c",           kRewriteMapped, "rootfs/usr/bin/passwd",
                  "rootfs/usr/bin/crontab", "build/pinger", "build/tool"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  for (const char* name : {"rootfs/usr/bin/passwd", "rootfs/usr/bin/crontab", "build/pinger"}) {
    BOOST_TEST(read_file(box.ws(name)).value_or("") == program,
               name << " was rewritten by the sandbox: " << r.describe());
    BOOST_TEST(r.out.find(std::string(name) + " Read-only file system") != std::string::npos,
               r.describe());
  }
  BOOST_TEST(host_mode_of(box.ws("rootfs/usr/bin/passwd")) == 04755u);
  BOOST_TEST(host_mode_of(box.ws("rootfs/usr/bin/crontab")) == 02755u);
  BOOST_TEST(has_capability(pinger));
  // Control: an executable without privilege is the sandbox's to change.
  BOOST_TEST(read_file(box.ws("build/tool")).value_or("").rfind("PWN!", 0) == 0, r.describe());
}

// R18-2: a writable root without a `.git` of its own (a package directory of a larger
// repository, or a plain directory) is protected from becoming a repository by the `.git`
// placeholder, but git's discovery tests the directory itself for a bare repository next:
// the sandbox wrote a HEAD, `objects`, `refs` and a `config` with `core.worktree` and
// `core.fsmonitor`, and the host's next `git status` there ran the sandbox's command. The
// top's HEAD is protected now, as `.git` is, whether it exists or not.
BOOST_DATA_TEST_CASE(a_workspace_made_a_bare_repository_runs_nothing_on_the_hosts_next_git,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  // The workspace is a package of a repository (its `.git` one level up), and a plain
  // directory without any repository.
  box.host_command({"/usr/bin/git", "init", "-q", box.ws("mono")});
  box.make_dir(box.ws("mono/packages/app"));
  box.make_dir(box.ws("plain"));
  const std::string plant =
      "mkdir -p objects refs; echo 'ref: refs/heads/main' > HEAD; printf '[core]\\n"
      "\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = "
      "\"touch fsmonitor-ran; false\"\\n' > config; echo " +
      std::string(kDoneMarker);
  for (const std::string& top : {box.ws("mono/packages/app"), box.ws("plain")}) {
    RunSpec spec;
    spec.cwd = top;
    spec.options = {"--workspace", top};
    spec.command = {"/bin/sh", "-c", plant};
    const RunResult r = box.run(spec);
    BOOST_TEST(r.exit_code == 0, top << ": " << r.describe());
    BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
    // The host's next git command at the workspace's top, as its owner.
    box.host_command({"/bin/sh", "-c",
                      "cd \"$0\" && HOME=\"$0\" git status >/dev/null 2>&1; "
                      "HOME=\"$0\" git rev-parse --git-dir >/dev/null 2>&1; exit 0",
                      top});
    BOOST_TEST(!exists(top + "/fsmonitor-ran"),
               top << ": the host's git ran the sandbox's core.fsmonitor: " << r.describe());
    struct stat st {};
    BOOST_TEST(!(lstat((top + "/HEAD").c_str(), &st) == 0 && S_ISREG(st.st_mode)),
               top << ": the sandbox made HEAD");
  }
}

// R18-3: ^Z (SIGTSTP) stopped zpolicy alone: bwrap's --new-session keeps the sandbox out
// of the terminal's process groups, so the command ran on, unsupervised, while the shell
// showed the job "Stopped": past its timeout, and zpolicy, continued after the command had
// ended, reported exit 0 for a run of twice its timeout. Now the command stops with
// zpolicy, and the timeout that passed meanwhile ends the run (124). zpolicy runs in a
// process group of its own whose parent is in the same session (as a shell job is): the
// kernel does not stop an orphaned process group on SIGTSTP.
BOOST_DATA_TEST_CASE(a_stopped_run_stops_its_command_and_keeps_its_timeout, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string& script = kTicks;
  RunSpec spec;
  spec.root_prefix = kInOwnProcessGroup;
  spec.options = {"--timeout", "2s"};
  spec.command = {"/bin/sh", "-c", script};
  Running running = box.start(spec);
  // zpolicy's own process (setpriv execs into it), once the command has ticked.
  BOOST_TEST_REQUIRE(
      wait_until([&] { return lines_in(box.ws("ticks")) >= 2; }, std::chrono::milliseconds(15000)));
  const std::vector<std::string> argv = {zpolicy_binary(), "run", "--timeout", "2s", "--",
                                         "/bin/sh",        "-c",  script};
  // The guard is a fork of zpolicy with the same argv: zpolicy is the one whose parent is
  // neither.
  std::vector<pid_t> zp;
  const auto both = processes_with_argv(argv);
  for (pid_t p : both)
    if (std::find(both.begin(), both.end(), parent_pid_of(p)) == both.end()) zp.push_back(p);
  BOOST_TEST_REQUIRE(zp.size() == 1u);
  kill(zp[0], SIGTSTP);
  BOOST_TEST(wait_until([&] { return state_of(zp[0]) == 'T'; }, std::chrono::milliseconds(3000)),
             "zpolicy did not stop on SIGTSTP");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const size_t at_stop = lines_in(box.ws("ticks"));
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  const size_t later = lines_in(box.ws("ticks"));
  const bool late = exists(box.ws("late"));
  kill(zp[0], SIGCONT);
  const RunResult r = box.finish(running);
  BOOST_TEST(later == at_stop,
             "the command ran on while zpolicy was stopped: " << at_stop << " -> " << later);
  BOOST_TEST(!late, "the command ran to its end while zpolicy was stopped");
  BOOST_TEST(r.exit_code == 124, r.describe());
  BOOST_TEST(!exists(box.ws("late")), r.describe());
}

// R18-5: a pipe on stdout reaches the command as the caller's own open file, and the
// O_NONBLOCK (and O_APPEND) the command set on it with F_SETFL stayed after the run: the next
// writer into the caller's pipe got EAGAIN. The shell around zpolicy reads its own stdout's
// flags (the same open file) after zpolicy has exited (bash: dash's `$$` showed a
// redirected descriptor here).
BOOST_DATA_TEST_CASE(the_flags_the_command_sets_on_the_callers_pipe_do_not_outlive_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.root_prefix = kShowStdoutFlags;
  spec.command = kSetStdoutFlags;
  expect_stdout_flags_restored(box.run(spec));
}

// R18-6: the caller's global git configuration was not read. A relative core.hooksPath
// there (`git config --global core.hooksPath .githooks`, for hooks kept in each project)
// resolves against every repository's top, and an include there may name a file in the
// workspace: the sandbox wrote `.githooks/pre-commit` and the included file, and the host's
// next `git commit` ran the hook, its next `git status` the sandbox's core.fsmonitor. Both
// are protected now, as the repository's own configuration's targets are.
BOOST_DATA_TEST_CASE(what_the_global_git_config_names_in_the_workspace_is_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(
      box.home() + "/.gitconfig",
      "[core]\n\thooksPath = .githooks\n[include]\n\tpath = " + box.ws(".gitconfig.local") + "\n");
  box.host_command({"/usr/bin/git", "init", "-q", box.workspace()});
  const RunResult r = box.sh(
      "mkdir -p .githooks; printf '#!/bin/sh\\ntouch hook-ran\\n' > .githooks/pre-commit; "
      "chmod +x .githooks/pre-commit; printf '[core]\\n\\tfsmonitor = \"touch fsmonitor-ran; "
      "false\"\\n' > .gitconfig.local");
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$0\" && HOME=\"$1\" git -c user.name=a -c user.email=a@b commit -q "
                    "--allow-empty -m x >/dev/null 2>&1; HOME=\"$1\" git status >/dev/null 2>&1; "
                    "exit 0",
                    box.workspace(), box.home()});
  BOOST_TEST(!exists(box.ws("hook-ran")), "the host's git commit ran the sandbox's hook");
  BOOST_TEST(!exists(box.ws("fsmonitor-ran")), "the host's git status ran the sandbox's fsmonitor");
  // Control: git's way to read no global or system file (test harnesses, CI) still runs.
  RunSpec none;
  none.extra_env = {"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null"};
  none.command = {"/bin/true"};
  const RunResult n = box.run(none);
  BOOST_TEST(n.exit_code == 0, n.describe());
}

// R18-7: H17-8 refuses a writable root holding what the caller's load paths name, but
// not what other variables name for the host's next programs to run: `make` parses every
// $MAKEFILES first (a `$(shell …)` there ran), `git commit` starts $GIT_EDITOR, `kubectl`
// runs a $KUBECONFIG's credential `exec` plugin, `node` requires what $NODE_OPTIONS names,
// every git applies GIT_CONFIG_COUNT's and GIT_CONFIG_PARAMETERS' settings.
// Each naming a workspace file (a project's direnv exports such values) now refuses the run
// (ZP003, nothing ran, the file unchanged); an everyday environment still runs (control).
BOOST_DATA_TEST_CASE(what_the_callers_environment_runs_next_is_not_in_a_writable_root,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("tools"));
  const std::string original = "# the project's\n";
  for (const char* f : {"defaults.mk", "editor", "kubeconfig", "preload.js"})
    box.write_file(box.ws(std::string("tools/") + f), original, 0755);
  const std::vector<std::vector<std::string>> members = {
      {"MAKEFILES=" + box.ws("tools/defaults.mk")},
      {"GIT_EDITOR=" + box.ws("tools/editor")},
      {"KUBECONFIG=" + box.ws("tools/kubeconfig")},
      {"NODE_OPTIONS=--require ./tools/preload.js"},
      // git's configuration in the environment: a relative hooks path, a command.
      {"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=tools"},
      {"GIT_CONFIG_PARAMETERS='core.fsmonitor'='" + box.ws("tools/editor") + "'"}};
  for (const auto& env : members) {
    const std::string member = env.back();
    RunSpec spec;
    spec.extra_env = env;
    spec.command = {"/bin/sh", "-c", "for f in tools/*; do echo planted > \"$f\"; done; touch ran"};
    const RunResult r = box.run(spec);
    BOOST_TEST(r.exit_code == 3, member << ": " << r.describe());
    BOOST_TEST(r.err.find("[ZP003]") != std::string::npos, member << ": " << r.describe());
    BOOST_TEST(!exists(box.ws("ran")), member << ": the command ran");
    for (const char* f : {"defaults.mk", "editor", "kubeconfig", "preload.js"})
      BOOST_TEST(read_file(box.ws(std::string("tools/") + f)).value_or("") == original,
                 member << ": tools/" << f << " was rewritten");
  }
  RunSpec everyday;
  everyday.extra_env = {"EDITOR=vim",
                        "SHELL=/bin/bash",
                        "LESSOPEN=| /usr/bin/lesspipe %s",
                        "NODE_OPTIONS=--max-old-space-size=4096",
                        "GIT_SSH_COMMAND=ssh -i ~/.ssh/id_ed25519",
                        "PROMPT_COMMAND=history -a; echo \"${PWD/#$HOME/~}\""};
  everyday.command = {"/bin/true"};
  const RunResult e = box.run(everyday);
  BOOST_TEST(e.exit_code == 0, e.describe());
}

// R18-4: bwrap's --new-session puts the sandbox outside the terminal's session, so the
// kernel's job control never stopped it for reading the terminal in the background: a run
// started with `&`, or sent there with ^Z and `bg`, read what the user typed to the
// foreground shell next (a password for a prompt). Now a run started in the background
// reads /dev/null (as a shell without job control gives `&`), and one sent there later is
// held stopped, zpolicy too ("Stopped (tty input)"), until `fg` gives it the terminal again.
BOOST_DATA_TEST_CASE(a_background_run_never_reads_what_is_typed_to_the_shell,
                     bdata::make(kCallers), caller) {
  for (const std::string how : {"amp", "bg"}) {
    Sandbox box(caller);
    const std::string driver = box.base() + "/background_driver.py";
    box.write_file(driver, kBackgroundDriver);
    box.host_command({"/usr/bin/python3", driver, zpolicy_binary(), how});
    const std::string stolen = read_file(box.ws("stolen")).value_or("");
    BOOST_TEST(stolen.find("typed-to-the-shell") == std::string::npos, how << ": " << stolen);
    BOOST_TEST(stolen.find("shell got") == std::string::npos, how << ": " << stolen);
    BOOST_TEST(stolen.find("jobs") == std::string::npos, how << ": " << stolen);
    if (how == "amp") {
      BOOST_TEST(stolen.empty(), how << ": " << stolen);
      continue;
    }
    // The terminal is the command's again in the foreground, before and after.
    BOOST_TEST(stolen == "first line\nafter fg\n", how << ": " << stolen);
    BOOST_TEST(read_file(box.ws("jobs.txt")).value_or("").find("Stopped") != std::string::npos,
               read_file(box.ws("jobs.txt")).value_or(""));
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
