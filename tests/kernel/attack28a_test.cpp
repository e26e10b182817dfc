#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "sandbox_fixture.hpp"

// Red team attack 28a (docs/redteam-2026-12.md "Attack 28a"): what a sandbox does to host
// processes through the standard streams it shares with them. Each case runs as root and
// as uid 65534 and is judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// On the host, as the caller: a pipe of the caller's own on the run's stdout and on its
// stdin; the command sets each pipe's capacity (one page for stdout, 1 MiB for stdin).
// Prints each pipe's capacity before and after the run.
const std::string kPipeSizeCaller = R"PY(
import fcntl, os, subprocess, sys
z, ws, mode = sys.argv[1:4]
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032
inner = (
    "import fcntl, sys\n"
    "for fd, size in ((1, 4096), (0, 1 << 20)):\n"
    "    try: print('set', fd, fcntl.fcntl(fd, 1031, size), file=sys.stderr)\n"
    "    except OSError as e: print('set', fd, 'refused', e.errno, file=sys.stderr)\n")
out_r, out_w = os.pipe()
in_r, in_w = os.pipe()
print("before", fcntl.fcntl(out_w, F_GETPIPE_SZ), fcntl.fcntl(in_r, F_GETPIPE_SZ))
p = subprocess.run([z, "run", "--mode", mode, "--", "/usr/bin/python3", "-c", inner],
                   stdin=in_r, stdout=out_w, cwd=ws)
print("run exited", p.returncode)
print("after", fcntl.fcntl(out_w, F_GETPIPE_SZ), fcntl.fcntl(in_r, F_GETPIPE_SZ))
)PY";

// On the host, as the caller: a harness holds its end of a unix socket pair given to the run
// as stdin (node's `stdio: 'pipe'` does) and does not read it; stdout is a file (`file`) or
// another socket pair (`socket`), stderr the same. The command sends its stdout and stderr
// into its stdin socket (SCM_RIGHTS) and exits. Prints how long zpolicy took to return
// after that, or that it had not after 20 s, and what reached stdout.
const std::string kSentAwayCaller = R"PY(
import os, socket, subprocess, sys, tempfile, time
z, ws, mode, out_kind = sys.argv[1:5]
inner = (
    "import array, os, socket\n"
    "print('command wrote', flush=True)\n"
    "s = socket.socket(fileno=os.dup(0))\n"
    "s.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [1, 2]))])\n")
ours, theirs = socket.socketpair()
if out_kind == "file":
    out = tempfile.TemporaryFile()
else:
    out_ours, out = socket.socketpair()
p = subprocess.Popen([z, "run", "--mode", mode, "--", "/usr/bin/python3", "-c", inner],
                     stdin=theirs, stdout=out, stderr=out, cwd=ws)
theirs.close()
if out_kind == "socket":
    out.close()
    out_ours.settimeout(25)
start = time.time()
try:
    status = p.wait(timeout=20)
    print("zpolicy returned", status, "in under 20 s" if time.time() - start < 20 else "late")
except subprocess.TimeoutExpired:
    print("zpolicy still running 20 s on")
    p.kill()
    p.wait()
if out_kind == "file":
    out.seek(0)
    got = out.read()
else:
    got = b""
    try:
        while True:
            chunk = out_ours.recv(65536)
            if not chunk: break
            got += chunk
    except socket.timeout:
        pass
print("stdout got:", got.decode(errors="replace").splitlines()[:1])
ours.close()
)PY";

// On the host, as the caller: a unix socket pair on the run's stdout whose reader stops
// reading (`stall`: the socket fills) or shuts its reading side (`shut`: writes fail EPIPE);
// the command writes without end under `--timeout 3`. Prints how zpolicy ended, or that it
// had not 20 s on.
const std::string kStalledReader = R"PY(
import socket, subprocess, sys, time
z, ws, how = sys.argv[1:4]
ours, theirs = socket.socketpair()
if how == "shut":
    ours.shutdown(socket.SHUT_RD)
p = subprocess.Popen([z, "run", "--timeout", "3", "--", "/usr/bin/yes"],
                     stdin=subprocess.DEVNULL, stdout=theirs, stderr=subprocess.DEVNULL, cwd=ws)
theirs.close()
try:
    status = p.wait(timeout=20)
    print("zpolicy returned", status)
except subprocess.TimeoutExpired:
    print("zpolicy still running 20 s on")
    p.kill()
    p.wait()
ours.close()
)PY";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack28a)

// A28A-2: a pipe's capacity is the pipe's, not the open file's, so the command's
// F_SETPIPE_SZ on the caller's own pipe outlived the run: the caller's stdout pipe went from
// 64 KiB to 4 KiB (and its stdin pipe to 1 MiB) for every later writer. The capacity is put
// back after the run, as the status flags are (R18-5).
BOOST_DATA_TEST_CASE(the_sandbox_leaves_the_callers_pipes_their_capacity, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  for (const std::string mode : {"workspace-write", "read-only"}) {
    const RunResult r = box.host_command(
        {"/usr/bin/python3", "-c", kPipeSizeCaller, zpolicy_binary(), box.workspace(), mode});
    const std::string what = mode + ": " + r.describe();
    BOOST_TEST(r.out.find("before 65536 65536\n") != std::string::npos, what);
    BOOST_TEST(r.out.find("run exited 0\n") != std::string::npos, what);
    BOOST_TEST(r.out.find("after 65536 65536\n") != std::string::npos, what);
  }
}

// A28A-3: zpolicy copies what the command writes into a file on stdout through a pipe, and
// waited for that pipe's end of file; the command sent the
// pipe's write end into its stdin socket, which outlived every process of the sandbox,
// and zpolicy never returned while the caller, waiting for it, held its end of the socket.
// The copies end once the sandbox is gone and the pipe is empty: zpolicy returns the
// command's status, and what the command wrote arrives. A socket on stdout is no copy's
// (the command holds it as the caller does), the control.
BOOST_DATA_TEST_CASE(a_copy_ends_with_the_sandbox_whoever_holds_its_pipe, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  for (const std::string mode : {"workspace-write", "read-only"})
    for (const std::string out : {"file", "socket"}) {
      const RunResult r = box.host_command({"/usr/bin/python3", "-c", kSentAwayCaller,
                                            zpolicy_binary(), box.workspace(), mode, out});
      const std::string what = mode + " stdout " + out + ": " + r.describe();
      BOOST_TEST(r.out.find("zpolicy returned 0 in under 20 s") != std::string::npos, what);
      BOOST_TEST(r.out.find("stdout got: ['command wrote']") != std::string::npos, what);
    }
}

// A28D-1 (attack 28d): A28A-1's fix copied a socket on stdout through a pipe, and the copy
// waited for room in the socket without end: with a reader that stopped reading, or shut its
// reading side (a unix stream then never polls writable), `zpolicy run --timeout 3` was
// still running 20 s on and a SIGTERM did not end it. The socket is the command's again, as
// the caller's: the command meets the full socket or EPIPE itself, and the timeout ends
// the run.
BOOST_DATA_TEST_CASE(a_stalled_reader_of_a_socket_on_stdout_does_not_hold_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const std::string how : {"stall", "shut"}) {
    const RunResult r = box.host_command(
        {"/usr/bin/python3", "-c", kStalledReader, zpolicy_binary(), box.workspace(), how});
    const std::string what = how + ": " + r.describe();
    BOOST_TEST(r.out.find("zpolicy returned") != std::string::npos, what);
    BOOST_TEST(r.out.find("still running") == std::string::npos, what);
  }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace zpolicy::tests::kernel
