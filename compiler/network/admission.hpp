#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/destination.hpp"
#include "ir/host_route.hpp"
#include "ir/ip_address.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// Why the proxy refused a destination (docs/network.md "Refusals"). Stable words: they
// appear on stderr and in the run status.
enum class AdmissionRefusal {
  NotListed,       // no entry names this host
  PortNotListed,   // an entry names the host, on other ports only
  NotResolved,     // the name has no address
  AddressRefused,  // it resolved (or was written) to a non-public address, or the host's own
};
const char* to_string(AdmissionRefusal r);  // "not-listed", "port-not-listed", ...

struct Admission {
  bool admitted = false;
  std::optional<AdmissionRefusal> refusal;  // when refused
  std::string reason;              // one line: which entry, or why none
  // When admitted: the entry that admits it and the address to connect to, the one
  // that was checked.
  std::optional<ir::Located<ir::Destination>> entry;
  std::optional<ir::IpAddress> address;
};

// The first step, before any name is resolved: does an entry name `host` on `port`?
// `host` is what the client asked for: a name (any case, one trailing dot allowed), an
// IPv4 literal, or an IPv6 literal with or without brackets. Returns the entry, or the
// refusal (NotListed, PortNotListed).
Admission match_destination(const std::vector<ir::Located<ir::Destination>>& allow,
                            std::string_view host, uint16_t port);

// The whole decision, a pure function of the allow list and of the kernel's routes:
// `addresses` are what the proxy's resolver returned for a name (ignored for literals and
// localhost, which carry their own); `route_of` answers how the network namespace the
// proxy connects from delivers a connection to an address. Admitted only when an entry
// matches, and then every address is public and none reaches this host or has a route
// that cannot be read (ir::reaches_host; one refused address refuses the lot: a name that
// answers with a private address is being rebound), except for a `localhost:PORT` entry,
// which connects to 127.0.0.1. The admitted address is the first one returned.
Admission admit(const std::vector<ir::Located<ir::Destination>>& allow, std::string_view host,
                uint16_t port, const std::vector<ir::IpAddress>& addresses,
                const ir::RouteOf& route_of);

// Whether `host` is an address literal (what admit() resolves to itself).
std::optional<ir::IpAddress> host_literal(std::string_view host);

}  // namespace zpolicy::compiler
