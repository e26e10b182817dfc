#include <signal.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Invariants 5 and 7: host processes can be neither seen nor signalled; ptrace,
// process_vm_readv/writev and TIOCSTI fail even on the sandbox's own processes.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// Each call against a child of its own (same uid, same namespaces: only the filter can
// refuse it). Prints "NAME succeeded" or "NAME ERRNO".
const char* kTraceProgram = R"(import ctypes, os, errno, time
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(b"original", 16)
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
def report(name, rc):
    print(name, "succeeded" if rc >= 0 else errno.errorcode[ctypes.get_errno()], flush=True)
local = iovec(ctypes.cast(ctypes.create_string_buffer(16), ctypes.c_void_p), 8)
remote = iovec(ctypes.cast(buf, ctypes.c_void_p), 8)
libc.process_vm_readv.restype = ctypes.c_ssize_t
libc.process_vm_writev.restype = ctypes.c_ssize_t
libc.ptrace.restype = ctypes.c_long
report("process_vm_readv", libc.process_vm_readv(child, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
report("process_vm_writev", libc.process_vm_writev(child, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
report("ptrace_attach", libc.ptrace(16, child, None, None))
os.kill(child, 9)
os.waitpid(child, 0)
)";

// TIOCSTI on a terminal that is the caller's controlling terminal, which the kernel
// itself allows (dev.tty.legacy_tiocsti=1): only the filter can refuse it. The kernel
// reads the ioctl command as 32 bits, so the same request with bit 32 set must be
// refused as well. Prints "NAME succeeded" or "NAME ERRNO".
const char* kTiocstiProgram = R"(import ctypes, os, fcntl, termios, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_char_p]
m, s = os.openpty()
child = os.fork()
if child == 0:
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    for name, request in [("TIOCSTI", termios.TIOCSTI), ("TIOCSTI-high-bit", termios.TIOCSTI | (1 << 32))]:
        rc = libc.ioctl(s, request, b"x")
        print(name, "succeeded" if rc == 0 else errno.errorcode[ctypes.get_errno()], flush=True)
    os._exit(0)
os.waitpid(child, 0)
)";

bool stopped(pid_t pid) {
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat").value_or("");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'T';
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_process_escape)

BOOST_DATA_TEST_CASE(host_processes_are_invisible_and_unsignalable, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string seconds = unique_sleep_seconds();
  HostProcess sleeper(caller, {"/bin/sleep", seconds});
  BOOST_TEST_REQUIRE(wait_until(
      [&] {
        return !processes_with_argv({"/bin/sleep", seconds}).empty();
      },
      std::chrono::seconds(5)));
  const std::string pid = std::to_string(sleeper.pid());
  auto r = box.sh("kill -0 " + pid + "; echo kill0=$?; kill -STOP " + pid + "; kill -9 " + pid +
                  "\ntest -e /proc/" + pid +
                  " && echo proc-\"\"visible\n"
                  "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; ps -eo pid,args");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("kill0=0") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("proc-visible") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find(seconds) == std::string::npos, r.describe());
  BOOST_TEST(sleeper.alive());
  BOOST_TEST(!stopped(sleeper.pid()));
}

BOOST_AUTO_TEST_SUITE_END()

// These need the real seccomp filter (the seccomp branch); they fail with a filter that
// allows everything.
BOOST_AUTO_TEST_SUITE(kernel_seccomp_escapes)

BOOST_DATA_TEST_CASE(ptrace_and_process_vm_fail, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string program = box.base() + "/trace.py";
  box.write_file(program, kTraceProgram);
  auto r = box.sh("/usr/bin/python3 " + program);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  for (const char* call : {"process_vm_readv", "process_vm_writev", "ptrace_attach"})
    BOOST_TEST(r.out.find(std::string(call) + " EPERM") != std::string::npos, call << "\n"
                                                                                   << r.describe());
  // Control: the same program run by the same user on the host is allowed all three.
  auto control = box.host_command({"/usr/bin/python3", program});
  for (const char* call : {"process_vm_readv", "process_vm_writev", "ptrace_attach"})
    BOOST_TEST(control.out.find(std::string(call) + " succeeded") != std::string::npos,
               call << "\n"
                    << control.describe());
}

BOOST_DATA_TEST_CASE(tiocsti_fails_with_eperm_also_with_bit_32_set, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string program = box.base() + "/tiocsti.py";
  box.write_file(program, kTiocstiProgram);
  auto r = box.sh("/usr/bin/python3 " + program);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("TIOCSTI EPERM") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("TIOCSTI-high-bit EPERM") != std::string::npos, r.describe());
  // Control: where the kernel still allows TIOCSTI, the same program does inject on the host.
  if (read_file("/proc/sys/dev/tty/legacy_tiocsti").value_or("0") == "1\n") {
    auto control = box.host_command({"/usr/bin/python3", program});
    BOOST_TEST(control.out.find("TIOCSTI succeeded") != std::string::npos, control.describe());
    BOOST_TEST(control.out.find("TIOCSTI-high-bit succeeded") != std::string::npos,
               control.describe());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
