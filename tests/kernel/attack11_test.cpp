#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "deny_root_runs.hpp"
#include "pty.hpp"
#include "sandbox_fixture.hpp"

// Red team round 11 (docs/redteam-2026-12.md): the caller's terminal, the guard's caller
// checks, the state directories.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// Who runs the command: `zpolicy run`, an embedder's run(plan) in process
// (examples/c/run_command.c), or an executor of the plan (examples/python/run_plan.py).
enum class Launcher { Run, Embedded, Executor };

// A11-1: zpolicy restored the caller's terminal settings (termios) after the run, but the
// command holds the terminal itself and may use every ioctl its holder may: TIOCSETD to
// N_NULL (built in) left a terminal whose reads and writes fail (the caller's shell
// exited), TIOCEXCL made every later open of it fail EBUSY (`sudo` asking for a password),
// and tcflow(TCOOFF) stopped its output, which also blocked zpolicy forever on its own last
// line (the "whether the sandbox refused it" hint after exit 1): the run never returned.
// A11-2: run_plan.py restored nothing, not even the settings (`stty -echo -icanon`).
void terminal_after_the_command(Caller caller, Launcher launcher) {
  using namespace std::chrono_literals;
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"stty",
       "t = termios.tcgetattr(0); t[3] &= ~(termios.ECHO | termios.ICANON); "
       "termios.tcsetattr(0, termios.TCSANOW, t)"},
      {"TIOCSETD+TIOCEXCL",
       "fcntl.ioctl(0, termios.TIOCSETD, struct.pack('i', 27)); fcntl.ioctl(0, termios.TIOCEXCL)"},
      {"TCOOFF", "termios.tcflow(0, termios.TCOOFF)"}};
  for (const auto& [name, change] : changes) {
    Sandbox box(caller);
    Pty pty;
    BOOST_TEST_REQUIRE(pty.line_discipline() == N_TTY);
    const std::vector<std::string> command = {"/usr/bin/python3", "-c",
                                              "import fcntl, struct, sys, termios\n" + change +
                                                  "\nopen('changed', 'w').close()\nsys.exit(1)"};
    RunSpec spec;
    if (launcher == Launcher::Executor)
      run_through(box, true,
                  box.write_policy("ws.yaml",
                                   "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: "
                                   "[\"/\"]\n  write: [\"${WORKSPACE}\"]\n"),
                  command, spec);
    else
      spec.command = command;
    if (launcher == Launcher::Embedded) spec.launcher = {embedder_binary()};
    spec.stdin_fd = pty.slave;
    spec.root_prefix = {"/bin/sh", "-c", "exec \"$@\" 2>&0", "sh"};
    spec.limit = 8s;
    const RunResult r = box.run(spec);
    BOOST_TEST_REQUIRE(exists(box.ws("changed")), name << ": the command never ran\n"
                                                       << r.describe());
    BOOST_TEST(!r.hit_limit, name << ": the run never returned\n" << r.describe());
    BOOST_TEST(r.exit_code == 1, name << "\n" << r.describe());
    BOOST_TEST(pty.echo_and_canonical(), name << ": the settings outlived the run");
    BOOST_TEST(pty.line_discipline() == N_TTY, name << ": the line discipline outlived the run");
    BOOST_TEST(pty.exclusive() == 0, name << ": exclusive mode outlived the run");
    BOOST_TEST(pty.output_flows(), name << ": stopped output outlived the run");
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack11)

BOOST_DATA_TEST_CASE(the_callers_terminal_outlives_no_ioctl_of_the_command, bdata::make(kCallers),
                     caller) {
  terminal_after_the_command(caller, Launcher::Run);
}

BOOST_DATA_TEST_CASE(an_embedders_terminal_outlives_no_ioctl_of_the_command, bdata::make(kCallers),
                     caller) {
  terminal_after_the_command(caller, Launcher::Embedded);
}

BOOST_DATA_TEST_CASE(an_executors_terminal_outlives_no_ioctl_of_the_command, bdata::make(kCallers),
                     caller) {
  terminal_after_the_command(caller, Launcher::Executor);
}

