#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <functional>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Red team R17-5 and its class (docs/protected-paths.md "Device nodes, sockets and FIFOs
// in a writable root"): a device node, socket or FIFO in a writable root is the
// workspace's inode, but what it opens is the host's device or a host process's endpoint.
// A sandbox that owns it (started by root, a node root made; or by its owner) made it
// 0666 and so opened the host's console to every local user. Each is now bound read-only:
// the sandbox's chmod, chown and utimes meet EROFS (an ACL the filter refuses everywhere
// since A27B-1), and the host's node keeps its
// mode, owner and times. Observed from the host, root and nobody; on main e8d1f93 every
// member changed for both callers.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_special_files)

namespace {

void give_to_caller(const Sandbox& box, const std::string& path) {
  const uid_t id = uid_of(box.caller());
  BOOST_TEST_REQUIRE(lchown(path.c_str(), id, id) == 0, path);
}

void make_node(const Sandbox& box, const std::string& path, mode_t type, dev_t dev) {
  BOOST_TEST_REQUIRE(mknod(path.c_str(), type | 0600, dev) == 0, path);
  give_to_caller(box, path);
}

void make_socket(const Sandbox& box, const std::string& path) {
  box.host_command({"/usr/bin/python3", "-c",
                    "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", path});
  BOOST_TEST_REQUIRE(chmod(path.c_str(), 0600) == 0, path);
}

// Every way of changing a file's attributes the sandbox has, each on every path named:
// chmod (fchmodat), through an O_PATH descriptor's /proc name, chown to its own ids
// (a change of ctime only, were it allowed), utimes, a POSIX ACL granting others
// read and write (refused by the filter wherever it is aimed since A27B-1: EOPNOTSUPP).
// The modes give others no write, which the filter refuses first (A27B-1): what is tried
// here is the mount. One line each: "OP PATH RESULT".
const char* kChangeAttributes = R"(
shared = acl(((1, 6), (4, 0), (0x20, 6)))  # user::rw- group::--- other::rw-
for p in sys.argv[1:]:
    tryit('chmod', p, lambda: os.chmod(p, 0o660))
    tryit('chmod-fd', p, lambda: chmod_by_fd(p, 0o604))
    tryit('chown', p, lambda: os.chown(p, os.getuid(), os.getgid()))
    tryit('utime', p, lambda: os.utime(p, (1, 1)))
    tryit('acl', p, lambda: os.setxattr(p, 'system.posix_acl_access', shared))
print('attributes tried')
)";

struct Attributes {
  mode_t mode;
  uid_t uid;
  gid_t gid;
  timespec mtime, ctime;
};

Attributes attributes_of(const std::string& path) {
  struct stat st {};
  BOOST_TEST_REQUIRE(lstat(path.c_str(), &st) == 0, path);
  return {st.st_mode, st.st_uid, st.st_gid, st.st_mtim, st.st_ctim};
}

