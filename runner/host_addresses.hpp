#pragma once

#include <optional>
#include <string>

#include "ir/host_addresses.hpp"

namespace zpolicy::runner {

// The addresses of every interface of this process's network namespace as it is now,
// with their broadcast addresses (getifaddrs: one netlink dump). The proxy reads them for
// each connection: addresses come and go while a run lasts (DHCP, SLAAC's temporary
// addresses, a VPN brought up), and a dump costs far less than the name lookup and the
// connection it guards. nullopt, and `why`, when they cannot be read: the proxy refuses.
std::optional<ir::HostAddresses> read_host_addresses(std::string& why);

// Whether the connected socket `fd` is a connection from this host to itself: its local
// and peer addresses are one (an address of the host that the interface list did not
// show, a `local` route, or one added between the list and the connect). True when either
// end cannot be read.
bool connected_to_itself(int fd);

}  // namespace zpolicy::runner
