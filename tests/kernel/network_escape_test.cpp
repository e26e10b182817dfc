#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstring>

#include "sandbox_fixture.hpp"

// Invariant 4 under `network: none`: host listeners on loopback TCP/UDP, abstract unix
// sockets and unix socket files receive nothing from inside. Each listener is checked
// on the host after the run (nothing queued), then proven live by the same client run
// on the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// The client run inside the sandbox and, as the control, on the host.
// argv: KIND ADDRESS, KIND in tcp udp unix unix-dgram.
const char* kClient = R"(import socket, sys, errno
kind, addr = sys.argv[1], sys.argv[2]
family = socket.AF_INET if kind in ("tcp", "udp") else socket.AF_UNIX
stream = socket.SOCK_STREAM if kind in ("tcp", "unix") else socket.SOCK_DGRAM
target = ("127.0.0.1", int(addr)) if family == socket.AF_INET else addr.replace("@", "\0", 1)
try:
    s = socket.socket(family, stream)
    s.settimeout(2)
    s.connect(target)
    s.send(b"escaped")
    print(kind, addr, "reached", flush=True)
except OSError as e:
    print(kind, addr, "refused", errno.errorcode.get(e.errno, e.errno), flush=True)
)";

class Listener {
 public:
  Listener(int family, int type) : type_(type) {
    fd_ = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    BOOST_TEST_REQUIRE(fd_ >= 0);
  }
  ~Listener() {
    if (fd_ >= 0) close(fd_);
    if (!path_.empty()) unlink(path_.c_str());
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // 127.0.0.1 on a port the kernel picks; returns the port.
  std::string bind_loopback() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_TEST_REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    listen_if_stream();
    return std::to_string(ntohs(a.sin_port));
  }

  // A socket file anyone may connect to (so only the sandbox can be what refuses), or an
  // abstract name when `name` starts with '@'. Returns the address for the client.
  std::string bind_unix(const std::string& name) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, name.data(), name.size());
    if (name[0] == '@')
      a.sun_path[0] = '\0';
    else
      path_ = name;
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    BOOST_TEST_REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&a), len) == 0, std::strerror(errno));
    if (!path_.empty()) chmod(path_.c_str(), 0777);
    listen_if_stream();
    return name;
  }

  // Whether anything arrived: a queued connection or a datagram. Consumes it.
  bool received_something() {
    if (type_ == SOCK_STREAM) {
      int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c >= 0) close(c);
      return c >= 0;
    }
    char buf[64];
    return recv(fd_, buf, sizeof buf, MSG_DONTWAIT) >= 0;
  }

 private:
  void listen_if_stream() {
    if (type_ == SOCK_STREAM) BOOST_TEST_REQUIRE(listen(fd_, 16) == 0);
  }
  int fd_ = -1;
  int type_;
  std::string path_;
};

struct Target {
  std::string kind, address;
  Listener* listener;
};

