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
const char* kEscapeClient = R"(import socket, sys, errno
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
  box.write_file(client, kEscapeClient);
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
  // Host socket files too: the filter of a read-only run is `none`'s, not the policy's.
  Listener tcp(AF_INET, SOCK_STREAM), file(AF_UNIX, SOCK_STREAM), dgram(AF_UNIX, SOCK_DGRAM);
  expect_unreachable(box,
                     {{"tcp", tcp.bind_loopback(), &tcp},
                      {"unix", file.bind_unix(box.base() + "/host.sock"), &file},
                      {"unix-dgram", dgram.bind_unix(box.base() + "/dgram.sock"), &dgram}},
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


// Invariant 4 through the sockets the sandbox may still make: socketpair(). A datagram
// end takes any address per call, so every datagram type is refused (SOCK_DGRAM,
// SOCK_RAW, with flags, with high bits the kernel drops); a connected stream or seqpacket
// end refuses a new peer even once its own peer is gone. Checked on the host: listeners
// on socket files (in the workspace and outside it) and abstract names, stream and
// datagram, receive nothing, under none, loopback and read-only, as root and nobody.
namespace {

// argv: ADDRESS... ("@name" for an abstract name). One line per attempt and address:
// "LABEL HOW ADDRESS reached" or "... refused ERRNO". The plain socket() attempts are
// what lets the host control reach the stream listeners.
const char* kPairClient = R"(import ctypes, errno, socket, sys
AF, S = socket.AF_UNIX, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def raw_pair(kind):
    sv = (ctypes.c_int * 2)()
    if libc.syscall(ctypes.c_long(53), ctypes.c_long(AF), ctypes.c_long(kind), ctypes.c_long(0), sv) != 0:
        e = ctypes.get_errno()
        raise OSError(e, errno.errorcode.get(e, str(e)))
    return socket.socket(fileno=sv[0]), socket.socket(fileno=sv[1])
def dgram_pair(kind):
    return lambda: socket.socketpair(AF, kind)
def lone_end(kind):
    def make():
        a, b = socket.socketpair(AF, kind)
        b.close()
        return a, None
    return make
pairs = [("pair-dgram", dgram_pair(S.SOCK_DGRAM)),
         ("pair-raw", dgram_pair(S.SOCK_RAW)),
         ("pair-dgram-flags", dgram_pair(S.SOCK_DGRAM | S.SOCK_CLOEXEC | S.SOCK_NONBLOCK)),
         ("pair-dgram-highbit", lambda: raw_pair(S.SOCK_DGRAM | (1 << 32))),
         ("pair-stream-lone", lone_end(S.SOCK_STREAM)),
         ("pair-seqpacket-lone", lone_end(S.SOCK_SEQPACKET)),
         ("socket-stream", lambda: (socket.socket(AF, S.SOCK_STREAM), None)),
         ("socket-dgram", lambda: (socket.socket(AF, S.SOCK_DGRAM), None))]
for addr in sys.argv[1:]:
    target = addr.replace("@", "\0", 1)
    for label, make in pairs:
        for how in ("sendto", "connect"):
            try:
                a, _ = make()
                a.settimeout(2)
                if how == "sendto":
                    a.sendto(b"escaped", target)
                else:
                    a.connect(target)
                    a.send(b"escaped")
                print(label, how, addr, "reached", flush=True)
            except OSError as e:
                print(label, how, addr, "refused", errno.errorcode.get(e.errno, e.errno), flush=True)
)";

void expect_pairs_reach_nothing(Caller caller, const std::vector<std::string>& options,
                                const std::string& policy_yaml) {
  Sandbox box(caller);
  std::vector<std::string> opts = options;
  if (!policy_yaml.empty()) {
    opts.insert(opts.begin(), box.write_policy("policy.yaml", policy_yaml));
    opts.insert(opts.begin(), "--policy");
  }
  const std::string token = unique_token();
  Listener file_dgram(AF_UNIX, SOCK_DGRAM), file_stream(AF_UNIX, SOCK_STREAM),
      ws_dgram(AF_UNIX, SOCK_DGRAM), abstract_dgram(AF_UNIX, SOCK_DGRAM),
      abstract_stream(AF_UNIX, SOCK_STREAM);
  const std::vector<std::pair<std::string, Listener*>> targets = {
      {file_dgram.bind_unix(box.base() + "/dgram.sock"), &file_dgram},
      {file_stream.bind_unix(box.base() + "/stream.sock"), &file_stream},
      {ws_dgram.bind_unix(box.ws("dgram.sock")), &ws_dgram},
      {abstract_dgram.bind_unix("@zpolicy-kt-pd" + token), &abstract_dgram},
      {abstract_stream.bind_unix("@zpolicy-kt-ps" + token), &abstract_stream}};
  const std::string client = box.base() + "/pair-client.py";
  box.write_file(client, kPairClient);
  std::string command = "/usr/bin/python3 " + client;
  for (const auto& [address, listener] : targets) command += " '" + address + "'";
  auto r = box.sh(command, opts);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find(" reached") == std::string::npos, r.describe());
  // Every datagram pair is refused at its creation, by the filter (EPERM).
  for (const char* label : {"pair-dgram ", "pair-raw ", "pair-dgram-flags ", "pair-dgram-highbit "})
    BOOST_TEST(r.out.find(std::string(label) + "sendto " + targets[0].first + " refused EPERM") !=
                   std::string::npos,
               label << r.describe());
  for (const auto& [address, listener] : targets)
    BOOST_TEST(!listener->received_something(), address << " received data");
  // Control: the same client on the host reaches every listener.
  auto control = box.host_command({"/usr/bin/python3", client, targets[0].first,
                                   targets[1].first, targets[2].first, targets[3].first,
                                   targets[4].first});
  for (const auto& [address, listener] : targets)
    BOOST_TEST(listener->received_something(), "control: host client did not reach " << address);
}