bool same(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

struct Member {
  const char* what;
  std::vector<std::string> nodes;  // relative to the workspace
  std::function<void(const Sandbox&)> plant;
  std::string before = "";       // run in the sandbox first
  const char* closed = nullptr;  // a directory given `mode` for the run, then 0755 again
  mode_t mode = 0;
};

std::vector<Member> members() {
  return {
      {"a chroot's character device",
       {"chroot/dev/console"},
       [](const Sandbox& b) {
         b.make_dir(b.ws("chroot/dev"));
         make_node(b, b.ws("chroot/dev/console"), S_IFCHR, makedev(5, 1));
       }},
      {"a block device in a build tree",
       {"build/img/loop"},
       [](const Sandbox& b) {
         b.make_dir(b.ws("build/img"));
         make_node(b, b.ws("build/img/loop"), S_IFBLK, makedev(7, 200));
       }},
      {"a daemon's socket",
       {"run/daemon.sock"},
       [](const Sandbox& b) {
         b.make_dir(b.ws("run"));
         make_socket(b, b.ws("run/daemon.sock"));
       }},
      {"a FIFO",
       {"control.fifo"},
       [](const Sandbox& b) {
         BOOST_TEST_REQUIRE(mkfifo(b.ws("control.fifo").c_str(), 0600) == 0);
         give_to_caller(b, b.ws("control.fifo"));
       }},
      {"a node hard-linked into the workspace from elsewhere",
       {"linked-null"},
       [](const Sandbox& b) {
         const std::string elsewhere = b.base() + "/elsewhere-null";
         make_node(b, elsewhere, S_IFCHR, makedev(1, 3));
         BOOST_TEST_REQUIRE(link(elsewhere.c_str(), b.ws("linked-null").c_str()) == 0);
       }},
      {"a node in a nested repository's work tree",
       {"sub/dev/null"},
       [](const Sandbox& b) {
         b.make_dir(b.ws("sub/.git/objects"));
         b.make_dir(b.ws("sub/.git/refs"));
         b.write_file(b.ws("sub/.git/HEAD"), "ref: refs/heads/main\n");
         b.make_dir(b.ws("sub/dev"));
         make_node(b, b.ws("sub/dev/null"), S_IFCHR, makedev(1, 3));
       }},
      // The caller's own directory that cannot be listed (0111) or searched (0644): the
      // sandbox chmods it back first. Root lists every directory.
      {"a node below a directory of mode 0111",
       {"locked/tty"},
       [](const Sandbox& b) {
         b.make_dir(b.ws("locked"));
         make_node(b, b.ws("locked/tty"), S_IFCHR, makedev(5, 0));
       },
       "chmod 755 locked; ",
       "locked",
       0111},
      {"a socket below a directory of mode 0644",
       {"shut/agent.sock"},
       [](const Sandbox& b) {
         b.make_dir(b.ws("shut"));
         make_socket(b, b.ws("shut/agent.sock"));
       },
       "chmod 755 shut; ",
       "shut",
       0644},
      // Not the caller's and not listable, but searchable: the node is reached by name.
      {"a node below another user's directory of mode 0711",
       {"other/tty"},
       [](const Sandbox& b) {
         b.make_dir(b.ws("other"));
         make_node(b, b.ws("other/tty"), S_IFCHR, makedev(5, 0));
         const uid_t someone = b.caller() == Caller::Root ? 65534 : 0;
         BOOST_TEST_REQUIRE(lchown(b.ws("other").c_str(), someone, someone) == 0);
       },
       "",
       "other",
       0711},
  };
}

}  // namespace

// Each member under the default policy (whose `**/.git` walk already lists every
// directory) and under a policy without any pattern (no such walk): the class holds for
// both. Under the default, nobody's 0111 directory refuses the run (H17-3, exit 2) before
// this; root lists it.
BOOST_DATA_TEST_CASE(special_files_in_a_writable_root_keep_their_mode_owner_and_times,
                     bdata::make(kCallers), caller) {
  for (const Member& m : members()) {
    for (const bool patterns : {true, false}) {
      Sandbox box(caller);
      m.plant(box);
      const std::string what = std::string(m.what) + (patterns ? " (default)" : " (no pattern)");
      std::vector<Attributes> before;
      RunSpec spec;
      if (!patterns)
        spec.options = {"--policy",
                        box.write_policy("p.yaml",
                                         "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  "
                                         "write: [\"${WORKSPACE}\"]\n  protect: [.git, .env]\n")};
      spec.command = {"/bin/sh", "-c", m.before + "exec /usr/bin/python3 -c \"$0\" \"$@\"",
                      python_try_each(kChangeAttributes)};
      for (const auto& n : m.nodes) spec.command.push_back(n);
      for (const auto& n : m.nodes) before.push_back(attributes_of(box.ws(n)));
      if (m.closed) BOOST_TEST_REQUIRE(chmod(box.ws(m.closed).c_str(), m.mode) == 0);
      const RunResult r = box.run(spec);
      if (m.closed) BOOST_TEST_REQUIRE(chmod(box.ws(m.closed).c_str(), 0755) == 0);
      // nobody's 0111 directory hides what `**/.git` looks for; a 0644 one holding no
      // directory does not (the walk lists it and opens nothing in it).
      const bool refused = patterns && m.mode == 0111 && caller == Caller::Nobody;
      // Closed read-only, nobody's 0644 directory stays unsearchable: nothing in it is even
      // looked up.
      const std::string expected = m.mode == 0644 && caller == Caller::Nobody ? "EACCES" : "EROFS";
      BOOST_TEST(r.exit_code == (refused ? 2 : 0), what << ": " << r.describe());
      for (size_t i = 0; i < m.nodes.size(); ++i) {
        const auto now = attributes_of(box.ws(m.nodes[i]));
        BOOST_TEST(now.mode == before[i].mode, what << ": mode " << std::oct << before[i].mode
                                                    << " -> " << now.mode << "\n"
                                                    << r.out);
        BOOST_TEST((now.uid == before[i].uid && now.gid == before[i].gid), what);
        BOOST_TEST(same(now.mtime, before[i].mtime), what << ": mtime changed");
        BOOST_TEST(same(now.ctime, before[i].ctime), what << ": ctime changed\n" << r.out);
        if (refused) continue;
        for (const char* op : {"chmod", "chmod-fd", "chown", "utime", "acl"}) {
          const std::string line = std::string(op) + " " + m.nodes[i] + " ";
          const size_t at = r.out.find(line);
          if (at == std::string::npos) {
            BOOST_ERROR(what << ": " << op << " not tried: " << r.describe());
            continue;
          }
          const std::string result =
              r.out.substr(at + line.size(), r.out.find('\n', at) - at - line.size());
          // No attribute is set anywhere (A27B-1): the filter answers EOPNOTSUPP (Python
          // names 95 ENOTSUP) before the mount.
          const std::string want = std::string(op) == "acl" ? "ENOTSUP" : expected;
          BOOST_TEST(result == want, what << ": " << op << " " << result);
        }
      }
    }
  }
}

