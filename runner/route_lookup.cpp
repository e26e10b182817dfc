#include "runner/route_lookup.hpp"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace zpolicy::runner {
namespace {

void add_attribute(std::vector<std::byte>& m, uint16_t type, const void* data, size_t size) {
  rtattr a{};
  a.rta_len = static_cast<uint16_t>(RTA_LENGTH(size));
  a.rta_type = type;
  const size_t at = m.size();
  m.resize(at + RTA_SPACE(size));
  std::memcpy(m.data() + at, &a, sizeof a);
  std::memcpy(m.data() + at + RTA_LENGTH(0), data, size);
}

void add_endpoint(std::vector<std::byte>& m, uint16_t address_type, uint16_t port_type,
                  const Endpoint& e) {
  add_attribute(m, address_type, e.address.bytes.data(), e.address.v6 ? 16 : 4);
  const uint16_t port = htons(e.port);
  add_attribute(m, port_type, &port, sizeof port);
}

std::optional<ir::IpAddress> address_of(const sockaddr_storage& ss, uint16_t& port) {
  ir::IpAddress a;
  if (ss.ss_family == AF_INET) {
    const auto& s4 = reinterpret_cast<const sockaddr_in&>(ss);
    std::memcpy(a.bytes.data(), &s4.sin_addr, 4);
    port = ntohs(s4.sin_port);
    return a;
  }
  if (ss.ss_family == AF_INET6) {
    const auto& s6 = reinterpret_cast<const sockaddr_in6&>(ss);
    a.v6 = true;
    std::memcpy(a.bytes.data(), &s6.sin6_addr, 16);
    port = ntohs(s6.sin6_port);
    return a;
  }
  return std::nullopt;
}

ir::RouteAnswer of_type(uint8_t type) {
  using ir::Delivery;
  switch (type) {
    case RTN_UNICAST:
      return {Delivery::Elsewhere, "a unicast route"};
    case RTN_LOCAL:
      return {Delivery::ThisHost, "a local route"};
    case RTN_BROADCAST:
      return {Delivery::ThisHost, "a broadcast route"};
    case RTN_ANYCAST:
      return {Delivery::ThisHost, "an anycast route"};
    case RTN_MULTICAST:
      return {Delivery::ThisHost, "a multicast route"};
    case RTN_BLACKHOLE:
      return {Delivery::NoRoute, "a blackhole route"};
    case RTN_UNREACHABLE:
      return {Delivery::NoRoute, "an unreachable route"};
    case RTN_PROHIBIT:
      return {Delivery::NoRoute, "a prohibit route"};
    default:
      return {Delivery::Unknown, "a route of type " + std::to_string(type)};
  }
}

}  // namespace

std::vector<std::byte> route_request(const Endpoint& to, const std::optional<Endpoint>& from,
                                     uint32_t seq) {
  std::vector<std::byte> m(NLMSG_SPACE(sizeof(rtmsg)));
  rtmsg r{};
  r.rtm_family = to.address.v6 ? AF_INET6 : AF_INET;
  r.rtm_dst_len = to.address.v6 ? 128 : 32;
  r.rtm_src_len = from ? r.rtm_dst_len : 0;
  std::memcpy(m.data() + NLMSG_HDRLEN, &r, sizeof r);
  add_endpoint(m, RTA_DST, RTA_DPORT, to);
  const uint8_t tcp = IPPROTO_TCP;
  add_attribute(m, RTA_IP_PROTO, &tcp, sizeof tcp);
  if (from) add_endpoint(m, RTA_SRC, RTA_SPORT, *from);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(m.size());
  h.nlmsg_type = RTM_GETROUTE;
  h.nlmsg_flags = NLM_F_REQUEST;
  h.nlmsg_seq = seq;
  std::memcpy(m.data(), &h, sizeof h);
  return m;
}