const char* kLoopbackPolicy = R"(zpolicy: 1
mode: workspace-write
filesystem:
  write: ["${WORKSPACE}"]
network: loopback
)";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_socketpair_escapes)

BOOST_DATA_TEST_CASE(socketpairs_reach_no_host_socket_under_none, bdata::make(kCallers), caller) {
  expect_pairs_reach_nothing(caller, {}, "");
}

BOOST_DATA_TEST_CASE(socketpairs_reach_no_host_socket_under_loopback, bdata::make(kCallers),
                     caller) {
  expect_pairs_reach_nothing(caller, {}, kLoopbackPolicy);
}

BOOST_DATA_TEST_CASE(socketpairs_reach_no_host_socket_in_read_only_mode, bdata::make(kCallers),
                     caller) {
  expect_pairs_reach_nothing(caller, {"--mode", "read-only"}, "");
}

// What stays allowed still works: stream and seqpacket pairs carry data and file
// descriptors, and Python multiprocessing with fork (Pipe, Queue, Pool) runs.
BOOST_DATA_TEST_CASE(stream_and_seqpacket_pairs_and_multiprocessing_work, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string program = box.base() + "/pairs.py";
  box.write_file(program, R"(import multiprocessing as mp, os, socket
for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET, socket.SOCK_STREAM | socket.SOCK_CLOEXEC):
    a, b = socket.socketpair(socket.AF_UNIX, kind)
    r, w = os.pipe()
    socket.send_fds(a, [b"fd"], [w])
    msg, fds, _, _ = socket.recv_fds(b, 16, 1)
    os.write(fds[0], b"ok")
    print("pair", int(kind), msg.decode(), os.read(r, 2).decode(), flush=True)
def square(x):
    return x * x
def child(conn, q):
    conn.send("pipe-ok"); q.put("queue-ok")
if __name__ == "__main__":
    mp.set_start_method("fork")
    parent, kid = mp.Pipe(duplex=True)
    q = mp.Queue()
    p = mp.Process(target=child, args=(kid, q)); p.start()
    print(parent.recv(), q.get(timeout=10), flush=True); p.join()
    with mp.Pool(2) as pool:
        print("pool", sum(pool.map(square, range(10))), flush=True)
)");
  for (const std::vector<std::string>& opts :
       {std::vector<std::string>{}, {"--mode", "read-only"},
        {"--policy", box.write_policy("loopback.yaml", kLoopbackPolicy)}}) {
    auto r = box.sh("/usr/bin/python3 " + program, opts);
    BOOST_TEST_REQUIRE(r.completed(), r.describe());
    for (const char* line : {"pair 1 fd ok\n", "pair 5 fd ok\n", "pair 524289 fd ok\n",
                             "pipe-ok queue-ok\n", "pool 285\n"})
      BOOST_TEST(r.out.find(line) != std::string::npos, line << r.describe());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
