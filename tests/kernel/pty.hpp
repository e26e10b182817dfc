#pragma once

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <stdexcept>

namespace zpolicy::tests::kernel {

// A pseudo-terminal for zpolicy's standard streams, its settings those of an interactive
// shell's terminal whatever the pty started with; closed when it goes out of scope.
struct Pty {
  int master = -1, slave = -1;
  Pty() {
    if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0)
      throw std::runtime_error("openpty failed");
    termios t;
    tcgetattr(slave, &t);
    t.c_lflag |= ECHO | ICANON;
    tcsetattr(slave, TCSANOW, &t);
  }
  ~Pty() {
    close(master);
    close(slave);
  }
  bool echo_and_canonical() const {
    termios t;
    return tcgetattr(slave, &t) == 0 && (t.c_lflag & (ECHO | ICANON)) == (ECHO | ICANON);
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

}  // namespace zpolicy::tests::kernel