// Runs the client inside the sandbox against every target, checks on the host that no
// listener got anything, then runs it on the host to prove each listener is reachable.
void expect_unreachable(const Sandbox& box, const std::vector<Target>& targets,
                        const std::vector<std::string>& options = {}) {
  const std::string client = box.base() + "/client.py";
  box.write_file(client, kClient);
  std::string script;
  for (const auto& t : targets)
    script += "/usr/bin/python3 " + client + " " + t.kind + " '" + t.address + "'\n";
  auto r = box.sh(script, options);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  for (const auto& t : targets) {
    // A UDP send "succeeds" into the sandbox's own empty loopback; only the host can tell.
    if (t.kind != "udp")
      BOOST_TEST(r.out.find(t.kind + " " + t.address + " refused") != std::string::npos,
                 t.address << "\n"
                           << r.describe());
    BOOST_TEST(!t.listener->received_something(), t.kind << " " << t.address << " received data");
  }
  for (const auto& t : targets) {
    box.host_command({"/usr/bin/python3", client, t.kind, t.address});
    BOOST_TEST(t.listener->received_something(),
               "control: host client did not reach " << t.address);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_network_escape)

BOOST_DATA_TEST_CASE(host_loopback_and_abstract_sockets_are_unreachable, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string token = unique_token();
  Listener tcp(AF_INET, SOCK_STREAM), udp(AF_INET, SOCK_DGRAM);
  Listener abstract(AF_UNIX, SOCK_STREAM), abstract_dgram(AF_UNIX, SOCK_DGRAM);
  expect_unreachable(
      box, {{"tcp", tcp.bind_loopback(), &tcp},
            {"udp", udp.bind_loopback(), &udp},
            {"unix", abstract.bind_unix("@zpolicy-kt-" + token), &abstract},
            {"unix-dgram", abstract_dgram.bind_unix("@zpolicy-kt-d" + token), &abstract_dgram}});
}

// `network: loopback` is the sandbox's own loopback: it works inside, and the host's
// loopback listeners stay out of reach.
BOOST_DATA_TEST_CASE(loopback_means_the_sandboxs_own_loopback, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy("loopback.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  write: ["${WORKSPACE}"]
network: loopback
)");
  auto inside = box.sh(
      "/usr/bin/python3 -c 'import socket\n"
      "srv = socket.socket(); srv.bind((\"127.0.0.1\", 0)); srv.listen(1)\n"
      "c = socket.create_connection(srv.getsockname()); a, _ = srv.accept()\n"
      "c.send(b\"ping\"); print(\"inside loopback:\", a.recv(4).decode())'",
      {"--policy", policy});
  BOOST_TEST_REQUIRE(inside.completed(), inside.describe());
  BOOST_TEST(inside.out.find("inside loopback: ping") != std::string::npos, inside.describe());

  const std::string token = unique_token();
  Listener tcp(AF_INET, SOCK_STREAM), abstract(AF_UNIX, SOCK_STREAM);
  expect_unreachable(box,
                     {{"tcp", tcp.bind_loopback(), &tcp},
                      {"unix", abstract.bind_unix("@zpolicy-kt-" + token), &abstract}},
                     {"--policy", policy});
}

// read-only never has a network, whatever the policy says for the wider modes.
BOOST_DATA_TEST_CASE(read_only_mode_has_no_network_even_if_the_policy_has, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy("full.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  write: ["${WORKSPACE}"]
network: full
)");
  Listener tcp(AF_INET, SOCK_STREAM);
  expect_unreachable(box, {{"tcp", tcp.bind_loopback(), &tcp}},
                     {"--policy", policy, "--mode", "read-only"});
}

BOOST_AUTO_TEST_SUITE_END()

// Host unix socket files are reachable through the read-only filesystem whatever the
// network namespace; only the seccomp filter (no AF_UNIX socket() under `network: none`)
// stops them.
BOOST_AUTO_TEST_SUITE(kernel_seccomp_escapes)

BOOST_DATA_TEST_CASE(host_unix_socket_files_are_unreachable, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  Listener in_ws(AF_UNIX, SOCK_STREAM), outside(AF_UNIX, SOCK_STREAM), dgram(AF_UNIX, SOCK_DGRAM);
  expect_unreachable(box, {{"unix", in_ws.bind_unix(box.ws("host.sock")), &in_ws},
                           {"unix", outside.bind_unix(box.base() + "/outside.sock"), &outside},
                           {"unix-dgram", dgram.bind_unix(box.base() + "/dgram.sock"), &dgram}});
}

// The kernel reads socket()'s domain as 32 bits: AF_UNIX with bit 32 set is AF_UNIX to
// the kernel and must be refused like it. Raw syscall (x86_64 number 41): libc would
// truncate the argument itself.
BOOST_DATA_TEST_CASE(a_high_bit_socket_domain_does_not_reach_host_sockets, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  Listener listener(AF_UNIX, SOCK_STREAM);
  const std::string address = listener.bind_unix(box.ws("host.sock"));
  const std::string program = box.base() + "/high-bit.py";
  box.write_file(program, R"(import ctypes, socket, sys, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
fd = libc.syscall(ctypes.c_long(41), ctypes.c_long(socket.AF_UNIX | (1 << 32)),
                  ctypes.c_long(socket.SOCK_STREAM), ctypes.c_long(0))
if fd < 0:
    print("socket refused", errno.errorcode[ctypes.get_errno()], flush=True)
else:
    s = socket.socket(fileno=fd)
    s.connect(sys.argv[1])
    s.send(b"escaped")
    print("socket reached", flush=True)
)");
  auto r = box.sh("/usr/bin/python3 " + program + " " + address);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("socket refused EPERM") != std::string::npos, r.describe());
  BOOST_TEST(!listener.received_something());
  auto control = box.host_command({"/usr/bin/python3", program, address});
  BOOST_TEST(control.out.find("socket reached") != std::string::npos, control.describe());
  BOOST_TEST(listener.received_something());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
