#pragma once

#include <functional>
#include <optional>
#include <string>

#include "ir/ip_address.hpp"

namespace zpolicy::ir {

// How the network namespace the proxy connects from delivers a connection to an address:
// the kind of the route its kernel picks (runner/route_lookup.hpp asks it). Asking the
// kernel, not listing the interfaces' addresses, covers every way an address is the
// host's: an interface's address, a `local` route's whole prefix (an address with a prefix
// on `lo`, AnyIP), a broadcast or anycast address (red team A13B-3, A14B-9).
enum class Delivery {
  Elsewhere,  // a unicast route: another host
  ThisHost,   // a local, broadcast, anycast or multicast route: delivered on this host
  NoRoute,    // none (unreachable, prohibit, blackhole, no route at all): a connect fails
  Unknown,    // the answer could not be read, or names a route of another kind
};

struct RouteAnswer {
  Delivery delivery = Delivery::Unknown;
  std::string what;  // the route ("a local route"), or why it is unknown
};

// The kernel's answer for a connection to an address (on the port being admitted).
using RouteOf = std::function<RouteAnswer(const IpAddress&)>;

// Whether connecting to `a` may reach the host itself: the answer that says so (ThisHost),
// or that leaves it open (Unknown), for `a` or for an IPv4 address `a` carries
// (carried_ipv4: a translator or tunnel of the host sends there); 0.0.0.0 and :: (the
// kernel connects them to the local host) without asking. nullopt when none does.
std::optional<RouteAnswer> reaches_host(const IpAddress& a, const RouteOf& route_of);

}  // namespace zpolicy::ir
