#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/host_route.hpp"
#include "ir/ip_address.hpp"

namespace zpolicy::runner {

// One end of a TCP connection.
struct Endpoint {
  ir::IpAddress address;
  uint16_t port = 0;
};

// The RTM_GETROUTE request (NETLINK_ROUTE, numbered `seq`) for a TCP connection to `to`:
// its address, protocol and port, which `ip rule` selectors (ipproto, dport) may match;
// `from` once the connection exists, whose source address and port they may match too.
// The kernel takes the uid (uidrange) from the asking thread and the mark (fwmark) as 0:
// the proxy's own connect's.
std::vector<std::byte> route_request(const Endpoint& to, const std::optional<Endpoint>& from,
                                     uint32_t seq);

// The kernel's answer to the request numbered `seq`: one datagram read from the socket.
// Unknown when it is not a well-formed route or error message for that request.
ir::RouteAnswer parse_route_answer(std::span<const std::byte> answer, uint32_t seq);

// Asks the kernel how it routes a connection: one NETLINK_ROUTE socket, made at the first
// question by the calling thread, so in the network namespace the proxy's connect is made
// from (the runner's; no thread of it changes namespace), and kept for the object's life
// (one proxied connection). A failure to ask is an Unknown answer.
class RouteLookup {
 public:
  RouteLookup() = default;
  ~RouteLookup();
  RouteLookup(const RouteLookup&) = delete;
  RouteLookup& operator=(const RouteLookup&) = delete;

  ir::RouteAnswer route(const Endpoint& to, const std::optional<Endpoint>& from = std::nullopt);

 private:
  int fd_ = -1;
  uint32_t seq_ = 0;
};

// Whether the connected TCP socket `fd` may reach this host itself, asked once it is
// connected and before a byte is sent: its two ends are one address, or the kernel's route
// for the connection as made (both addresses and ports, so that a rule selecting on the
// source the connect chose applies) is not unicast, or cannot be read. `what` says why.
bool connection_reaches_host(int fd, RouteLookup& routes, std::string& what);

}  // namespace zpolicy::runner
