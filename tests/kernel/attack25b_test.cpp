#include <fcntl.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <chrono>
#include <string>

#include "sandbox_fixture.hpp"

// Red team attack 25b (docs/redteam-2026-12.md "Attack 25b"): the runner, mounts, seccomp
// and network outside git's configuration. Each case runs as root and as uid 65534 and is
// judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// What the host's open of `path` meets, without waiting: O_NONBLOCK makes an open that
// would have to break a lease fail with EWOULDBLOCK instead of blocking for the lease
// break time (fs.lease-break-time, 45 s by default). 0 when it opens.
int host_open_error(const std::string& path, int access) {
  const int fd = open(path.c_str(), access | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack25b)

// A25B-1: a file lease is kernel state on the host's inode. The command opened a file of
// its caller's outside every writable root read-only (the read-only mount allows that) and
// took a lease on it with fcntl(F_SETLEASE), which asks only that the caller own the file:
// a write lease made every open of the file by any host process (a read lease, every open
// for writing) wait up to fs.lease-break-time, 45 s, for the sandbox to give it up; as root
// that is any root-owned file nobody has open at the moment (/etc/passwd, a shared
// library), in read-only mode too. The host's O_NONBLOCK opens below got EWOULDBLOCK on
// 209e151. Now fcntl(F_SETLEASE) (and F_SETDELEG, the same for newer kernels) is refused:
// EPERM, and the host opens at once.
BOOST_DATA_TEST_CASE(the_sandbox_cannot_lease_a_host_file, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string wtarget = box.base() + "/wtarget", rtarget = box.base() + "/rtarget";
  box.write_file(wtarget, "host data\n");
  box.write_file(rtarget, "host data\n");
  const std::string held = box.ws("held");
  for (const std::string mode : {"workspace-write", "read-only"}) {
    RunSpec spec;
    spec.options = {"--mode", mode};
    spec.command = {
        "/usr/bin/python3",
        "-c",
        "import fcntl, os, signal, sys, time\n"
        "signal.signal(signal.SIGIO, signal.SIG_IGN)\n"
        "w = os.open(sys.argv[1], os.O_RDONLY)\n"
        "r = os.open(sys.argv[2], os.O_RDONLY)\n"
        "for fd, kind, name in ((w, fcntl.F_WRLCK, 'write'), (r, fcntl.F_RDLCK, 'read')):\n"
        "    try:\n"
        "        fcntl.fcntl(fd, fcntl.F_SETLEASE, kind)\n"
        "        print(name, 'lease taken', flush=True)\n"
        "    except OSError as e:\n"
        "        print(name, 'lease refused', e.errno, flush=True)\n"
        "    try:\n"
        "        fcntl.fcntl(fd, 1024 + 16, 0)\n"  // F_SETDELEG: EINVAL on 6.18
        "    except OSError as e:\n"
        "        print(name, 'delegation refused', e.errno, flush=True)\n"
        "if sys.argv[4] == 'workspace-write':\n"
        "    open(sys.argv[3], 'w').close()\n"
        "time.sleep(6)\n",
        wtarget,
        rtarget,
        held,
        mode};
    Running running = box.start(spec);
    // Read-only mode cannot say "held" on the host; its refusals are read from its output.
    if (mode == "workspace-write") {
      BOOST_TEST(wait_until([&] { return exists(held); }, std::chrono::seconds(20)));
      BOOST_TEST(host_open_error(wtarget, O_RDONLY) == 0);
      BOOST_TEST(host_open_error(rtarget, O_WRONLY) == 0);
    }
    const RunResult r = box.finish(running);
    BOOST_TEST(r.exit_code == 0, r.describe());
    BOOST_TEST(r.out.find("write lease refused 1") != std::string::npos, r.describe());
    BOOST_TEST(r.out.find("read lease refused 1") != std::string::npos, r.describe());
    BOOST_TEST(r.out.find("lease taken") == std::string::npos, r.describe());
    BOOST_TEST(r.out.find("delegation refused 1") != std::string::npos, r.describe());
    unlink(held.c_str());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
