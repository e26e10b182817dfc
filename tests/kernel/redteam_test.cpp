#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <thread>

#include "sandbox_fixture.hpp"

// The red-team pass of 2026-12 (docs/redteam-2026-12.md): each escape found, and the most
// important attacks that held, as a test that attacks the way an attacker would and asserts
// on what the host observes. A test named after an escape fails until that escape is closed.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// zpolicy's state directory for a caller (compiler/resolve/state_dir.hpp).
std::string caller_state_dir(Caller caller) {
  return caller == Caller::Root ? "/run/zpolicy" : "/tmp/zpolicy-65534";
}

// A host directory the caller can write and which lies outside every sandbox's view of
// /tmp: the state directory lives there (root: /run, others: /tmp).
std::string system_workspace_of(Caller caller) { return caller == Caller::Root ? "/run" : "/tmp"; }

// Host-global and namespace-escaping kernel interfaces; each line "NAME OK|ERRNO".
const char* kAttackSurfaceProgram = R"(import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(256)
def sc(name, *a):
    rc = libc.syscall(*a)
    print(name, "OK" if rc >= 0 else errno.errorcode.get(ctypes.get_errno()), flush=True)
sc("io_uring_setup", 425, 8, buf)
sc("userfaultfd", 323, 0)
sc("keyctl", 250, 0, -3, 0)
sc("add_key", 248, b"user", b"x", b"y", 1, -3)
sc("bpf", 321, 0, buf, 64)
sc("perf_event_open", 298, buf, 0, -1, -1, 0)
sc("unshare", 272, 0x10000000 | 0x00020000)
sc("setns", 308, 0, 0)
sc("fsopen", 430, b"tmpfs", 0)
sc("open_tree", 428, -100, b"/", 1)
sc("move_mount", 429, -1, b"", -1, b"", 0)
sc("mount", 165, b"none", b"/tmp", b"tmpfs", 0, 0)
sc("open_by_handle_at", 304, -100, buf, 0)
sc("fanotify_init", 300, 0, 0)
sc("syslog", 103, 3, buf, 100)
)";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam)

// ESCAPE (sec-run): ZP003 knows ~/bin and ~/.local/bin but not the caller's own $PATH:
// a workspace on it lets the sandbox plant `git`, which the host runs next.
BOOST_DATA_TEST_CASE(a_workspace_on_the_callers_path_is_refused, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string bin = box.ws("tools/bin");
  box.make_dir(bin);
  RunSpec spec;
  spec.cwd = bin;
  spec.extra_env = {"PATH=" + bin + ":" + kHostPath};
  spec.command = {"/bin/sh", "-c", "printf '#!/bin/sh\\necho planted\\n' > git; chmod +x git"};
  auto r = box.run(spec);
  BOOST_TEST(!exists(bin + "/git"), "the sandbox planted an executable on the caller's PATH\n"
                                        << r.describe());
}

// ESCAPE (sec-run): a workspace holding Python's user site-packages (~/.local/lib, not
// covered by the ~/.local/bin entry): usercustomize.py runs in every later host python.
BOOST_DATA_TEST_CASE(a_workspace_holding_pythons_user_site_is_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string lib = box.home() + "/.local/lib";
  box.make_dir(lib);
  const std::string marker = box.home() + "/usercustomize-ran";
  RunSpec spec;
  spec.cwd = lib;
  spec.command = {"/bin/sh", "-c",
                  "d=$(/usr/bin/python3 -c 'import site; print(site.getusersitepackages())')\n"
                  "mkdir -p \"$d\" && echo 'open(\"" +
                      marker +
                      "\", \"w\").write(\"x\")' > "
                      "\"$d/usercustomize.py\""};
  auto r = box.run(spec);
  box.host_command({"/usr/bin/python3", "-c", "pass"});
  BOOST_TEST(!exists(marker), "host python ran code the sandbox planted\n" << r.describe());
}

// ESCAPE (sec-run): ZP003 compares paths, so the caller's HOME reached through another
// name (a bind mount: a dev container's /work, `mount --bind ~ /srv/me`) is accepted as a
// workspace and the sandbox appends to ~/.profile. The same holds for /etc (cron.d).
BOOST_DATA_TEST_CASE(home_through_a_bind_mount_alias_is_refused_as_a_workspace,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string alias = box.base() + "/alias";
  box.make_dir(alias);
  RunSpec spec;
  spec.root_prefix = {"/usr/bin/unshare",
                      "-m",
                      "--propagation",
                      "private",
                      "/bin/sh",
                      "-c",
                      "mount --bind \"$0\" \"$1\" && cd \"$1\" && shift && exec \"$@\"",
                      box.home(),
                      alias};
  spec.command = {"/bin/sh", "-c", "echo evil >> .profile"};
  auto r = box.run(spec);
  BOOST_TEST(read_file(box.home() + "/.profile").value_or("") == "echo profile\n", r.describe());
}