// A11-3: a deny root was masked at its path, and the verifier follows the other names
// that binds of the argv give it, but not those the host's own mounts give it. A directory
// bind-mounted elsewhere on the host before the run (`mount --bind /home /srv/nfs/home`, a
// dev container's volume, a second mount of the same filesystem) showed the deny root
// again under a read root: the sandbox read it there. Each member: a deny directory and a
// deny file below a bound parent, a deny directory bound itself, a part of one bound.
// Root makes the binds in a mount namespace of the run's own (nothing of the host changes).
BOOST_DATA_TEST_CASE(a_deny_root_is_not_read_under_the_name_a_host_bind_mount_gives_it,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string src = box.base() + "/src", alias = box.base() + "/alias",
                    itself = box.base() + "/itself", part = box.base() + "/part";
  for (const auto& dir : {src, src + "/secret", src + "/secret/sub", alias, itself, part})
    BOOST_REQUIRE(mkdir(dir.c_str(), 0755) == 0);
  box.write_file(src + "/secret/key", "AKIA-KEY\n");
  box.write_file(src + "/secret/sub/key", "AKIA-SUB\n");
  box.write_file(src + "/token", "AKIA-TOKEN\n");
  RunSpec spec;
  spec.options = {"--policy",
                  box.write_policy("deny.yaml",
                                   "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: "
                                   "[\"/\"]\n  write: [\"${WORKSPACE}\"]\n  deny: [\"" +
                                       src + "/secret\", \"" + src + "/token\"]\n")};
  spec.root_prefix = in_private_mount_namespace(
      "mount --bind \"$1\" \"$2\" && mount --bind \"$1/secret\" \"$3\" && mount "
      "--bind \"$1/secret/sub\" \"$4\" && shift 4 && exec \"$@\"",
      {src, alias, itself, part});
  spec.command = {"/bin/sh",
                  "-c",
                  "for f in \"$0/secret/key\" \"$0/token\" \"$1/secret/key\" \"$1/token\" "
                  "\"$2/key\" \"$3/key\"; do echo \"$f: $(cat \"$f\" 2>&1)\"; done",
                  src,
                  alias,
                  itself,
                  part};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  // The control: the command ran, and at their own names the deny roots hold.
  BOOST_TEST_REQUIRE(r.out.find(itself + "/key:") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("AKIA") == std::string::npos,
             "read through the host's bind mounts: " << r.describe());
}

// A11-6: the same for protected paths: a host bind mount inside the workspace that shows a
// protected directory or file under another name (`mount --bind .git/hooks hooks`, a
// `.env` bound into `config/`) was a writable way to it. Each member: a hook planted
// through the bound directory, `.env` rewritten through the bound file.
BOOST_DATA_TEST_CASE(a_protected_path_is_not_written_under_the_name_a_host_bind_mount_gives_it,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const auto& dir : {".git", ".git/hooks", ".git/objects", ".git/refs", "hooks", "config"})
    box.make_dir(box.ws(dir));
  box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
  box.write_file(box.ws(".env"), "TOKEN=1\n");
  box.write_file(box.ws("config/env"), "");
  const std::string before = snapshot(box.ws(".git")) + snapshot(box.ws(".env"));
  RunSpec spec;
  spec.root_prefix = in_private_mount_namespace(
      "mount --bind \"$1/.git/hooks\" \"$1/hooks\" && mount --bind \"$1/.env\" "
      "\"$1/config/env\" && shift && exec \"$@\"",
      {box.workspace()});
  spec.command = {"/bin/sh", "-c",
                  "echo 'echo pwned' > hooks/pre-commit; echo TOKEN=evil > config/env; echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(snapshot(box.ws(".git")) + snapshot(box.ws(".env")) == before,
             "written through the host's bind mounts: " << r.describe());
}

// A11-4 (fixed): A11-3's masks are the names the mount table gave a deny root when the run
// resolved its policy. A bind the host made between then and the guard's private mount
// namespace was copied into that namespace, unmasked; A10-3's check of the host's mount
// table covered that window only for a run with a missing deny root. strace holds the
// guard's first unshare 0.3 s while root, in a shared mount namespace standing for the
// host's, mounts `mount_args` (the run's host table changes inside the window). The run
// looks at the host's table again once bwrap has set the sandbox up and refuses (exit 125,
// nothing ran) when an existing deny root or protected path has a name nothing masks.
namespace {

RunResult host_mount_while_the_run_starts(Sandbox& box, const std::vector<std::string>& mount_args,
                                          const std::vector<std::string>& options,
                                          const std::vector<std::string>& command) {
  BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
  std::string mount = "mount";
  for (const auto& a : mount_args) mount += " '" + a + "'";
  RunSpec spec;
  spec.options = options;
  spec.root_prefix = host_acts_while_held(kGuardUnshare, mount, {});
  spec.command = command;
  return box.run(spec);
}

}  // namespace

