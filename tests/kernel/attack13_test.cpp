#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "deny_root_runs.hpp"
#include "sandbox_fixture.hpp"

// Red team round 13 (docs/redteam-2026-12.md): what the host does between resolution and
// the run's own looks at it (the watch of the protected names, the guard's mount table).
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// The first watch the run puts on a protected name.
const HeldCall kWatch{"inotify_add_watch", SYS_inotify_add_watch, ""};

// The run `r` (one member of a case, `name`) was refused with `exit` before its command
// marked its start in the workspace; the mark is removed for the next member.
void expect_refused_before_the_command(const Sandbox& box, const RunResult& r, int exit,
                                       const std::string& name) {
  BOOST_TEST(r.exit_code == exit, name << ": " << r.describe());
  BOOST_TEST(!exists(box.ws("started")), name << ": the command ran: " << r.describe());
  unlink(box.ws("started").c_str());
}

// `spec`, a run of a policy denying a host directory that holds `key` ("AKIA-KEY"), with a
// command that marks its start and reads `key`, the deny root's name after the host acted:
// nothing of the key read, refused (125) before the command ran.
void expect_deny_root_unread(const Sandbox& box, RunSpec spec, const std::string& key,
                             const std::string& name) {
  spec.command = {"/bin/sh", "-c", ": > started; read -r k < \"$0\"; echo \"$k\"", key};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.out.find("AKIA") == std::string::npos,
             name << ": the deny root read under another name: " << r.describe());
  expect_refused_before_the_command(box, r, 125, name);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack13)

// A13-1: a deny root is masked by a mount bwrap puts on its name, and the run watches the
// names on its way from before the bind sources are opened (R7-C1): a rename there during
// the run stops the sandbox. A rename between resolution and the watch was seen by
// nothing, nor was a mount over a parent made before the guard's unshare (A11-4's look
// finds the other names of what the deny root's name shows by then): the mask went onto
// whatever the name showed, and the deny root was read under another name. Members, by
// the host: the deny root's parent moved and its name made again, the parent of a host
// bind of it (a name resolution masked) moved the same way, both while strace holds the
// watch's first inotify_add_watch 0.3 s; a new bind of it, then a tmpfs over its parent
// holding an empty one, while strace holds the guard's unshare. Now each existing deny
// root must still be the object resolution saw in the guard's namespace (exit 125).
BOOST_DATA_TEST_CASE(a_deny_root_moved_or_covered_on_the_host_while_the_run_starts_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  struct Member {
    const char* name;
    const HeldCall* held;
    const char* before;  // $1: the member's directory, holding src/secret/key and p/alias
    const char* script;
    const char* read;  // where the deny root is then, below it
  };
  // A host bind of the deny root that resolution masks.
  const char* const bound = "mount --bind \"$1/src/secret\" \"$1/p/alias\"";
  int n = 0;
  for (const auto& m : {
           Member{"the deny root's parent moved", &kWatch, bound,
                  "mv \"$1/src\" \"$1/moved\"; mkdir -p \"$1/src/secret\"", "moved/secret/key"},
           Member{"a host bind's parent moved", &kWatch, bound,
                  "mv \"$1/p\" \"$1/moved\"; mkdir -p \"$1/p/alias\"", "moved/alias/key"},
           // Without a bind before the run: A11-4's look finds the new name as one of the
           // old bind's.
           Member{"the deny root's parent covered", &kGuardUnshare, ":",
                  "mount --bind \"$1/src/secret\" \"$1/new\"; mount -t tmpfs zp \"$1/src\"; "
                  "mkdir \"$1/src/secret\"",
                  "new/key"},
       }) {
    const std::string dir = box.base() + "/m" + std::to_string(n++);
    for (const auto* sub : {"", "/src", "/src/secret", "/p", "/p/alias", "/new"})
      BOOST_REQUIRE(mkdir((dir + sub).c_str(), 0755) == 0);
    box.write_file(dir + "/src/secret/key", "AKIA-KEY\n");
    RunSpec spec;
    spec.options = {"--policy", deny_policy(box, dir + "/src/secret")};
    spec.root_prefix = host_acts_while_held(*m.held, m.script, {dir}, m.before);
    expect_deny_root_unread(box, spec, dir + "/" + m.read, m.name);
  }
}

