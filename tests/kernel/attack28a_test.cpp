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

// On the host, as the caller: a harness whose child's stdout and stderr are one end of a
// unix socket pair (node's `stdio: 'pipe'` makes socket pairs) runs a shell line with a
// host command after the run, `zpolicy run … ; echo after-run $?`, and reads the socket to
// its end. The command writes a line, then shuts its stdout down and shortens the send
// timeout and buffer, state of the socket that outlived the run when the socket was the
// caller's own. Prints what the harness read and how the shell ended.
const std::string kSocketHarness = R"PY(
import signal, socket, subprocess, sys
z, ws, mode = sys.argv[1:4]
inner = (
    "import os, socket, struct, sys\n"
    "print('inner-out', flush=True)\n"
    "print('inner-err', file=sys.stderr, flush=True)\n"
    "try:\n"
    "    s = socket.socket(fileno=os.dup(1))\n"
    "    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack('ll', 0, 1000))\n"
    "    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1)\n"
    "    s.shutdown(socket.SHUT_RDWR)\n"
    "    print('shutdown done', file=sys.stderr, flush=True)\n"
    "except OSError as e:\n"
    "    print('shutdown refused', e.errno, file=sys.stderr, flush=True)\n")
ours, theirs = socket.socketpair()
p = subprocess.Popen(
    ["/bin/sh", "-c", '"$0" run --mode "$1" -- /usr/bin/python3 -c "$2"; echo "after-run $?"; '
     'head -c 300000 /dev/zero | tr "\\0" x; echo; echo after-bulk $?', z, mode, inner],
    stdin=subprocess.DEVNULL, stdout=theirs, stderr=theirs, cwd=ws,
    preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_DFL))
theirs.close()
got = b""
while True:
    chunk = ours.recv(65536)
    if not chunk: break
    got += chunk
st = p.wait()
for line in got.decode(errors="replace").splitlines():
    print("read:", line if len(line) < 200 else "%d x" % len(line))
print("shell killed by", signal.Signals(-st).name if st < 0 else "nothing", "status", st)
)PY";

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

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack28a)

// A28A-1: a socket on stdout or stderr reached the command as the caller's own open file,
// and a socket is one object for everyone who holds it: the command's `shutdown()` of it
// outlived the run, and the host command after it in the same shell line died of SIGPIPE at
// its first write (its output lost); the send timeout and buffer the command set stayed on
// the socket too. The command now writes into a pipe that zpolicy copies into the socket:
// its `shutdown()` fails (ENOTSOCK), its output still arrives, in order, and the host's
// later writes, a large one included, reach the harness.
BOOST_DATA_TEST_CASE(the_sandbox_cannot_shut_the_callers_output_socket, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  for (const std::string mode : {"workspace-write", "read-only"}) {
    const RunResult r = box.host_command(
        {"/usr/bin/python3", "-c", kSocketHarness, zpolicy_binary(), box.workspace(), mode});
    const std::string what = mode + ": " + r.describe();
    BOOST_TEST(r.out.find("read: inner-out\nread: inner-err\n") != std::string::npos, what);
    BOOST_TEST(r.out.find("read: shutdown refused 88") != std::string::npos, what);
    BOOST_TEST(r.out.find("read: after-run 0") != std::string::npos, what);
    BOOST_TEST(r.out.find("read: 300000 x\nread: after-bulk 0") != std::string::npos, what);
    BOOST_TEST(r.out.find("shell killed by nothing status 0") != std::string::npos, what);
  }
}

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

// A28A-3: zpolicy copies what the command writes into a file (or, since A28A-1, a socket) on
// stdout through a pipe, and waited for that pipe's end of file; the command sent the
// pipe's write end into its stdin socket, which outlived every process of the sandbox,
// and zpolicy never returned while the caller, waiting for it, held its end of the socket.
// The copies end once the sandbox is gone and the pipe is empty: zpolicy returns the
// command's status, and what the command wrote arrives.
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

BOOST_AUTO_TEST_SUITE_END()
}  // namespace zpolicy::tests::kernel