// ESCAPE (sec-run; main has no ZP004 on the run path): ZP004 compares names, so a
// policy file that is also a name in the workspace (a hard link: a dotfile manager,
// cp -al) is rewritten by the command it confines: here to danger-full-access, and the
// next run is unconfined.
BOOST_DATA_TEST_CASE(a_policy_hard_linked_into_the_workspace_is_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string text = R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/"]
  write: ["${WORKSPACE}"]
network: none
)";
  const std::string policy = box.write_policy("policy.yaml", text);
  BOOST_TEST_REQUIRE(::chown(policy.c_str(), uid_of(caller), uid_of(caller)) == 0);
  BOOST_TEST_REQUIRE(::link(policy.c_str(), box.ws("policy.yaml").c_str()) == 0);
  auto r = box.sh(
      "sed 's/^mode: .*/mode: danger-full-access/' policy.yaml > /tmp/p && "
      "cat /tmp/p > policy.yaml",
      {"--policy", policy});
  BOOST_TEST(read_file(policy).value_or("") == text, "the sandbox rewrote its own policy\n"
                                                         << r.describe());
}

// ESCAPE (main, sec-run): with the host's /tmp (nobody) or /run (root) as workspace, the
// sandbox reaches zpolicy's own state: it can hold the lock (every later run stalls) and
// forge run records that the next run reconciles as root (rmdir, chmod).
BOOST_DATA_TEST_CASE(zpolicy_state_is_unreachable_from_a_system_workspace, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string forged = caller_state_dir(caller) + "/run-1-" + unique_token();
  box.remove_later(forged);
  RunSpec spec;
  spec.cwd = system_workspace_of(caller);
  spec.command = {"/bin/sh", "-c",
                  "echo '1 1 /nonexistent' > " + forged + "; ls -la " + caller_state_dir(caller) +
                      "; echo '" + kDoneMarker + "'"};
  auto r = box.run(spec);
  BOOST_TEST(!exists(forged), "the sandbox wrote into zpolicy's state directory\n" << r.describe());
}

// ESCAPE (sec-placeholders): runs are tracked per caller (/run/zpolicy, /tmp/zpolicy-UID),
// so when a root run in a workspace ends, it removes the placeholders a concurrent run by
// another user in the same workspace relies on, and that sandbox creates every protected
// path.
BOOST_AUTO_TEST_CASE(concurrent_runs_by_root_and_another_user_keep_protected_paths) {
  Sandbox user(Caller::Nobody);
  Sandbox root(Caller::Root);
  RunSpec first;
  first.cwd = user.workspace();
  first.command = {"/bin/sleep", "2"};
  Running a = root.start(first);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  auto r = user.sh(
      "sleep 4\n"
      "for p in .git .env .env.local .next node_modules data/agent-sessions/x; do\n"
      "  mkdir -p \"$(dirname $p)\" 2>/dev/null; echo pwn > $p 2>/dev/null && echo \"created $p\"\n"
      "done");
  auto ra = root.finish(a);
  BOOST_TEST(ra.exit_code == 0, ra.describe());
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("created") == std::string::npos, r.describe());
  // The first run to end left its placeholders (another run was live); the next run of
  // that caller on a quiet host removes them.
  RunSpec later;
  later.cwd = user.workspace();
  later.command = {"/bin/true"};
  BOOST_TEST(root.run(later).exit_code == 0);
  for (const char* p : {".git", ".env", ".env.local", ".next", "node_modules", "data"})
    BOOST_TEST(!exists(user.ws(p)), p << " exists on the host after the run\n" << r.describe());
}

// Swaps two names atomically (renameat2 RENAME_EXCHANGE) for the given seconds.
const char* kSwapProgram = R"(import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, end = sys.argv[1].encode(), sys.argv[2].encode(), time.time() + float(sys.argv[3])
while time.time() < end:
    libc.syscall(316, -100, a, -100, b, 2)
)";

