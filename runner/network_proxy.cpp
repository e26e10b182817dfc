#include "runner/network_proxy.hpp"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include "compiler/network/admission.hpp"
#include "runner/route_lookup.hpp"

namespace zpolicy::runner {

struct NetworkProxy::State {
  std::vector<ir::Located<ir::Destination>> allow;
  PinnedNames pinned;
  mutable std::mutex mu;
  std::set<ProxyRefusal> refused;  // at most kMaxRefusalsKept
  size_t refusals_omitted = 0;      // refused connections to destinations beyond those
  std::vector<int> listeners;
  std::vector<std::thread> acceptors;
};

namespace {

constexpr size_t kMaxHead = 16 * 1024;
// The command chooses how many destinations it asks for: what is kept of its refusals (in
// memory, on stderr, in the status file) must not grow with them (red team R8-S4).
constexpr size_t kMaxRefusalsKept = 256;
constexpr size_t kMaxHostName = 253;  // RFC 1035's longest name, dots included

bool send_all(int fd, const char* p, size_t n) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Moves both ways until both directions are closed. splice() through a pipe per
// direction: the bytes stay in the kernel (no copy to and from this process), which is
// what keeps one connection through the proxy near a direct one (docs/benchmarks.md).
void relay(int a, int b) {
  // splice() into a socket whose peer is gone raises SIGPIPE (it takes no MSG_NOSIGNAL),
  // which would end the runner: blocked in this connection's thread, and dropped with it.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  struct Direction {
    int from, to;
    int pipe[2] = {-1, -1};
    bool open = true;
  } dirs[2] = {{a, b}, {b, a}};
  bool ok = true;
  for (auto& d : dirs) {
    ok = ok && pipe2(d.pipe, O_CLOEXEC | O_NONBLOCK) == 0;
    // A larger pipe moves more per call; the default (64 KiB) still works.
    if (ok) fcntl(d.pipe[1], F_SETPIPE_SZ, 1 << 20);
  }
  while (ok && (dirs[0].open || dirs[1].open)) {
    pollfd fds[2] = {{dirs[0].open ? a : -1, POLLIN, 0}, {dirs[1].open ? b : -1, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      Direction& d = dirs[i];
      if (!fds[i].revents) continue;
      ssize_t n = splice(d.from, nullptr, d.pipe[1], nullptr, 1 << 20,
                         SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      const bool ended = n <= 0;  // end of stream, or an error reading `from`
      // Everything taken from `from` goes to `to` before the next read: the pipe's
      // read end is non-blocking, so wait for `to` when it is full.
      while (n > 0) {
        const ssize_t m = splice(d.pipe[0], nullptr, d.to, nullptr, static_cast<size_t>(n),
                                 SPLICE_F_MOVE);
        if (m < 0 && errno == EINTR) continue;
        if (m <= 0) break;
        n -= m;
      }
      if (ended || n != 0) {  // or an error writing `to`
        shutdown(d.to, SHUT_WR);
        d.open = false;
      }
    }
  }
  for (auto& d : dirs)
    for (int fd : d.pipe)
      if (fd >= 0) close(fd);
}

// A relay passes on each write as it comes: holding small ones back (Nagle) would add a
// round trip to request/answer protocols.
void no_delay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int connect_to(const ir::IpAddress& address, uint16_t port) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (address.v6) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(port);
    std::memcpy(&s6->sin6_addr, address.bytes.data(), 16);
    len = sizeof *s6;
  } else {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    s4->sin_family = AF_INET;
    s4->sin_port = htons(port);
    std::memcpy(&s4->sin_addr, address.bytes.data(), 4);
    len = sizeof *s4;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  no_delay(fd);
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::vector<ir::IpAddress> resolve(const NetworkProxy::State& s, const std::string& host) {
  std::string key = host;
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (key.ends_with('.')) key.pop_back();
  if (auto it = s.pinned.find(key); it != s.pinned.end()) return it->second;
  std::vector<ir::IpAddress> out;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return out;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    ir::IpAddress a;
    if (ai->ai_family == AF_INET) {
      std::memcpy(a.bytes.data(), &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, 4);
    } else if (ai->ai_family == AF_INET6) {
      a.v6 = true;
      std::memcpy(a.bytes.data(), &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr, 16);
    } else {
      continue;
    }
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  freeaddrinfo(res);
  return out;
}

void respond(int fd, const char* status, const std::string& body, const char* refusal = nullptr) {
  std::string r = std::string("HTTP/1.1 ") + status + "\r\n";
  if (refusal) r += std::string("X-Zpolicy-Refusal: ") + refusal + "\r\n";
  r += "Content-Type: text/plain\r\nContent-Length: " + std::to_string(body.size() + 1) +
       "\r\nConnection: close\r\n\r\n" + body + "\n";
  send_all(fd, r.data(), r.size());
}

// "host:port" or "[v6]:port" → (host, port); port 0 when missing or invalid.
std::pair<std::string, uint16_t> split_authority(std::string_view a, uint16_t default_port) {
  std::string_view host = a, port;
  if (a.starts_with('[')) {
    const size_t close = a.find(']');
    if (close == std::string_view::npos) return {"", 0};
    host = a.substr(0, close + 1);
    if (close + 1 < a.size()) {
      if (a[close + 1] != ':') return {"", 0};
      port = a.substr(close + 2);
    }
  } else if (const size_t colon = a.rfind(':'); colon != std::string_view::npos) {
    host = a.substr(0, colon);
    port = a.substr(colon + 1);
  }
  if (port.empty()) return {std::string(host), default_port};
  unsigned long p = 0;
  for (char c : port) {
    if (c < '0' || c > '9' || (p = p * 10 + static_cast<unsigned long>(c - '0')) > 65535)
      return {"", 0};
  }
  return {std::string(host), static_cast<uint16_t>(p)};
}

// Whether every line of `head` (without its final empty line) ends with CRLF and holds
// no other CR, LF or NUL, and no header continues onto a following line (obs-fold).
bool plain_head(std::string_view head) {
  for (size_t i = 0; i < head.size(); ++i) {
    const char c = head[i];
    if (c == '\0') return false;
    if (c == '\r' && (i + 1 >= head.size() || head[i + 1] != '\n')) return false;
    if (c == '\n' && (i == 0 || head[i - 1] != '\r')) return false;
    if (c == '\n' && i + 1 < head.size() && (head[i + 1] == ' ' || head[i + 1] == '\t'))
      return false;
  }
  return true;
}

// The request in origin form for the server (RFC 9112 3.2.2, 9110 7.2): the Host is the
// admitted authority, whatever Host the client sent, and the connection carries this one
// request (`Connection: close`): a server must not act on a later request on it, which
// could name another Host on the admitted address. The proxy's own headers and the
// client's connection options stay here. Empty when the head gives both Content-Length and
// Transfer-Encoding (a server and this proxy could disagree where the request ends).
std::string origin_form(const std::string& head, size_t line_end, size_t end,
                        const std::string& method, const std::string& path,
                        const std::string& version, const std::string& authority) {
  std::string out = method + " " + path + " " + version + "\r\nHost: " + authority + "\r\n";
  bool length = false, chunked = false;
  size_t pos = line_end + 2;
  while (pos < end) {
    const size_t next = head.find("\r\n", pos);
    const std::string h = head.substr(pos, next - pos);
    std::string name = h.substr(0, h.find(':'));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    length |= name == "content-length";
    chunked |= name == "transfer-encoding";
    if (name != "host" && name != "connection" && name != "keep-alive" &&
        name != "proxy-connection" && name != "proxy-authorization" && name != "upgrade")
      out += h + "\r\n";
    pos = next + 2;
  }
  if (length && chunked) return "";
  return out + "Connection: close\r\n\r\n";
}

// Records the refusal (bounded, R8-S4), answers 403 with its reason and closes `client`.
void refuse(NetworkProxy::State& s, int client, const std::string& host, uint16_t port,
            const compiler::Admission& a) {
  {
    std::lock_guard<std::mutex> lock(s.mu);
    ProxyRefusal r{host, port, compiler::to_string(*a.refusal), a.reason};
    if (s.refused.size() < kMaxRefusalsKept || s.refused.contains(r))
      s.refused.insert(std::move(r));
    else
      ++s.refusals_omitted;
  }
  respond(client, "403 Forbidden", "zpolicy: refused " + a.reason, compiler::to_string(*a.refusal));
  close(client);
}

void handle_client(std::shared_ptr<NetworkProxy::State> s, int client) {
  std::string head;
  char buf[4096];
  size_t end = std::string::npos;
  while ((end = head.find("\r\n\r\n")) == std::string::npos && head.size() < kMaxHead) {
    ssize_t r = recv(client, buf, sizeof buf, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      close(client);
      return;
    }
    head.append(buf, static_cast<size_t>(r));
  }
  if (end == std::string::npos) {
    respond(client, "431 Request Header Fields Too Large", "zpolicy: request head too large");
    close(client);
    return;
  }
  const std::string rest = head.substr(end + 4);
  // A byte a server may read as the end of a line or of the head, where this parser sees
  // none, would let a header (a second Host) pass unseen (red team R6-N2).
  if (!plain_head(std::string_view(head).substr(0, end))) {
    respond(client, "400 Bad Request", "zpolicy: malformed request head");
    close(client);
    return;
  }
  const size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1) {
    respond(client, "400 Bad Request", "zpolicy: malformed request line");
    close(client);
    return;
  }
  const std::string method = line.substr(0, sp1);
  const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string version = line.substr(sp2 + 1);
  const bool is_connect = method == "CONNECT";
  std::string authority, path = "/";
  if (is_connect) {
    authority = target;
  } else if (target.rfind("http://", 0) == 0) {
    const size_t slash = target.find('/', 7);
    authority = target.substr(7, slash == std::string::npos ? std::string::npos : slash - 7);
    if (slash != std::string::npos) path = target.substr(slash);
  } else {
    respond(client, "400 Bad Request",
            "zpolicy: the proxy takes CONNECT host:port or an absolute http:// request");
    close(client);
    return;
  }
  auto [host, port] = split_authority(authority, is_connect ? 0 : 80);
  if (host.empty() || host.size() > kMaxHostName || port == 0 ||
      authority.find('@') != std::string::npos) {
    respond(client, "400 Bad Request", "zpolicy: malformed destination '" + authority + "'");
    close(client);
    return;
  }
  const std::string origin_head =
      is_connect ? std::string() : origin_form(head, line_end, end, method, path, version, authority);
  if (!is_connect && origin_head.empty()) {
    respond(client, "400 Bad Request", "zpolicy: a request head that names its length twice");
    close(client);
    return;
  }
  const bool literal = compiler::host_literal(host).has_value();
  const auto addresses = literal ? std::vector<ir::IpAddress>{} : [&] {
    // Resolve only names the list names: an unlisted name never reaches a resolver.
    auto first = compiler::match_destination(s->allow, host, port);
    return first.admitted ? resolve(*s, host) : std::vector<ir::IpAddress>{};
  }();
  // The kernel is asked for each address and each connection: routes and addresses come
  // and go while a run lasts (DHCP, SLAAC's temporary addresses, a VPN brought up).
  // Its socket is closed once the connection is judged, not held while it is relayed.
  std::optional<RouteLookup> routes(std::in_place);
  auto a = compiler::admit(s->allow, host, port, addresses, [&](const ir::IpAddress& to) {
    return routes->route({to, port});
  });
  const bool forward = a.admitted && a.entry->value.kind == ir::DestinationKind::Localhost;
  if (!a.admitted) {
    refuse(*s, client, host, port, a);
    return;
  }
  const int upstream = connect_to(*a.address, port);
  if (upstream < 0) {
    respond(client, "502 Bad Gateway",
            "zpolicy: cannot connect to " + a.address->str() + ":" + std::to_string(port) + ": " +
                std::strerror(errno));
    close(client);
    return;
  }
  // The lookup and the connect are two moments, and a policy rule may select on the source
  // address or port, which only the connect chose: the connection as made is asked again,
  // and one that reaches this host is closed before a byte is sent.
  std::string why_local;
  const bool reaches_host = !forward && connection_reaches_host(upstream, *routes, why_local);
  routes.reset();
  if (reaches_host) {
    close(upstream);
    a.admitted = false;
    a.refusal = compiler::AdmissionRefusal::AddressRefused;
    a.reason = host + ":" + std::to_string(port) + " resolves to " + a.address->str() +
               ", which reaches this host (the connection made: " + why_local +
               "; only localhost:PORT entries reach the host's own services)";
    refuse(*s, client, host, port, a);
    return;
  }
  bool ok = true;
  if (is_connect) {
    const std::string established = version + " 200 Connection established\r\n\r\n";
    ok = send_all(client, established.data(), established.size()) &&
         send_all(upstream, rest.data(), rest.size());
  } else {
    ok = send_all(upstream, origin_head.data(), origin_head.size()) &&
         send_all(upstream, rest.data(), rest.size());
  }
  if (ok) relay(client, upstream);
  close(upstream);
  close(client);
}

void handle_forward(int client, uint16_t port) {
  const int upstream = connect_to(*ir::IpAddress::parse("127.0.0.1"), port);
  if (upstream >= 0) {
    relay(client, upstream);
    close(upstream);
  }
  close(client);
}

// Connections served at once on one listener. Each holds a thread; a sandbox that opened
// connections without end made the runner fail to create threads, and the exception ended
// the runner (red team R6-N3). Beyond this a connection is closed unanswered.
constexpr int kMaxConnections = 256;

template <class Handle>
void accept_loop(int listener, Handle handle) {
  auto live = std::make_shared<std::atomic<int>>(0);
  while (true) {
    int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down
    }
    if (live->fetch_add(1) >= kMaxConnections) {
      live->fetch_sub(1);
      close(c);
      continue;
    }
    no_delay(c);
    try {
      std::thread([handle, c, live] {
        handle(c);
        live->fetch_sub(1);
      }).detach();
    } catch (const std::system_error&) {
      live->fetch_sub(1);
      close(c);
    }
  }
}

// A listener's thread, which takes no signal, and neither do the connections' threads it
// starts (a new thread inherits its creator's mask): the runner's handlers and held signals
// (runner/supervise.cpp) stay the main thread's alone. Started under the caller's mask inside
// supervise(), the listeners lived past it, and a SIGTERM after supervise() had put the
// default action back went to one of them and ended zpolicy there: the status file empty,
// copied output lost (red team A28D-2).
std::thread listener_thread(std::function<void()> serve) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  std::thread t;
  try {
    t = std::thread(std::move(serve));
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return t;
}

}  // namespace