ir::RouteAnswer parse_route_answer(std::span<const std::byte> answer, uint32_t seq) {
  using ir::Delivery;
  size_t at = 0;
  while (at < answer.size() && answer.size() - at >= sizeof(nlmsghdr)) {
    nlmsghdr h;
    std::memcpy(&h, answer.data() + at, sizeof h);
    if (h.nlmsg_len < sizeof h || h.nlmsg_len > answer.size() - at)
      return {Delivery::Unknown, "a malformed answer"};
    const std::byte* body = answer.data() + at + NLMSG_HDRLEN;
    const size_t body_size = h.nlmsg_len - std::min<size_t>(h.nlmsg_len, NLMSG_HDRLEN);
    if (h.nlmsg_seq == seq && h.nlmsg_type == NLMSG_ERROR) {
      nlmsgerr e;
      if (body_size < sizeof e) return {Delivery::Unknown, "a malformed answer"};
      std::memcpy(&e, body, sizeof e);
      // Without NLM_F_ACK the kernel answers an error only for a failed lookup.
      if (e.error >= 0) return {Delivery::Unknown, "an answer that is no route"};
      const int error = -e.error;
      // The errors of a route that delivers nowhere (RTN_UNREACHABLE, RTN_PROHIBIT,
      // RTN_BLACKHOLE) or of no route at all: the connect meets the same.
      if (error == EHOSTUNREACH || error == EACCES || error == EINVAL || error == ENETUNREACH)
        return {Delivery::NoRoute, std::strerror(error)};
      return {Delivery::Unknown, std::string("the kernel answered: ") + std::strerror(error)};
    }
    if (h.nlmsg_seq == seq && h.nlmsg_type == RTM_NEWROUTE) {
      rtmsg r;
      if (body_size < sizeof r) return {Delivery::Unknown, "a malformed answer"};
      std::memcpy(&r, body, sizeof r);
      return of_type(r.rtm_type);
    }
    at += NLMSG_ALIGN(h.nlmsg_len);
  }
  return {Delivery::Unknown, "no answer to the question"};
}

RouteLookup::~RouteLookup() {
  if (fd_ >= 0) close(fd_);
}

ir::RouteAnswer RouteLookup::route(const Endpoint& to, const std::optional<Endpoint>& from) {
  auto failed = [](const char* step) {
    return ir::RouteAnswer{ir::Delivery::Unknown, std::string("cannot ask the kernel's routes (") +
                                                      step + "): " + std::strerror(errno)};
  };
  if (fd_ < 0) {
    fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd_ < 0) return failed("socket");
    // Connected to the kernel: no other sender's message is taken as its answer.
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (connect(fd_, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) != 0) {
      const auto r = failed("connect");
      close(fd_);
      fd_ = -1;
      return r;
    }
  }
  const uint32_t seq = ++seq_;
  const auto request = route_request(to, from, seq);
  ssize_t sent;
  do sent = send(fd_, request.data(), request.size(), 0);
  while (sent < 0 && errno == EINTR);
  if (sent != static_cast<ssize_t>(request.size())) return failed("send");
  // rtnetlink answers within send(): the answer is queued by now, and a missing one is an
  // Unknown answer rather than a wait.
  alignas(nlmsghdr) std::byte answer[8192];
  ssize_t got;
  do got = recv(fd_, answer, sizeof answer, MSG_DONTWAIT | MSG_TRUNC);
  while (got < 0 && errno == EINTR);
  if (got < 0) return failed("recv");
  if (static_cast<size_t>(got) > sizeof answer)
    return {ir::Delivery::Unknown, "an answer too long"};
  return parse_route_answer(std::span(answer, static_cast<size_t>(got)), seq);
}

bool connection_reaches_host(int fd, RouteLookup& routes, std::string& what) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof local, peer_len = sizeof peer;
  uint16_t local_port = 0, peer_port = 0;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) {
    what = std::string("its ends cannot be read: ") + std::strerror(errno);
    return true;
  }
  const auto l = address_of(local, local_port);
  const auto p = address_of(peer, peer_port);
  if (!l || !p || l->v6 != p->v6) {
    what = "its ends are not of one IP family";
    return true;
  }
  if (*l == *p) {
    what = "its two ends are one address";
    return true;
  }
  // The connection exists, so its route is one that delivers: anything but unicast here is
  // this host, or a route not as the connect saw it.
  const ir::RouteAnswer r = routes.route({*p, peer_port}, Endpoint{*l, local_port});
  if (r.delivery == ir::Delivery::Elsewhere) return false;
  what = r.what;
  return true;
}

}  // namespace zpolicy::runner