// A sandbox (the attacker, same caller) in box's workspace swaps `swapped` (a directory
// below sub/ or sub itself) with a symlink to the caller's HOME while 150 runs start in
// sub/ (by cwd or --workspace) and write below `swapped`. Returns HOME's snapshot after.
static std::string race_symlink_swap(Sandbox& box, const std::string& swapped) {
  box.make_dir(box.ws(swapped));
  box.write_file(box.ws("swap.py"), kSwapProgram);
  RunSpec swapper;
  swapper.command = {"/bin/sh", "-c",
                     "ln -s " + box.home() + " " + swapped + "L && /usr/bin/python3 swap.py " +
                         swapped + " " + swapped + "L 90"};
  swapper.limit = std::chrono::seconds(120);
  Running a = box.start(swapper);
  BOOST_TEST_REQUIRE(
      wait_until([&] { return exists(box.ws(swapped + "L")); }, std::chrono::seconds(10)));
  const std::string below = swapped == "sub" ? "" : swapped.substr(4) + "/";
  for (int i = 0; i < 150; ++i) {
    RunSpec victim;
    victim.limit = std::chrono::seconds(10);
    if (i % 2)
      victim.options = {"--workspace", box.ws("sub")};
    else
      victim.cwd = box.ws("sub");
    victim.command = {"/bin/sh", "-c", "touch " + below + "pwn-" + std::to_string(i)};
    box.run(victim);  // refusing is fine; only what reaches the host counts
  }
  kill(a.pid, SIGTERM);
  box.finish(a);
  return snapshot(box.home());
}

// ESCAPE (main, sec-run): the same race on a writable bind that is not the workspace
// (`data`, bound for the protected data/agent-sessions): the victim's sandbox writes
// into the symlink's target.
BOOST_DATA_TEST_CASE(a_protected_paths_parent_swapped_for_a_symlink_binds_nothing_else,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string before = snapshot(box.home());
  const std::string after = race_symlink_swap(box, "sub/data");
  BOOST_TEST(after == before, "the host HOME changed:\n" << after);
}

// ESCAPE (sec-placeholders): the same for one user whose two runs see different
// XDG_RUNTIME_DIR (a systemd user service and a cron job or ssh session without one):
// the state directories differ, so the runs do not see each other's placeholders.
BOOST_DATA_TEST_CASE(concurrent_runs_with_different_runtime_dirs_keep_protected_paths,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string xdg = box.home() + "/xdg";
  box.make_dir(xdg);
  BOOST_TEST_REQUIRE(::chmod(xdg.c_str(), 0700) == 0);
  RunSpec first;
  first.extra_env = {"XDG_RUNTIME_DIR=" + xdg};
  first.command = {"/bin/sleep", "2"};
  Running a = box.start(first);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  auto r = box.sh(
      "sleep 4\n"
      "for p in .git .env .env.local .next node_modules data/agent-sessions/x; do\n"
      "  mkdir -p \"$(dirname $p)\" 2>/dev/null; echo pwn > $p 2>/dev/null && echo \"created $p\"\n"
      "done");
  auto ra = box.finish(a);
  BOOST_TEST(ra.exit_code == 0, ra.describe());
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("created") == std::string::npos, r.describe());
  // As above: a later run under the first run's state directory, on a quiet host.
  RunSpec later = first;
  later.command = {"/bin/true"};
  BOOST_TEST(box.run(later).exit_code == 0);
  for (const char* p : {".git", ".env", ".env.local", ".next", "node_modules", "data"})
    BOOST_TEST(!exists(box.ws(p)), p << " exists on the host after the run\n" << r.describe());
}

// ESCAPE (sec-patterns): the default now protects every nested .git, and a FIFO named
// .git below the top makes expansion block forever (the top-level case is issue 14 §4).
BOOST_DATA_TEST_CASE(a_nested_git_fifo_does_not_hang_the_run, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("sub"));
  box.make_dir(box.ws("packages/a"));
  box.host_command({"/usr/bin/mkfifo", box.ws("sub/.git"), box.ws("packages/a/.git")});
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", std::string("echo '") + kDoneMarker + "'"};
  spec.limit = std::chrono::seconds(20);
  auto r = box.run(spec);
  BOOST_TEST(!r.hit_limit, "zpolicy blocked on a FIFO\n" << r.describe());
}

// ESCAPE (all; sec-placeholders holds the top-level case): a hard link that already exists
// between a writable name and a file under a nested repository's .git (git clone --local,
// cp -al, a backup) makes the protected object writable: `chmod u+w` + write on the
// writable name changes hooks, config (core.fsmonitor) or objects the host uses later.
BOOST_DATA_TEST_CASE(existing_hard_links_into_top_and_nested_git_stay_read_only,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws(".git/config"), "[core]\n", 0444);
  box.write_file(box.ws("packages/a/.git/config"), "[core]\n", 0444);
  box.write_file(box.ws("packages/a/.git/objects/ab/cdef"), "blob\n", 0444);
  box.make_dir(box.ws("backup"));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {".git/config", "backup/top-config"},
           {"packages/a/.git/config", "backup/nested-config"},
           {"packages/a/.git/objects/ab/cdef", "backup/object"}})
    BOOST_TEST_REQUIRE(::link(box.ws(from).c_str(), box.ws(to).c_str()) == 0);
  const std::string top = snapshot(box.ws(".git")), nested = snapshot(box.ws("packages/a/.git"));
  auto r = box.sh("for f in backup/*; do chmod u+w $f; echo '[core] fsmonitor=evil' >> $f; done");
  // Refusing to run is as good as binding the links read-only: only the host's view counts.
  BOOST_TEST(snapshot(box.ws(".git")) == top, r.describe());
  BOOST_TEST(snapshot(box.ws("packages/a/.git")) == nested, r.describe());
}

