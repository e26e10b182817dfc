#include "runner/host_addresses.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <bit>
#include <cerrno>
#include <cstring>

namespace zpolicy::runner {
namespace {

std::optional<ir::IpAddress> address_of(const sockaddr* sa) {
  if (!sa) return std::nullopt;
  ir::IpAddress a;
  if (sa->sa_family == AF_INET) {
    std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
    return a;
  }
  if (sa->sa_family == AF_INET6) {
    a.v6 = true;
    std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, 16);
    return a;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ir::HostAddresses> read_host_addresses(std::string& why) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    why = std::string("cannot read this host's addresses: ") + std::strerror(errno);
    return std::nullopt;
  }
  ir::HostAddresses host;
  for (const ifaddrs* i = list; i; i = i->ifa_next) {
    const auto a = address_of(i->ifa_addr);
    if (!a) continue;
    host.own.insert(*a);
    if (a->v6) continue;
    if (i->ifa_flags & IFF_BROADCAST)
      if (const auto b = address_of(i->ifa_broadaddr); b && !b->v6) host.own.insert(*b);
    // The subnet's directed broadcast, whether or not the interface announces one; a /31
    // has none (RFC 3021: its other address is the peer's).
    if (const auto mask = address_of(i->ifa_netmask); mask && !mask->v6) {
      int prefix = 0;
      for (int k = 0; k < 4; ++k) prefix += std::popcount(mask->bytes[k]);
      ir::IpAddress directed = *a;
      for (int k = 0; k < 4; ++k) directed.bytes[k] |= static_cast<uint8_t>(~mask->bytes[k]);
      if (prefix <= 30) host.own.insert(directed);
    }
  }
  freeifaddrs(list);
  return host;
}

bool connected_to_itself(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof local, peer_len = sizeof peer;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0)
    return true;
  const auto l = address_of(reinterpret_cast<const sockaddr*>(&local));
  const auto p = address_of(reinterpret_cast<const sockaddr*>(&peer));
  return !l || !p || *l == *p;
}

}  // namespace zpolicy::runner