// A13-2: the bound lints (ZP003's home and start-up files, ZP013's shared directories, ...)
// judge the writable mounts below a writable root (A12-2) in the table resolution read;
// A11-4's look at the guard's table once bwrap runs looked for unmasked deny roots and
// protected paths only, and only when the kernel marked the host's table changed, which a
// rename above a mount point does not. Members, made by the host while strace holds the
// guard's first unshare 0.3 s: a bind of the caller's home into the workspace, and a
// directory holding a bind of the home (made before the run, outside every writable root)
// moved into the workspace (ZP013's shared directories are judged the same way). Each was writable
// in the sandbox (the command appended to ~/.bashrc). Now the lints are judged again on the guard's
// table whenever it differs from resolution's (exit 3, the lint named).
BOOST_DATA_TEST_CASE(a_host_bind_of_the_home_made_while_the_run_starts_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string outside = box.base() + "/outside";
  box.make_dir(outside + "/h");
  box.write_file(box.home() + "/.bashrc", "echo hi\n");
  struct Member {
    const char* name;
    const char* before;  // $1: the home, $2: the workspace, $3: a directory outside it
    const char* script;
    const char* written;  // the name of the home in the workspace then
  };
  for (const auto& m : {
           Member{"a bind of the home", ":", "mount --bind \"$1\" \"$2/home\"", "home"},
           Member{"a bind of the home moved in", "mount --bind \"$1\" \"$3/h\"",
                  "mv \"$3\" \"$2/outside\"", "outside/h"},
       }) {
    box.make_dir(box.ws("home"));
    RunSpec spec;
    spec.root_prefix =
        host_acts_while_held(kGuardUnshare, m.script, {box.home(), box.ws(""), outside}, m.before);
    spec.command = {"/bin/sh", "-c", ": > started; echo planted >> \"$0/.bashrc\"", m.written};
    const RunResult r = box.run(spec);
    BOOST_TEST(read_file(box.home() + "/.bashrc").value_or("").find("planted") == std::string::npos,
               m.name << ": written through the bind: " << r.describe());
    BOOST_TEST(r.err.find("ZP003") != std::string::npos, m.name << ": " << r.describe());
    expect_refused_before_the_command(box, r, 3, m.name);
  }
}