// ESCAPE (sec-patterns): `**/NAME` protects NAME where it exists at any depth, but a
// missing NAME at the top of the writable root gets no placeholder, while the literal
// entry `NAME` does: switching `.env.local` to `**/.env.local` (to cover nested ones)
// silently unprotects the top-level one.
BOOST_DATA_TEST_CASE(a_double_star_pattern_protects_a_missing_top_level_name, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("sub"));
  const std::string policy = box.write_policy("pattern.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/"]
  write: ["${WORKSPACE}"]
  protect: [".git", "**/.env.local"]
network: none
)");
  auto r = box.sh("echo SECRET=pwn > .env.local", {"--policy", policy});
  BOOST_TEST(!exists(box.ws(".env.local")), r.describe());
}

// HELD on sec-patterns, ESCAPE on main (issue 14 §5): renaming the parent of a nested
// repository and creating a fresh `.git` in its place plants a repository (core.fsmonitor)
// at the path the host's next `git status` uses.
BOOST_DATA_TEST_CASE(renaming_the_parent_of_a_nested_git_plants_nothing, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.write_file(box.ws("packages/a/.git/config"), "[core]\n\trepositoryformatversion = 0\n");
  box.write_file(box.ws("packages/a/.git/HEAD"), "ref: refs/heads/main\n");
  const std::string before = snapshot(box.ws("packages"));
  auto r = box.sh(
      "mv packages p2 || mv packages/a packages/b\n"
      "mkdir -p packages/a/.git && printf '[core]\\n\\tfsmonitor = evil\\n' > "
      "packages/a/.git/config");
  BOOST_TEST(snapshot(box.ws("packages")) == before, r.describe());
  BOOST_TEST(!exists(box.ws("p2")), r.describe());
}

// HELD (guard): descriptors the caller leaves open never reach the command.
BOOST_DATA_TEST_CASE(descriptors_inherited_from_the_caller_are_closed, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string secret = box.base() + "/secret";
  box.write_file(secret, "inherited-secret\n", 0600);
  RunSpec spec;
  spec.root_prefix = {"/bin/sh", "-c", "exec 7<\"$0\" 8>>\"$0\"; exec \"$@\"", secret};
  spec.command = {
      "/bin/sh", "-c",
      "cat <&7; echo appended >&8; ls -l /proc/self/fd; echo '" + std::string(kDoneMarker) + "'"};
  auto r = box.run(spec);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("inherited-secret") == std::string::npos, r.describe());
  BOOST_TEST(read_file(secret).value_or("") == "inherited-secret\n");
}

// HELD (guard): a device node in the workspace (a rootfs extracted by root, a chroot)
// opens nothing: the sandbox runs with uid 0 as root, and a device node is writable
// through a read-only mount, so only nodev on every mount stands between it and the disk.
BOOST_DATA_TEST_CASE(device_nodes_in_the_workspace_do_not_open, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const char* name : {"zero", "kmsg"}) {
    const std::string node = box.ws(name);
    BOOST_TEST_REQUIRE(::mknod(node.c_str(), S_IFCHR | 0666,
                               makedev(1, std::string(name) == "zero" ? 5 : 11)) == 0);
    BOOST_TEST_REQUIRE(::chown(node.c_str(), uid_of(caller), uid_of(caller)) == 0);
  }
  auto r = box.sh(
      "head -c 4 zero >/dev/null && echo zero-opened; head -c 1 kmsg >/dev/null && "
      "echo kmsg-opened; echo x > kmsg && echo kmsg-written");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("opened") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("written") == std::string::npos, r.describe());
}

// HELD (guard): the kernel interfaces an attacker reaches for first are all refused.
BOOST_DATA_TEST_CASE(escape_syscalls_are_refused, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("surface.py"), kAttackSurfaceProgram);
  auto r = box.sh("/usr/bin/python3 surface.py");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  for (const char* name : {"io_uring_setup", "userfaultfd", "keyctl", "add_key", "bpf",
                           "perf_event_open", "unshare", "setns", "fsopen", "open_tree",
                           "move_mount", "mount", "open_by_handle_at", "fanotify_init", "syslog"})
    BOOST_TEST(r.out.find(std::string(name) + " OK") == std::string::npos, name << "\n"
                                                                                << r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