// The ways around the read-only bind the attacker has: moving the node or a directory
// above it (each is a mount point or pinned: EBUSY), a hard link to it (EXDEV across
// mounts), removing it, reaching it through a symlinked directory (the same mount). On
// main the sandbox moved `chroot` and chmodded the node under its new name.
BOOST_DATA_TEST_CASE(a_node_cannot_be_moved_linked_or_reached_around_its_bind,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("chroot/dev"));
  make_node(box, box.ws("chroot/dev/console"), S_IFCHR, makedev(5, 1));
  BOOST_TEST_REQUIRE(symlink("chroot", box.ws("link").c_str()) == 0);
  const Attributes before = attributes_of(box.ws("chroot/dev/console"));
  const RunResult r = box.sh(
      "mv chroot/dev/console chroot/dev/c2; mv chroot/dev chroot/d2; mv chroot c2; "
      "ln chroot/dev/console hl; rm -rf chroot; "
      "for n in c2/dev/console chroot/d2/console chroot/dev/c2 hl link/dev/console "
      "chroot/dev/console; do chmod 666 $n 2>/dev/null && echo changed $n; done; true");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("changed") == std::string::npos, r.describe());
  for (const char* moved : {"c2", "chroot/d2", "chroot/dev/c2", "hl"})
    BOOST_TEST(!exists(box.ws(moved)), moved << " exists: " << r.describe());
  const Attributes now = attributes_of(box.ws("chroot/dev/console"));
  BOOST_TEST(now.mode == before.mode, "mode " << std::oct << before.mode << " -> " << now.mode);
  BOOST_TEST(same(now.ctime, before.ctime), "ctime changed");
}

// Found while attacking this fix (dev18-A1): a directory of another user's that the caller
// can search but not list (0711) was skipped by every walk, so what the caller owns in it
// was reached by name. Besides a node, the other name of a protected file: the sandbox
// appended to `.env` through `other/alias` (nobody, a policy without patterns; H17-7's rule
// covers the caller's own directories only). Such a directory is now read-only whole. Root
// lists every directory.
BOOST_AUTO_TEST_CASE(a_protected_files_alias_below_another_users_searchable_directory_stays) {
  Sandbox box(Caller::Nobody);
  box.write_file(box.ws(".env"), "orig\n");
  box.make_dir(box.ws("other"));
  BOOST_TEST_REQUIRE(link(box.ws(".env").c_str(), box.ws("other/alias").c_str()) == 0);
  BOOST_TEST_REQUIRE(lchown(box.ws("other").c_str(), 0, 0) == 0);
  BOOST_TEST_REQUIRE(chmod(box.ws("other").c_str(), 0711) == 0);
  const std::string policy = box.write_policy(
      "p.yaml",
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n"
      "  protect: [.git, .env]\n");
  const RunResult r = box.sh("echo evil >> other/alias", {"--policy", policy});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws(".env")).value_or("") == "orig\n", r.describe());
}