NetworkProxy::NetworkProxy(std::vector<ir::Located<ir::Destination>> allow, PinnedNames pinned)
    : state_(std::make_shared<State>()) {
  state_->allow = std::move(allow);
  state_->pinned = std::move(pinned);
}

NetworkProxy::~NetworkProxy() {
  for (int fd : state_->listeners) shutdown(fd, SHUT_RDWR);
  for (auto& t : state_->acceptors) t.join();
  for (int fd : state_->listeners) close(fd);
}

void NetworkProxy::serve_proxy(int listener) {
  state_->listeners.push_back(listener);
  auto s = state_;
  state_->acceptors.push_back(listener_thread(
      [s, listener] { accept_loop(listener, [s](int c) { handle_client(s, c); }); }));
}

void NetworkProxy::serve_forward(int listener, uint16_t port) {
  state_->listeners.push_back(listener);
  state_->acceptors.push_back(listener_thread(
      [listener, port] { accept_loop(listener, [port](int c) { handle_forward(c, port); }); }));
}

std::vector<ProxyRefusal> NetworkProxy::refusals() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return {state_->refused.begin(), state_->refused.end()};
}

size_t NetworkProxy::refusals_omitted() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->refusals_omitted;
}

int listen_in_sandbox(pid_t pid, uint16_t port, std::string& why) {
  const std::string ns = "/proc/" + std::to_string(pid) + "/ns/";
  const int net_fd = open((ns + "net").c_str(), O_RDONLY | O_CLOEXEC);
  // The user namespace that owns the network namespace, not the one `pid` is in by now:
  // bwrap moves into a nested one (--disable-userns) that holds no capability over it.
  const int user_fd = net_fd >= 0 ? ioctl(net_fd, NS_GET_USERNS) : -1;
  struct stat ours {}, theirs {};
  const bool same_user = user_fd >= 0 && stat("/proc/self/ns/user", &ours) == 0 &&
                         fstat(user_fd, &theirs) == 0 && ours.st_ino == theirs.st_ino &&
                         ours.st_dev == theirs.st_dev;
  int pair[2];
  if (user_fd < 0 || net_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    why = std::string("cannot reach the sandbox's namespaces: ") + std::strerror(errno);
    if (user_fd >= 0) close(user_fd);
    if (net_fd >= 0) close(net_fd);
    return -1;
  }
  const pid_t child = fork();
  if (child == 0) {
    // Only system calls from here: this process may have threads.
    int err = 0;
    int fd = -1;
    if (!same_user && setns(user_fd, CLONE_NEWUSER) != 0) err = errno;
    if (!err && setns(net_fd, CLONE_NEWNET) != 0) err = errno;
    if (!err && (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) err = errno;
    const int one = 1;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!err && setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one) != 0) err = errno;
    if (!err && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) err = errno;
    if (!err && bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) err = errno;
    if (!err && listen(fd, 128) != 0) err = errno;
    char data[sizeof(int)];
    std::memcpy(data, &err, sizeof err);
    iovec iov{data, sizeof data};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (!err) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    _exit(sendmsg(pair[1], &msg, 0) < 0 ? 1 : 0);
  }
  close(pair[1]);
  close(user_fd);
  close(net_fd);
  int err = 0, fd = -1;
  char data[sizeof(int)];
  iovec iov{data, sizeof data};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t got = child > 0 ? recvmsg(pair[0], &msg, MSG_CMSG_CLOEXEC) : -1;
  close(pair[0]);
  if (child > 0) waitpid(child, nullptr, 0);
  if (got != static_cast<ssize_t>(sizeof data)) {
    why = "the helper that joins the sandbox's network namespace failed";
    return -1;
  }
  std::memcpy(&err, data, sizeof err);
  if (cmsghdr* c = CMSG_FIRSTHDR(&msg); !err && c && c->cmsg_type == SCM_RIGHTS)
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  if (err || fd < 0) {
    why = std::string("cannot listen on the sandbox's loopback: ") + std::strerror(err ? err : EBADF);
    return -1;
  }
  return fd;
}

}  // namespace zpolicy::runner
