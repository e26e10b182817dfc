#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Tidy 25 (docs/redteam-2026-12.md "Tidy 25"): the small items session 24 left in the host
// resolution of git directories. Each case runs as root and as uid 65534.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Runs `argv` as the test's own process runs (root), and waits: its exit status, -1 when it
// did not exit.
int as_root(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// `HEAD` a FIFO beside `objects` and `refs`, in the directory `dir` the caller made.
void fifo_head_repository(const Sandbox& box, const std::string& dir) {
  box.make_dir(dir + "/objects");
  box.make_dir(dir + "/refs");
  box.host_command({"/usr/bin/mkfifo", dir + "/HEAD"});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_tidy25)

// A24D-2's shape: the git directory `app/x/.git` is read with its worktree `app/x`, and again
// when the populated submodule `lib` naming it is found. Its config's `core.hooksPath` passes
// through the workspace's symlink `app/lnk`: refused, and on main 209e151 the refusal was
// printed five times (once for each place the value was judged at, on each read). Once now.
BOOST_DATA_TEST_CASE(a_git_directory_read_again_says_its_refusal_once, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string app = box.ws("app"), lib = box.ws("lib"), gitdir = app + "/x/.git";
  populated_submodule(box);
  box.make_dir(app + "/x");
  box.make_dir(app + "/real");
  box.host_command({"/bin/ln", "-s", "real", app + "/lnk"});
  box.host_command({"/bin/mv", box.ws(".git/modules/lib"), gitdir});
  box.host_command({kGit, "config", "-f", gitdir + "/config", "--unset", "core.worktree"});
  box.host_command(
      {kGit, "config", "-f", gitdir + "/config", "core.hooksPath", app + "/lnk/hooks"});
  box.write_file(lib + "/.git", "gitdir: ../app/x/.git\n");
  RunSpec spec;
  spec.options = {"--workspace", app};
  spec.cwd = app;
  spec.command = {"/bin/sh", "-c", "echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  const std::string refusal = "core.hookspath names '" + app + "/lnk/hooks', which passes through";
  expect_refused(r, 2, refusal);
  BOOST_TEST(occurrences(r.err, refusal) == 1u, r.describe());
}

// A nested repository whose `HEAD` is a FIFO: git's discovery opens and reads HEAD whatever it
// is (setup.c validate_headref), and a writer gives it a ref. `**/.git` (the default policy)
// protects it whole as any repository there. On main 209e151 only a file system that lists no
// types (DT_UNKNOWN, below) took the FIFO for a HEAD: here the command wrote `nested/config`.
BOOST_DATA_TEST_CASE(a_repository_whose_head_is_a_fifo_is_protected, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string nested = box.ws("nested");
  box.make_dir(nested);
  fifo_head_repository(box, nested);
  const RunResult r = box.sh("echo '[core]' > nested/config || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(nested + "/config"), r.describe());
}

// The same on ext2 without its `filetype` feature, whose listing gives every entry as
// DT_UNKNOWN: the walk looks each one up, and the FIFO is judged by its real type, as above
// (on main 209e151 it was taken for a regular file; protected there too).
BOOST_DATA_TEST_CASE(a_file_system_listing_no_types_judges_a_fifo_head_the_same,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string image = box.base() + "/untyped.img", made = box.base() + "/untyped";
  const std::string nested = box.ws("nested");
  box.make_dir(nested);
  box.make_dir(made);
  // As root (the test's own process), in a mount namespace of its own: the image made and
  // filled, owned by the caller.
  BOOST_REQUIRE(as_root({"/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                         "truncate -s 4M \"$1\" && mkfs.ext2 -q -F -O ^filetype \"$1\" && "
                         "mount -o loop \"$1\" \"$2\" && mkdir \"$2/objects\" \"$2/refs\" && "
                         "mkfifo \"$2/HEAD\" && chown -R \"$3:$3\" \"$2\"",
                         "sh", image, made, std::to_string(uid_of(caller))}) == 0);
  RunSpec spec;
  spec.root_prefix = in_private_mount_namespace(
      "mount -o loop \"$1\" \"$2\" && shift 2 && exec \"$@\"", {image, nested});
  spec.command = {
      "/bin/sh", "-c",
      "echo '[core]' > nested/config || exit 1; echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("Read-only file system") != std::string::npos, r.describe());
}

// A symlink in a git directory whose target runs into the host's own loop (`BASE/loop ->
// loop`), a hook among them: git's lookup of it fails (ELOOP) whatever the sandbox does, so
// it names nothing, as a pattern's walk takes such a link (A24-5). On main 209e151 each one
// refused the run, "crosses more than 40 symlinks". It runs now, the links protected with
// `.git`.
BOOST_DATA_TEST_CASE(a_git_directorys_link_into_a_host_loop_names_nothing, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string base = box.base();
  workspace_repository(box, false);
  BOOST_REQUIRE(as_root({"/bin/ln", "-s", "loop", base + "/loop"}) == 0);  // BASE is root's
  box.host_command({"/bin/ln", "-s", base + "/loop/x", box.ws(".git/hooks/pre-commit")});
  box.host_command({"/bin/ln", "-s", base + "/loop/y", box.ws(".git/stale")});
  const RunResult r = box.sh(
      "echo ok > out && ! ln -sfn /tmp .git/stale 2>/dev/null && "
      "! rm -f .git/hooks/pre-commit 2>/dev/null || exit 1");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("") == "ok\n", r.describe());
  BOOST_TEST(exists(box.ws(".git/hooks/pre-commit")), r.describe());
}

// Held: a loop through the workspace (`.git/stale -> ../wl`, `WS/wl -> wl`) is one the sandbox
// can end (it re-points `wl`), and still refuses.
BOOST_DATA_TEST_CASE(a_git_directorys_link_into_a_workspace_loop_still_refuses,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  workspace_repository(box, false);
  box.host_command({"/bin/ln", "-s", "wl", box.ws("wl")});
  box.host_command({"/bin/ln", "-s", "../wl", box.ws(".git/stale")});
  const RunResult r = box.sh("true");
  expect_refused(r, 2, "crosses a symlink inside a writable root ('" + box.ws("wl") + "')");
}

// The workspace's `.git/config` (`core.hooksPath = hooks`) swapped for a directory by a
// concurrent process of the caller's between the resolver's lstat of it and its open (strace
// holds that open 0.8 s; the config's second read, the one its values are taken from). On
// main 209e151 the open's directory read as "git reads nothing there": the run went on
// without protecting `hooks`, the command wrote `hooks/pre-commit`, and once the file was put
// back the host's `git commit` ran it. lstat and fstat disagreeing now refuses the run.
BOOST_DATA_TEST_CASE(a_config_swapped_for_a_directory_while_it_is_read_refuses,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string ws = box.workspace(), pwned = box.ws("pwned"), config = box.ws(".git/config");
  workspace_repository(box, false);
  git_config_set(box, ws, "core.hooksPath", "hooks");
  // Waits for a zpolicy process of this workspace held in openat (257) the same 0.2 s, then
  // swaps the config for a directory.
  const std::string swap =
      std::string(kShellOwnProcesses) +
      "w() { i=0; while [ $i -lt 400 ]; do for f in $(grep -ls '^257 ' /proc/[0-9]*/syscall); "
      "do d=${f%/syscall}; mine ${d#/proc/} || continue; grep -qs \"$2\" $d/cmdline || continue; "
      "a=$(cat $f); sleep 0.2; "
      "[ \"$(cat $f 2>/dev/null)\" = \"$a\" ] && return 0; done; sleep 0.01; i=$((i+1)); "
      "done; return 1; }; (w && mv \"$1\" \"$1.real\" && mkdir \"$1\") >/dev/null 2>&1 & "
      "shift 2; exec \"$@\"";
  RunSpec spec;
  spec.root_prefix = {"/bin/sh",
                      "-c",
                      swap,
                      "sh",
                      config,
                      ws,
                      "/usr/bin/strace",
                      "-f",
                      "-qq",
                      "-o",
                      "/dev/null",
                      "-P",
                      config,
                      "-e",
                      "trace=openat",
                      "-e",
                      "inject=openat:delay_enter=800000:when=2"};
  spec.options = {"--workspace", ws};
  spec.command = {"/bin/sh", "-c",
                  "mkdir -p hooks && " + hook("hooks/pre-commit", pwned) + " && echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_REQUIRE_MESSAGE(
      wait_until([&] { return exists(config + ".real"); }, std::chrono::milliseconds(3000)),
      "the config was not swapped while it was read: " + r.describe());
  BOOST_REQUIRE(as_root({"/bin/sh", "-c", "rmdir \"$1\" && mv \"$1.real\" \"$1\"", "sh", config}) ==
                0);
  expect_refused(r, 2, "git reads '" + config + "' as config, and zpolicy cannot read it");
  BOOST_TEST(!exists(box.ws("hooks/pre-commit")), r.describe());
  host_commit(box, ws);
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
