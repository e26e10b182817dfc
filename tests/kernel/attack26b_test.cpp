#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "sandbox_fixture.hpp"

// Red team attack 26b (docs/redteam-2026-12.md "Attack 26b"): `zpolicy run` outside git,
// after attack 25b. Each case runs as root and as uid 65534 and is judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// A TCP listener on the host's 127.0.0.1 (the host network a sandbox must not reach),
// non-blocking, so that an accept() after the run tells whether anyone connected.
int loopback_tcp_listener(std::string& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 8) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return -1;
  port = std::to_string(ntohs(a.sin_port));
  return fd;
}

// Both ends of a TCP connection on the host's loopback: [0] the accepted end (what a
// socket-activated service or `socat TCP-LISTEN:… EXEC:` hands its command), [1] the client.
bool tcp_connection(int ends[2]) {
  std::string port;
  const int front = loopback_tcp_listener(port);
  if (front < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
  ends[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok = ends[1] >= 0 && connect(ends[1], reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ends[0] = ok ? accept4(front, nullptr, nullptr, SOCK_CLOEXEC) : -1;
  close(front);
  return ends[0] >= 0;
}

// Whether anyone connected to `listener` (an accept() that does not wait).
bool someone_connected(int listener) {
  const int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (c < 0) return false;
  close(c);
  return true;
}

// The command: drop stdin's connection (connect() to an AF_UNSPEC address), then connect
// it to the host's port argv[1]; it prints what each step got.
std::vector<std::string> reaim_stdin(const std::string& port) {
  return {"/usr/bin/python3", "-c",
          "import ctypes, socket, struct, sys\n"
          "libc = ctypes.CDLL(None, use_errno=True)\n"
          "r = libc.connect(0, ctypes.c_char_p(struct.pack('H14x', 0)), 16)\n"
          "print('disconnect', r, ctypes.get_errno(), flush=True)\n"
          "s = socket.socket(fileno=0)\n"
          "try:\n"
          "    s.connect(('127.0.0.1', int(sys.argv[1])))\n"
          "    s.sendall(b'escaped')\n"
          "    print('connected', flush=True)\n"
          "except Exception as e:\n"  // a unix socket takes no (host, port): TypeError
          "    print('connect refused', getattr(e, 'errno', None), flush=True)\n",
          port};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack26b)

// A26B-1: a connected TCP socket on stdin passed as it is (R8-D2 let connected stream
// sockets through: a unix one cannot be aimed elsewhere). TCP can: a connect() to an
// AF_UNSPEC address drops the connection, and the next connect() reaches any address of
// the host's network namespace, where the socket lives. Under `network: loopback` and an
// allow list the filter lets connect() through (TCP on the sandbox's own lo needs it): the
// command connected to a host listener on 127.0.0.1 (under an allow list, past the proxy)
// on c49b89f. Now such a socket is refused there (exit 2, nothing ran); under `none`
// (connect() denied) it still passes and cannot be re-aimed; a unix stream socket still
// passes under `loopback` and stays with its peer.
BOOST_DATA_TEST_CASE(a_tcp_socket_on_stdin_cannot_be_aimed_at_the_host_network,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  std::string port;
  const int victim = loopback_tcp_listener(port);
  BOOST_REQUIRE(victim >= 0);
  const std::string loopback =
      box.write_policy("loopback.yaml", "zpolicy: 1\nmode: workspace-write\nnetwork: loopback\n");
  const std::string allow = box.write_policy(
      "allow.yaml",
      "zpolicy: 1\nmode: workspace-write\nnetwork:\n  allow: [\"example.org:443\"]\n");
  for (const std::string& policy : {loopback, allow}) {
    int ends[2];
    BOOST_REQUIRE(tcp_connection(ends));
    RunSpec spec;
    spec.options = {"--policy", policy};
    spec.stdin_fd = ends[0];
    spec.command = reaim_stdin(port);
    const RunResult r = box.run(spec);
    BOOST_TEST(r.exit_code == 2, policy << ": " << r.describe());
    BOOST_TEST(r.err.find("is a network (not a unix) socket") != std::string::npos, r.describe());
    BOOST_TEST(r.out.find("disconnect") == std::string::npos, r.describe());
    BOOST_TEST(!someone_connected(victim), policy << ": the host listener was reached");
    close(ends[0]);
    close(ends[1]);
  }
  // Under `none` (the default) it passes: connect() is denied, so it stays connected.
  int ends[2];
  BOOST_REQUIRE(tcp_connection(ends));
  RunSpec none;
  none.stdin_fd = ends[0];
  none.command = reaim_stdin(port);
  const RunResult n = box.run(none);
  BOOST_TEST(n.exit_code == 0, n.describe());
  BOOST_TEST(n.out.find("disconnect -1 1\n") != std::string::npos, n.describe());
  BOOST_TEST(n.out.find("connect refused 1\n") != std::string::npos, n.describe());
  BOOST_TEST(!someone_connected(victim), "none: the host listener was reached");
  close(ends[0]);
  close(ends[1]);
  // A unix stream socket under `loopback`: passes, refuses AF_UNSPEC (EINVAL), and what
  // the command writes reaches its peer.
  int pair[2];
  BOOST_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  RunSpec unix_pair;
  unix_pair.options = {"--policy", loopback};
  unix_pair.stdin_fd = pair[0];
  unix_pair.command = reaim_stdin(port);
  const RunResult u = box.run(unix_pair);
  BOOST_TEST(u.exit_code == 0, u.describe());
  BOOST_TEST(u.out.find("disconnect -1 22\n") != std::string::npos, u.describe());
  BOOST_TEST(u.out.find("connect refused") != std::string::npos, u.describe());
  BOOST_TEST(!someone_connected(victim), "unix: the host listener was reached");
  close(pair[0]);
  close(pair[1]);
  // An executor of the plan (examples/python/run_plan.py), which the plan does not tell
  // the network, passes no TCP socket: exit 125, nothing ran.
  const std::string executor =
      box.write_policy("run_plan.py", source_file("examples/python/run_plan.py"));
  std::vector<std::string> plan_argv = {zpolicy_binary(), "plan", "--policy", loopback,
                                        "--format",       "json", "--"};
  for (const auto& word : reaim_stdin(port)) plan_argv.push_back(word);
  const std::string plan = box.write_policy("loopback.json", box.host_command(plan_argv).out);
  BOOST_REQUIRE(tcp_connection(ends));
  RunSpec executed;
  executed.launcher = {"/usr/bin/python3", executor, plan};
  executed.stdin_fd = ends[0];
  const RunResult e = box.run(executed);
  BOOST_TEST(e.exit_code == 125, e.describe());
  BOOST_TEST(e.err.find("not a connected unix stream") != std::string::npos, e.describe());
  BOOST_TEST(e.out.find("disconnect") == std::string::npos, e.describe());
  BOOST_TEST(!someone_connected(victim), "run_plan.py: the host listener was reached");
  close(ends[0]);
  close(ends[1]);
  close(victim);
}

// A26B-2: a unix socket pair's end on stdin (what Node's child_process gives a child, and
// socat's EXEC:) belongs to the host's network namespace, where it was made, and is never
// bound: under `network: none` the command bound an abstract name there with it, and the
// host's own bind() of that name then failed with EADDRINUSE (a service that binds a fixed
// abstract name, started or restarted during the run, could not start) on c49b89f. Now
// bind() is refused under `none` (and so in read-only mode), as connect() is: no socket
// the sandbox can make there needs it.
BOOST_DATA_TEST_CASE(a_socket_on_stdin_takes_no_name_in_the_host_network, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string name = "zpolicy-a26b-2-" + std::to_string(getpid());
  for (const std::string mode : {"workspace-write", "read-only"}) {
    int pair[2];
    BOOST_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    RunSpec spec;
    spec.options = {"--mode", mode};
    spec.stdin_fd = pair[0];
    spec.command = {"/usr/bin/python3", "-c",
                    "import socket, sys, time\n"
                    "s = socket.socket(fileno=0)\n"
                    "try:\n"
                    "    s.bind(b'\\0' + sys.argv[1].encode())\n"
                    "    print('bound', flush=True)\n"
                    "except OSError as e:\n"
                    "    print('bind refused', e.errno, flush=True)\n"
                    "s.sendall(b'tried')\n"
                    "time.sleep(1)\n",
                    name};
    Running running = box.start(spec);
    close(pair[0]);
    // Once the command has tried (it says so on the pair) and while it sleeps: the host's
    // bind of the same name.
    const timeval limit{20, 0};
    setsockopt(pair[1], SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    char said[8] = {};
    BOOST_TEST(recv(pair[1], said, 5, MSG_WAITALL) == 5, mode << ": the command said nothing");
    const int host = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path + 1, name.data(), name.size());
    const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    const int bound = bind(host, reinterpret_cast<sockaddr*>(&a), len);
    const int bind_errno = errno;
    close(host);
    const RunResult r = box.finish(running);
    BOOST_TEST(r.exit_code == 0, mode << ": " << r.describe());
    BOOST_TEST(r.out.find("bind refused 1\n") != std::string::npos, mode << ": " << r.describe());
    BOOST_TEST(bound == 0,
               mode << ": the host's bind of @" << name << " failed, errno " << bind_errno);
    close(pair[1]);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