// A node cannot appear during the run by the sandbox's hand: mknod of a character or block
// device is refused (no CAP_MKNOD in the sandbox's user namespace, as root and as nobody),
// and nothing is created. A FIFO or socket the sandbox makes is its own endpoint (held;
// docs/protected-paths.md). Holds on main too: the members' limit, checked.
BOOST_DATA_TEST_CASE(the_sandbox_cannot_make_a_device_node, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.command = {"/usr/bin/python3", "-c", R"(
import errno, os, stat
for name, kind in (('c', stat.S_IFCHR), ('b', stat.S_IFBLK)):
    try:
        os.mknod(name, kind | 0o666, os.makedev(1, 3))
        print(name, 'ok')
    except OSError as e:
        print(name, errno.errorcode[e.errno])
print('mknod tried')
)"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find("c EPERM") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("b EPERM") != std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("c")));
  BOOST_TEST(!exists(box.ws("b")));
}

// Over the budget (256 special files and closed directories), the run is refused before
// anything starts (exit 2, the reason named), rather than bind thousands of mounts. On
// main the command ran and chmodded them.
BOOST_DATA_TEST_CASE(more_special_files_than_the_budget_refuse_the_run, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("fifos"));
  for (int i = 0; i < 257; ++i) {
    const std::string f = box.ws("fifos/f" + std::to_string(i));
    BOOST_TEST_REQUIRE(mkfifo(f.c_str(), 0600) == 0);
    give_to_caller(box, f);
  }
  const RunResult r = box.sh("chmod 666 fifos/*; echo ran > ran");
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.err.find("more than 256 device nodes, sockets, FIFOs") != std::string::npos,
             r.describe());
  BOOST_TEST(!exists(box.ws("ran")), r.describe());
  BOOST_TEST((attributes_of(box.ws("fifos/f0")).mode & 07777) == 0600u);
}

// Positive controls: a workspace holding FIFOs and a socket within the budget runs, writes
// its files, and uses the FIFO (opened for writing and reading: a special file needs no
// writable mount for that), though not to change it (fchmod of the open FIFO: EROFS); its
// protected nodes cannot be removed or renamed (the cost, documented). Symlinks to the
// host's /dev nodes lead into the sandbox's own /dev, whose nodes are read-only (R16-1), or
// to nothing: /dev/null's ctime on the host is unchanged.
BOOST_DATA_TEST_CASE(a_workspace_with_special_files_still_runs_and_writes, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  BOOST_TEST_REQUIRE(mkfifo(box.ws("pipe").c_str(), 0600) == 0);
  give_to_caller(box, box.ws("pipe"));
  make_socket(box, box.ws("stale.sock"));
  BOOST_TEST_REQUIRE(symlink("/dev/null", box.ws("null-link").c_str()) == 0);
  BOOST_TEST_REQUIRE(symlink("/dev/console", box.ws("console-link").c_str()) == 0);
  struct stat null_before {};
  BOOST_TEST_REQUIRE(stat("/dev/null", &null_before) == 0);
  BOOST_TEST_REQUIRE((null_before.st_mode & 07777) == 0666);
  const RunResult r = box.sh(
      "echo built > out.txt && mkdir -p src/new && echo x > src/new/f && "
      "(cat pipe > got &) && echo through > pipe && wait; "
      "rm -f stale.sock 2>/dev/null || echo kept; mv pipe pipe2 2>/dev/null || echo kept; "
      "chmod 666 null-link 2>/dev/null || echo null-link refused; "
      "chmod 600 console-link 2>/dev/null || echo console-link refused; "
      "/usr/bin/python3 -c 'import os\n"
      "fd = os.open(\"pipe\", os.O_RDONLY | os.O_NONBLOCK)\n"
      "try: os.fchmod(fd, 0o660)\n"
      "except OSError as e: print(\"fchmod of the open FIFO:\", e.strerror)'");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("out.txt")).value_or("") == "built\n");
  BOOST_TEST(read_file(box.ws("src/new/f")).value_or("") == "x\n");
  BOOST_TEST(read_file(box.ws("got")).value_or("") == "through\n", r.describe());
  BOOST_TEST(exists(box.ws("stale.sock")));
  BOOST_TEST(exists(box.ws("pipe")));
  BOOST_TEST(r.out.find("fchmod of the open FIFO: Read-only file system") != std::string::npos,
             r.describe());
  BOOST_TEST((attributes_of(box.ws("pipe")).mode & 07777) == 0600u);
  BOOST_TEST(r.out.find("null-link refused") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("console-link refused") != std::string::npos, r.describe());
  struct stat null_now {};
  BOOST_TEST_REQUIRE(stat("/dev/null", &null_now) == 0);
  BOOST_TEST(same(null_now.st_ctim, null_before.st_ctim), "the host's /dev/null changed");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