// A bind of a deny root's parent elsewhere (where the read root `/` shows it).
BOOST_DATA_TEST_CASE(a_host_bind_of_a_deny_root_made_while_the_run_starts_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string src = box.base() + "/src", alias = box.base() + "/alias";
  for (const auto& dir : {src, src + "/secret", alias})
    BOOST_REQUIRE(mkdir(dir.c_str(), 0755) == 0);
  box.write_file(src + "/secret/key", "AKIA-KEY\n");
  const RunResult r = host_mount_while_the_run_starts(
      box, {"--bind", src, alias}, {"--policy", deny_policy(box, src + "/secret")},
      {"/bin/sh", "-c", "touch started; cat \"$0\"/secret/key", alias});
  BOOST_TEST(r.out.find("AKIA") == std::string::npos,
             "read through the host's new bind: " << r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
  BOOST_TEST(r.err.find(alias + "/secret") != std::string::npos, r.describe());
}

// A bind of a protected path's parent (the workspace, into itself): `.git` gets a name in
// the writable root that nothing protects.
BOOST_DATA_TEST_CASE(a_host_bind_of_a_protected_paths_parent_made_while_the_run_starts_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const auto& dir : {".git", ".git/hooks", ".git/objects", ".git/refs", "alias"})
    box.make_dir(box.ws(dir));
  box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
  const std::string before = snapshot(box.ws(".git"));
  const RunResult r = host_mount_while_the_run_starts(
      box, {"--bind", box.workspace(), box.ws("alias")}, {},
      {"/bin/sh", "-c", "touch started; echo 'echo pwned' > alias/.git/hooks/pre-commit"});
  BOOST_TEST(snapshot(box.ws(".git")) == before,
             "written through the host's new bind: " << r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
  BOOST_TEST(r.err.find("at '" + box.ws("alias/")) != std::string::npos, r.describe());
}

// The control: a mount in the same window that gives no deny root or protected path a name
// (a tmpfs elsewhere) refuses nothing. Every run has a deny root (the state directory) and
// container hosts mount all the time.
BOOST_DATA_TEST_CASE(a_host_mount_made_while_the_run_starts_that_names_no_deny_root_runs,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string src = box.base() + "/src", other = box.base() + "/other";
  for (const auto& dir : {src, src + "/secret", other})
    BOOST_REQUIRE(mkdir(dir.c_str(), 0755) == 0);
  const RunResult r = host_mount_while_the_run_starts(
      box, {"-t", "tmpfs", "zp", other}, {"--policy", deny_policy(box, src + "/secret")},
      {"/bin/sh", "-c", "touch started"});
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(exists(box.ws("started")), r.describe());
}

// A11-5 (fixed): a caller whose usual state directory name (/tmp/zpolicy-UID) another user
// took keeps its state elsewhere, and nothing hides the usual name from its sandboxes.
// Freed while such a run lived (its owner removes it, a /tmp cleaner), a sandbox that may
// write /tmp (ZP013 accepted) made it, private to the caller, with a forged run record; the
// caller's next `zpolicy cleanup` (or run) took it for its state directory and gave the
// directory the record names, a read-only one of the caller's outside every writable root,
// the owner's rwx, and removed it when empty (A10B-2's class). Such a run is now refused
// before anything starts (exit 125). Root's state is always /run/zpolicy: nobody only. All
// in a mount namespace of the test's own with a tmpfs on /tmp, where root stands for the
// other user.
BOOST_AUTO_TEST_CASE(a_sandbox_cannot_make_the_callers_usual_state_directory_once_freed) {
  Sandbox box(Caller::Nobody);
  const std::string target = box.home() + "/keep";
  box.make_dir(target);
  box.host_command({"/bin/chmod", "0500", target});
  const std::string usual = "/tmp/zpolicy-" + std::to_string(uid_of(Caller::Nobody));
  const std::string script =
      "mount -t tmpfs -o mode=1777 zp /tmp && mkdir -m 0700 \"$1\" || exit 99\n"
      "( i=0; until [ -e \"$2/started\" ] || [ $i -ge 500 ]; do sleep 0.01; i=$((i+1)); done\n"
      "  rmdir \"$1\"; touch \"$2/go\" ) &\n"
      "z=$3 h=$4 w=$2; shift 4; \"$@\"; status=$?\n"
      // Refused, nothing ran that could forge a record: neither the freeing nor the
      // cleanup is waited for.
      "[ $status = 125 ] && ! [ -e \"$w/started\" ] && { kill $!; exit $status; }; wait\n"
      // Other tests' runs keep cleanup from acting (exit 1): try for a while.
      "i=0; while [ $i -lt 50 ]; do /usr/bin/setpriv --reuid=65534 --regid=65534 "
      "--clear-groups -- \"$z\" cleanup \"$h\" >/dev/null 2>&1; [ $? -ne 1 ] && break; "
      "sleep 0.1; i=$((i+1)); done\nexit $status\n";
  RunSpec spec;
  spec.options = {"--accept", "ZP013", "--policy",
                  box.write_policy("tmp.yaml",
                                   "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: "
                                   "[\"/\"]\n  write: [\"${WORKSPACE}\", \"/tmp\"]\n")};
  spec.root_prefix =
      in_private_mount_namespace(script, {usual, box.workspace(), zpolicy_binary(), box.home()});
  spec.command = {
      "/bin/sh", "-c",
      "touch started; i=0; while [ ! -e go ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done\n"
      "mkdir -m 0700 \"$0\" && umask 077 && echo \"v2 $(stat -c '%d %i %.9W' \"$1\") $1\" > "
      "\"$0/run-forged\"; echo \"forged: $?\"",
      usual, target};
  const RunResult r = box.run(spec);
  BOOST_TEST_MESSAGE(r.describe());
  BOOST_TEST_REQUIRE(r.exit_code != 99, r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
  BOOST_TEST(r.err.find("'" + usual + "' is held by uid 0") != std::string::npos, r.describe());
  struct stat st {};
  if (lstat(target.c_str(), &st) != 0)
    BOOST_TEST(false, "the caller's own directory was removed: " << r.describe());
  else
    BOOST_TEST((st.st_mode & 07777) == 0500u, "its mode was changed to "
                                                  << std::oct << (st.st_mode & 07777) << std::dec
                                                  << ": " << r.describe());
}

// A11-5 by its other members: the usual name's parent writable under another name (a host
// bind of /tmp made a writable root) is refused too; a run that does not make it writable
// runs while another user holds the name (red team R7-L1: a squatter must not stop every
// run).
BOOST_AUTO_TEST_CASE(a_run_whose_sandbox_could_make_the_usual_state_directory_is_refused) {
  const std::string usual = "/tmp/zpolicy-" + std::to_string(uid_of(Caller::Nobody));
  for (const bool through_bind : {true, false}) {
    Sandbox box(Caller::Nobody);
    const std::string scratch = box.base() + "/scratch";
    BOOST_REQUIRE(mkdir(scratch.c_str(), 0755) == 0);
    RunSpec spec;
    if (through_bind)
      spec.options = {"--accept", "ZP013", "--policy",
                      box.write_policy("scratch.yaml",
                                       "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: "
                                       "[\"/\"]\n  write: [\"${WORKSPACE}\", \"" +
                                           scratch + "\"]\n")};
    spec.root_prefix = in_private_mount_namespace(
        "mount -t tmpfs -o mode=1777 zp /tmp && mkdir -m 0700 \"$1\" && { [ \"$2\" = no ] || "
        "mount --bind /tmp \"$3\"; } || exit 99; shift 3; exec \"$@\"",
        {usual, through_bind ? "yes" : "no", scratch});
    spec.command = {"/bin/sh", "-c", "touch started; echo '" + std::string(kDoneMarker) + "'"};
    const RunResult r = box.run(spec);
    if (through_bind) {
      BOOST_TEST(r.exit_code == 125, r.describe());
      BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
      BOOST_TEST(r.err.find(scratch) != std::string::npos, r.describe());
    } else {
      BOOST_TEST(r.completed(), r.describe());
    }
  }
}

// Held (A10-4's class): a caller that is root in a user namespace of its own (`unshare
// -Ur`). Started by root, it keeps kuid 0 without the initial namespace's capabilities: the
// run is confined as a root-started one (nothing of /proc/sys, /proc/sysrq-trigger or /sys
// opens for writing, looked at with access(2) only, and /etc stays read-only). Started by
// nobody, /usr/bin/bwrap shows as the overflow uid's there and the run refuses before
// anything starts (exit 4).
BOOST_DATA_TEST_CASE(a_caller_that_is_root_in_its_own_user_namespace_gets_no_more,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.launcher = {"/usr/bin/unshare", "-Ur", zpolicy_binary(), "run"};
  spec.command = {
      "/bin/sh", "-c",
      "touch ran; for f in /proc/sys/kernel/core_pattern /proc/sysrq-trigger "
      "/sys/kernel/mm/transparent_hugepage/enabled; do [ -w $f ] && echo \"writable "
      "$f\"; done; touch /etc/zpolicy-attack11 2>/dev/null && echo 'wrote /etc'; echo '" +
          std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(!exists("/etc/zpolicy-attack11"));
  if (caller == Caller::Nobody) {
    BOOST_TEST(r.exit_code == 4, r.describe());
    BOOST_TEST(!exists(box.ws("ran")), r.describe());
    return;
  }
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("writable") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("wrote") == std::string::npos, r.describe());
}

// Round 11b: A11-3 and A11-6 by their class, and the state directory's other names.

// A11B-1 (fixed): A11-3's masks are the other names of the filesystem that shows a deny root;
// a mount *below* the deny root (a filesystem of its own: a tmpfs, an NFS or autofs home, a
// container's volume) that the host also shows elsewhere keeps that other name unmasked,
// and the sandbox read it there. The deny root itself held (the control). Root makes the
// tmpfs and the bind in a mount namespace of the run's own.
BOOST_DATA_TEST_CASE(a_deny_root_is_not_read_under_the_name_a_host_bind_gives_a_mount_below_it,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string src = box.base() + "/src", alias = box.base() + "/alias";
  for (const auto& dir : {src, src + "/secret", src + "/secret/vol", alias})
    BOOST_REQUIRE(mkdir(dir.c_str(), 0755) == 0);
  RunSpec spec;
  spec.options = {"--policy", deny_policy(box, src + "/secret")};
  spec.root_prefix = in_private_mount_namespace(
      "mount -t tmpfs -o mode=0755 zp \"$1/secret/vol\" && echo AKIA-VOL > "
      "\"$1/secret/vol/key\" && mount --bind \"$1/secret/vol\" \"$2\" && shift 2 "
      "&& exec \"$@\"",
      {src, alias});
  spec.command = {"/bin/sh", "-c",
                  "for f in \"$0/secret/vol/key\" \"$1/key\"; do echo \"$f: $(cat \"$f\" 2>&1)\"; "
                  "done",
                  src, alias};
  const RunResult r = box.run(spec);
  BOOST_TEST_REQUIRE(r.out.find(src + "/secret/vol/key:") != std::string::npos, r.describe());
  BOOST_TEST_REQUIRE(r.out.find(src + "/secret/vol/key: AKIA") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("AKIA") == std::string::npos,
             "read through the host's bind of a mount below the deny root: " << r.describe());
}

// A11B-2 (fixed): A11-6 by the same member: a mount below a protected directory
// (`.git/hooks` a filesystem of its own) that the host binds elsewhere in the workspace
// stays a writable way to it; the sandbox planted a hook, which the host's `.git/hooks`
// shows.
BOOST_DATA_TEST_CASE(
    a_protected_path_is_not_written_under_the_name_a_host_bind_gives_a_mount_below_it,
    bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const auto& dir : {".git", ".git/hooks", ".git/objects", ".git/refs", "h"})
    box.make_dir(box.ws(dir));
  box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
  RunSpec spec;
  spec.root_prefix = in_private_mount_namespace(
      "mount -t tmpfs -o mode=0777 zp \"$1/.git/hooks\" && mount --bind "
      "\"$1/.git/hooks\" \"$1/h\" && shift && exec \"$@\"",
      {box.workspace()});
  spec.command = {"/bin/sh", "-c",
                  "echo 'echo pwned' > h/pre-commit 2>/dev/null; [ -e .git/hooks/pre-commit ] && "
                  "echo HOOK-PLANTED; echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("HOOK-PLANTED") == std::string::npos,
             "written through the host's bind of a mount below .git: " << r.describe());
}

// Held (A11-3's class): the other names mountinfo escapes are decoded: one with a space and
// a backslash (`\040`, `\134`) is masked like any other. One with a newline (`\012`) cannot
// be written in the line-based bwrap.args artifact: the run refuses, nothing runs, fail
// closed (exit 2 naming the path and its rule since main c1aa96a; exit 3, a malformed
// artifact, before).
BOOST_DATA_TEST_CASE(a_deny_root_is_not_read_under_an_escaped_name_a_host_bind_gives_it,
                     bdata::make(kCallers), caller) {
  for (const std::string name : {"a b\\c", "a\nb"}) {
    Sandbox box(caller);
    const std::string src = box.base() + "/src", alias = box.base() + "/" + name;
    for (const auto& dir : {src, src + "/secret", alias})
      BOOST_REQUIRE(mkdir(dir.c_str(), 0755) == 0);
    box.write_file(src + "/secret/key", "AKIA-KEY\n");
    RunSpec spec;
    spec.options = {"--policy", deny_policy(box, src + "/secret")};
    spec.root_prefix = host_bind_mount(src, alias);
    spec.command = {"/bin/sh", "-c",
                    "cat \"$0/secret/key\" 2>&1; echo '" + std::string(kDoneMarker) + "'", alias};
    const RunResult r = box.run(spec);
    BOOST_TEST(r.out.find("AKIA") == std::string::npos, r.describe());
    if (name.find('\n') == std::string::npos)
      BOOST_TEST(r.completed(), r.describe());
    else
      BOOST_TEST((r.exit_code == 2 && r.err.find("holds a line break") != std::string::npos),
                 r.describe());
  }
}

// A11B-4 (fixed): `mount_showing` takes the deepest mount point on a deny root's way for the
// mount that shows it, but a mount covered by a later one over its parent is still in the
// table and shows nothing: `mount -t tmpfs t top/d; mount --bind src top` (a mount stacked
// over a directory that had mounts below it). The deny root `top/d/secret` is `src/d/secret`,
// whose other name was never looked for: the sandbox read it at `src/d/secret`.
BOOST_DATA_TEST_CASE(a_deny_root_is_not_read_under_its_other_name_when_a_covered_mount_is_deeper,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string src = box.base() + "/src", top = box.base() + "/top";
  for (const auto& dir : {src, src + "/d", src + "/d/secret", top, top + "/d"})
    BOOST_REQUIRE(mkdir(dir.c_str(), 0755) == 0);
  box.write_file(src + "/d/secret/key", "AKIA-KEY\n");
  RunSpec spec;
  spec.options = {"--policy", deny_policy(box, top + "/d/secret")};
  spec.root_prefix = in_private_mount_namespace(
      "mount -t tmpfs zp \"$2/d\" && mount --bind \"$1\" \"$2\" && shift 2 && "
      "exec \"$@\"",
      {src, top});
  spec.command = {"/bin/sh", "-c",
                  "for f in \"$1/d/secret/key\" \"$0/d/secret/key\"; do echo \"$f: $(cat \"$f\" "
                  "2>&1)\"; done",
                  src, top};
  const RunResult r = box.run(spec);
  BOOST_TEST_REQUIRE(r.out.find(top + "/d/secret/key:") != std::string::npos, r.describe());
  BOOST_TEST_REQUIRE(r.out.find(top + "/d/secret/key: AKIA") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("AKIA") == std::string::npos,
             "read under the deny root's other name: " << r.describe());
}

// A11B-3 (fixed): the state directory is masked at its own path only; another name the host's
// mounts give it through a read-only root (`mount --bind /run /srv/run`, a container's view
// of the host's /tmp) is allowed by design (docs/run.md "The state directory"), and there
// the sandbox opens the lock and holds it: every other run of the caller's (for root every
// root run on the host) then waits for it. Issue 14 §4: no file of zpolicy's own state may be
// reachable from inside a sandbox. Fixed: resolution masks the other names of an existing
// state directory, and the runner refuses a run where one stays unmasked under any root.
BOOST_DATA_TEST_CASE(the_state_lock_is_not_reachable_under_another_name_a_host_bind_gives_it,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string alias = box.base() + "/alias";
  BOOST_REQUIRE(mkdir(alias.c_str(), 0755) == 0);
  const bool root = caller == Caller::Root;
  const std::string parent = root ? "/run" : "/tmp";
  const std::string prefix = root ? "zpolicy" : "zpolicy-" + std::to_string(uid_of(caller));
  RunSpec spec;
  spec.root_prefix = host_bind_mount(parent, alias);
  spec.command = {"/bin/sh", "-c",
                  "for d in \"$0\"/" + prefix + " \"$0\"/" + prefix +
                      "-*; do [ -e \"$d/lock\" ] && flock -n \"$d/lock\" true && echo \"LOCKED "
                      "$d\"; done; echo '" +
                      std::string(kDoneMarker) + "'",
                  alias};
  const RunResult r = box.run(spec);
  // Masked (a state directory that existed when the policy was resolved), or refused
  // (exit 125, one the run created, whose other names resolution could not know).
  BOOST_TEST((r.completed() || r.exit_code == 125), r.describe());
  BOOST_TEST(r.out.find("LOCKED") == std::string::npos,
             "zpolicy's own lock under the host's other name: " << r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
