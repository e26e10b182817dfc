#pragma once

#include <set>

#include "ir/ip_address.hpp"

namespace zpolicy::ir {

// The addresses at which a host reaches itself: every address of every interface of the
// network namespace the proxy connects from, and their broadcast addresses
// (runner/host_addresses.hpp reads them). A connection to one of them reaches the host's
// own services, a server bound to 0.0.0.0 or [::] included (red team A13B-3).
struct HostAddresses {
  std::set<IpAddress> own;
};

// Whether connecting to `a` reaches the host itself: `a` is 0.0.0.0 or :: (which the
// kernel connects to the local host), one of `host.own`, or an IPv6 form that carries one
// of them (carried_ipv4: mapped, SIIT, NAT64, 6to4, Teredo, ISATAP).
bool reaches_host(const IpAddress& a, const HostAddresses& host);

}  // namespace zpolicy::ir