// A13C-1 (fixed): ZP013 and ZP017 judge a mount below a writable root by what its name
// shows on the host, where the host may unmount it again once the guard's copy holds it.
// A bind of a directory every user shares and a procfs, mounted in the workspace while the
// guard's unshare is held and unmounted on the host at bwrap's exec, stayed in the sandbox,
// writable (as root, the host's kernel.core_pattern with them). Whatever was mounted in a
// writable root in that window is refused now (exit 125, nothing ran).
BOOST_DATA_TEST_CASE(a_mount_in_the_workspace_the_host_removes_again_while_the_run_starts_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string shared = box.base() + "/shared";
  BOOST_REQUIRE(mkdir(shared.c_str(), 0755) == 0 && chmod(shared.c_str(), 01777) == 0);
  box.make_dir(box.ws("t"));
  box.make_dir(box.ws("k"));
  RunSpec spec;
  spec.root_prefix = host_acts_while_held(
      kGuardUnshare,
      "mount --bind \"$1\" \"$2/t\"; mount -t proc proc \"$2/k\"; w " +
          std::to_string(SYS_execve) + " ''; umount \"$2/t\" \"$2/k\"",
      {shared, box.workspace()}, ":", {"execve"});
  spec.command = {"/bin/sh", "-c", ": > started; echo planted > t/planted"};
  const RunResult r = box.run(spec);
  BOOST_TEST(!exists(shared + "/planted"), "written through the bind: " << r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(r.err.find("in a writable root changed on the host") != std::string::npos,
             r.describe());
  BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
}

// A13D-1 (fixed): the workspace is bound from its descriptor but judged by its name. A
// bind of a directory every user shares made in it while the guard's unshare is held, then
// the workspace renamed and its name made again: the guard's table named the mount below
// the new name, outside every writable root, and the sandbox got it through the descriptor
// unjudged (exit 0). Each writable root must still be the object resolution saw at its name.
BOOST_DATA_TEST_CASE(a_workspace_renamed_on_the_host_while_the_run_starts_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string shared = box.base() + "/shared";
  BOOST_REQUIRE(mkdir(shared.c_str(), 0755) == 0 && chmod(shared.c_str(), 01777) == 0);
  box.make_dir(box.ws("t"));
  RunSpec spec;
  spec.root_prefix = host_acts_while_held(
      kGuardUnshare, "mount --bind \"$1\" \"$2/t\"; mv \"$2\" \"$2.moved\"; mkdir \"$2\"",
      {shared, box.workspace()});
  spec.command = {"/bin/sh", "-c", ": > started; echo planted > t/planted"};
  const RunResult r = box.run(spec);
  BOOST_TEST(!exists(shared + "/planted"), "written through the bind: " << r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  // Refused by the guard's child, which finds another object at the workspace's name when
  // it pins the bind sources (A14-L1, runner/bind_stage.hpp), before A13D-1's look.
  BOOST_TEST(r.err.find("'" + box.workspace() + "'") != std::string::npos, r.describe());
  BOOST_TEST(!exists(box.workspace() + ".moved/started"), "the command ran: " << r.describe());
}

// A13D-2, A13C-1's deeper part (fixed): a mount point in a writable root was judged by
// names, the table's triple (point, device, root) and, by the re-judged lints, what the
// point shows on the host. Members, by the host while strace holds the guard's unshare
// 0.3 s, each with a directory every user may write (1777) or an unjudged filesystem
// ending up at `ws/b`, whose bind of `$1/src` (0755) or tmpfs the lints had judged:
// * A13D-2: the bind swapped for a bind of another directory made at src's name: the same
//   triple, so the same layout, and nothing was judged again (exit 0 before);
// * a second bind of such a directory stacked on the first, unmounted again on the host at
//   bwrap's exec: the re-judged lints look at the host's name, which shows src again
//   (refused before by the net of A13C-1 only because the first bind's root string
//   follows its source's rename);
// * the bind swapped for a bind of src's parent (refused before by the net of A13C-1);
// * a tmpfs swapped for another tmpfs (the same triple when the device number is reused).
// (The last two with nothing a lint refuses, so that only the identity can tell.)
// Now what each mount point in a writable root shows in the guard's namespace must be, by
// identity, what the lints judged (exit 125, nothing ran).
BOOST_DATA_TEST_CASE(a_mount_in_the_workspace_swapped_on_the_host_while_the_run_starts_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  struct Member {
    const char* name;
    const char* before;  // $1: the member's directory (holding src), $2: the workspace
    const char* script;
    const char* also_held;  // another call held (0.2 s), or empty
    const char* planted;    // where the command's file lands when the swap reaches it
  };
  box.make_dir(box.ws("b"));
  const char* const bound = "mount --bind \"$1/src\" \"$2/b\"";
  const std::string swapped_in = "mv \"$1/src\" \"$1/src.old\"; mkdir \"$1/src\"; chmod 1777 \"$1/src\"; ";
  const std::string stacked = swapped_in + "mount --bind \"$1/src\" \"$2/b\"; w " +
                              std::to_string(SYS_execve) + " ''; umount \"$2/b\"";
  const std::string swap = "umount \"$2/b\"; " + swapped_in + "mount --bind \"$1/src\" \"$2/b\"";
  int n = 0;
  for (const auto& m : {
           Member{"a bind swapped for one of another directory at its source's name", bound,
                  swap.c_str(), "", "src/planted"},
           Member{"a bind stacked on the judged one and removed again on the host", bound,
                  stacked.c_str(), "execve", "src/planted"},
           Member{"a bind swapped for one of its source's parent", bound,
                  "umount \"$2/b\"; mount --bind \"$1\" \"$2/b\"", "",
                  "planted"},
           Member{"a tmpfs swapped for a tmpfs", "mount -t tmpfs -o mode=0755 zp \"$2/b\"",
                  "umount \"$2/b\"; mount -t tmpfs -o mode=0755 zp \"$2/b\"", "", nullptr},
       }) {
    const std::string dir = box.base() + "/m" + std::to_string(n++);
    BOOST_REQUIRE(mkdir(dir.c_str(), 0755) == 0 && mkdir((dir + "/src").c_str(), 0755) == 0);
    RunSpec spec;
    std::vector<std::string> also;
    if (*m.also_held) also.push_back(m.also_held);
    spec.root_prefix =
        host_acts_while_held(kGuardUnshare, m.script, {dir, box.workspace()}, m.before, also);
    spec.command = {"/bin/sh", "-c", ": > started; echo planted > b/planted"};
    const RunResult r = box.run(spec);
    if (m.planted)
      BOOST_TEST(!exists(dir + "/" + m.planted),
                 m.name << ": written through the swapped mount: " << r.describe());
    BOOST_TEST(r.err.find("'" + box.ws("b") + "'") != std::string::npos,
               m.name << ": " << r.describe());
    expect_refused_before_the_command(box, r, 125, m.name);
  }
}

// A13C-2 (fixed): a deny root is the object resolution saw at its name (A13-1), and a hard
// link is that object. Members, by the host while strace holds the run's first watch:
// a deny file's parent moved away and a hard link of the file left at its name (the mask
// went onto the link and the command read the key under the moved name, exit 0 before);
// the same with a bind of the file, and of a deny directory, left at its name (refused
// before by A11-4's look: the moved name is one the masks lack). Now a deny file must
// also have the link count resolution saw (exit 125, nothing ran).
BOOST_DATA_TEST_CASE(a_deny_root_left_at_its_name_as_a_link_or_bind_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  struct Member {
    const char* name;
    const char* deny;  // below the member's directory
    const char* script;
  };
  int n = 0;
  for (const auto& m : {
           Member{"a hard link left at a deny file's name", "src/key",
                  "mv \"$1/src\" \"$1/moved\"; mkdir \"$1/src\"; ln \"$1/moved/key\" "
                  "\"$1/src/key\""},
           Member{"a bind left at a deny file's name", "src/key",
                  "mv \"$1/src\" \"$1/moved\"; mkdir \"$1/src\"; : > \"$1/src/key\"; mount "
                  "--bind \"$1/moved/key\" \"$1/src/key\""},
           Member{"a bind left at a deny directory's name", "src",
                  "mv \"$1/src\" \"$1/moved\"; mkdir \"$1/src\"; mount --bind \"$1/moved\" "
                  "\"$1/src\""},
       }) {
    const std::string dir = box.base() + "/d" + std::to_string(n++);
    BOOST_REQUIRE(mkdir(dir.c_str(), 0755) == 0 && mkdir((dir + "/src").c_str(), 0755) == 0);
    box.write_file(dir + "/src/key", "AKIA-KEY\n");
    RunSpec spec;
    spec.options = {"--policy", deny_policy(box, dir + "/" + m.deny)};
    spec.root_prefix = host_acts_while_held(kWatch, m.script, {dir});
    expect_deny_root_unread(box, spec, dir + "/moved/key", m.name);
  }
}

// Red team A14B-8: a mount in the workspace below a directory the caller cannot search
// could be looked up neither when the lints judged it nor in the guard's namespace, and
// "not found" on both sides passed as the same object, so whatever it showed was never
// judged. ZP017 fails on it now (exit 3, naming the mount point); root looks it up, and
// ZP017 judges the procfs there.
BOOST_DATA_TEST_CASE(a_mount_in_the_workspace_nobody_can_look_up_refuses_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("locked/m"));
  BOOST_REQUIRE(chown(box.ws("locked").c_str(), 0, 0) == 0);
  BOOST_REQUIRE(chmod(box.ws("locked").c_str(), 0700) == 0);
  RunSpec spec;
  spec.root_prefix =
      in_private_mount_namespace("mount -t proc proc \"$1/locked/m\" && shift && exec \"$@\"",
                                 {box.workspace()});
  spec.command = {"/bin/sh", "-c", ": > started"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 3, r.describe());
  BOOST_TEST(r.err.find("'" + box.ws("locked/m") + "', which " +
                        (caller == Caller::Root ? "is procfs" : "this user cannot look up")) !=
                 std::string::npos,
             r.describe());
  BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
