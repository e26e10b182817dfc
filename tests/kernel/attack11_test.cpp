#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// Red team round 11 (docs/redteam-2026-12.md): the caller's terminal, the guard's caller
// checks, the state directories.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// A pseudo-terminal whose slave is zpolicy's stdin and stderr; closed when it goes out of
// scope.
struct Pty {
  int master = -1, slave = -1;
  Pty() {
    if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0)
      throw std::runtime_error("openpty failed");
  }
  ~Pty() {
    close(master);
    close(slave);
  }
  int line_discipline() const {
    int d = -1;
    ioctl(slave, TIOCGETD, &d);
    return d;
  }
  int exclusive() const {
    int e = -1;
    ioctl(slave, TIOCGEXCL, &e);
    return e;
  }
  // What is written to the terminal reaches its other end.
  bool output_flows() const {
    const int flags = fcntl(slave, F_GETFL);
    fcntl(slave, F_SETFL, flags | O_NONBLOCK);
    const bool written = write(slave, "x", 1) == 1;
    fcntl(slave, F_SETFL, flags);
    pollfd p{master, POLLIN, 0};
    return written && poll(&p, 1, 1000) == 1;
  }
};

// A11-1: zpolicy restored the caller's terminal settings (termios) after the run, but the
// command holds the terminal itself and may use every ioctl its holder may: TIOCSETD to
// N_NULL (built in) left a terminal whose reads and writes fail (the caller's shell
// exited), TIOCEXCL made every later open of it fail EBUSY (`sudo` asking for a password),
// and tcflow(TCOOFF) stopped its output, which also blocked zpolicy forever on its own last
// line (the "whether the sandbox refused it" hint after exit 1): the run never returned.
// Through `zpolicy run` and through an embedder's run(plan) in process (`embedded`).
void terminal_after_ioctls(Caller caller, bool embedded) {
  using namespace std::chrono_literals;
  for (const std::string ioctls : {"TIOCSETD+TIOCEXCL", "TCOOFF"}) {
    Sandbox box(caller);
    Pty pty;
    BOOST_TEST_REQUIRE(pty.line_discipline() == N_TTY);
    RunSpec spec;
    spec.stdin_fd = pty.slave;
    spec.root_prefix = {"/bin/sh", "-c", "exec \"$@\" 2>&0", "sh"};
    spec.limit = 8s;
    if (embedded) spec.launcher = {embedder_binary()};
    const std::string change = ioctls == "TCOOFF"
                                   ? "termios.tcflow(0, termios.TCOOFF)"
                                   : "fcntl.ioctl(0, termios.TIOCSETD, struct.pack('i', 27)); "
                                     "fcntl.ioctl(0, termios.TIOCEXCL)";
    spec.command = {"/usr/bin/python3", "-c",
                    "import fcntl, struct, sys, termios\n" + change +
                        "\nopen('changed', 'w').close()\nsys.exit(1)"};
    const RunResult r = box.run(spec);
    BOOST_TEST_REQUIRE(exists(box.ws("changed")), ioctls << ": the command never ran\n"
                                                         << r.describe());
    BOOST_TEST(!r.hit_limit, ioctls << ": zpolicy never returned\n" << r.describe());
    BOOST_TEST(r.exit_code == 1, ioctls << "\n" << r.describe());
    BOOST_TEST(pty.line_discipline() == N_TTY, ioctls << ": the line discipline outlived the run");
    BOOST_TEST(pty.exclusive() == 0, ioctls << ": exclusive mode outlived the run");
    BOOST_TEST(pty.output_flows(), ioctls << ": stopped output outlived the run");
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack11)

BOOST_DATA_TEST_CASE(the_callers_terminal_outlives_no_ioctl_of_the_command, bdata::make(kCallers),
                     caller) {
  terminal_after_ioctls(caller, false);
}

BOOST_DATA_TEST_CASE(an_embedders_terminal_outlives_no_ioctl_of_the_command, bdata::make(kCallers),
                     caller) {
  terminal_after_ioctls(caller, true);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
