#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "deny_root_runs.hpp"
#include "sandbox_fixture.hpp"

// Red team round 9d (docs/redteam-2026-12.md): the guard's private mount namespace (A17B-4)
// attacked: what the host mounts just before it is made, and a namespace that cannot be
// made.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// A9D-1: the guard (or run_plan.py's child) makes its private mount namespace a few
// milliseconds after the run last looked for its missing deny roots on the host. A
// filesystem the host mounts in between is copied into that namespace, and so into the
// sandbox: no inotify watch sees a mount, and nothing masks a deny root that was absent.
// strace holds the first unshare(CLONE_NEWNS[|CLONE_NEWUSER]) of each process for 0.3 s;
// root, in a shared mount namespace standing for the host's, mounts a tmpfs holding the
// deny root in a directory the sandbox reads meanwhile. The run must refuse before the
// command starts.
void mounted_before_the_namespace(Caller caller, bool executor) {
  Sandbox box(caller);
  const std::string mnt = box.base() + "/ro/mnt", ran = box.ws("ran");
  BOOST_REQUIRE(mkdir((box.base() + "/ro").c_str(), 0755) == 0 && mkdir(mnt.c_str(), 0755) == 0);
  BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
  const std::string nr = std::to_string(SYS_unshare);
  // The mounter looks for a process held in that unshare (/proc/PID/syscall: "NR FLAGS ...").
  const std::string mounter =
      std::string(kShellOwnProcesses) + "( i=0; until held " + nr +
      " '0x\\(100\\)\\?20000 ' || "
      "[ $i -ge 500 ]; do sleep 0.01; i=$((i+1)); done; mount -t tmpfs -o mode=0755 zp " +
      mnt + " && mkdir " + mnt + "/aws && echo AKIA-EXAMPLE > " + mnt +
      "/aws/credentials ) "
      ">/dev/null 2>&1 & exec \"$@\"";
  RunSpec spec;
  spec.root_prefix = {"/usr/bin/unshare", "-m", "--propagation", "shared",
                      "/bin/sh",          "-c", mounter,         "sh"};
  const auto strace = strace_holding("unshare", 300000);
  spec.root_prefix.insert(spec.root_prefix.end(), strace.begin(), strace.end());
  run_through(box, executor, deny_policy(box, mnt + "/aws"),
          {"/bin/sh", "-c", "touch " + ran + "; cat " + mnt + "/aws/credentials"}, spec);
  const RunResult r = box.run(spec);
  BOOST_TEST(r.out.find("AKIA") == std::string::npos, "read the deny root: " << r.describe());
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(!exists(ran), "the command ran: " << r.describe());
  BOOST_TEST(r.err.find("deny root") != std::string::npos, r.describe());
  BOOST_TEST(r.err.find(mnt + "/aws") != std::string::npos, r.describe());
}

// Runs the caller's argv in a user namespace of root's that maps root and nobody to
// themselves, where user.max_mnt_namespaces is 0: no mount namespace can be made in it, by
// root (unshare(CLONE_NEWNS): ENOSPC) or by nobody (EPERM, then a user namespace of its
// own whose mount namespace is refused the same way).
const char* const kNoMountNamespaces = R"(
import ctypes, os, sys, time
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(w)
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:
        os._exit(120)
    os.read(r, 1)
    with open("/proc/sys/user/max_mnt_namespaces", "w") as f:
        f.write("0")
    os.execv(sys.argv[1], sys.argv[1:])
os.close(r)
while os.readlink(f"/proc/{pid}/ns/user") == os.readlink("/proc/self/ns/user"):
    time.sleep(0.001)
for name in ("uid_map", "gid_map"):
    with open(f"/proc/{pid}/{name}", "w") as f:
        f.write("0 0 1\n65534 65534 1\n")
os.write(w, b"x")
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
)";

void no_private_namespace(Caller caller, bool executor) {
  Sandbox box(caller);
  const std::string ran = box.ws("ran");
  const std::string before = snapshot(box.workspace());
  RunSpec spec;
  spec.root_prefix = {"/usr/bin/python3", "-c", kNoMountNamespaces};
  run_through(box, executor, deny_policy(box, box.base() + "/absent"),
          {"/bin/sh", "-c", "touch " + ran + "; echo ran"}, spec);
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(r.out.find("ran") == std::string::npos, r.describe());
  BOOST_TEST(!exists(ran), "the command ran: " << r.describe());
  const bool said_why = r.err.find("private mount namespace") != std::string::npos ||
                       r.err.find("cannot give the sandbox a mount namespace") != std::string::npos;
  BOOST_TEST(said_why, r.describe());
  // A run ending while another is live on the host leaves its placeholders to the next
  // cleanup (docs/run.md "Cleanup"); other runs of this machine may be: clean up when quiet.
  const bool cleaned = wait_until(
      [&] {
        if (snapshot(box.workspace()) == before) return true;
        box.host_command({"/bin/sh", "-c", "\"$0\" cleanup \"$1\" >/dev/null; exit 0",
                          zpolicy_binary(), box.workspace()});
        return snapshot(box.workspace()) == before;
      },
      std::chrono::seconds(60));
  BOOST_TEST(cleaned, "placeholders left behind: " << r.describe());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack9d)

BOOST_DATA_TEST_CASE(a_deny_root_mounted_before_the_private_namespace_is_made_is_refused,
                     bdata::make(kCallers), caller) {
  mounted_before_the_namespace(caller, false);
}

BOOST_DATA_TEST_CASE(an_executor_refuses_a_deny_root_mounted_before_its_private_namespace,
                     bdata::make(kCallers), caller) {
  mounted_before_the_namespace(caller, true);
}

// The private namespace is what keeps the host's later mounts out: a run that cannot make
// it must start nothing (exit 125), and leave no placeholder behind.
BOOST_DATA_TEST_CASE(a_run_that_cannot_make_its_private_mount_namespace_starts_nothing,
                     bdata::make(kCallers), caller) {
  no_private_namespace(caller, false);
}

BOOST_DATA_TEST_CASE(an_executor_that_cannot_make_its_private_mount_namespace_starts_nothing,
                     bdata::make(kCallers), caller) {
  no_private_namespace(caller, true);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
