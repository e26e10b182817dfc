#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zpolicy::ir {

// One entry of `network: {allow: [...]}`, after validation: what the proxy may connect to.
// docs/network.md "Policy language" is the grammar.
enum class DestinationKind {
  Name,        // exactly this host: "pypi.org"
  Subdomains,  // any name strictly below `host` (not `host` itself): "*.pythonhosted.org"
  Localhost,   // the host's own loopback, reached by a plain TCP forward: "localhost:5432"
  Ipv4,        // a literal written deliberately: "ip:192.0.2.10:443"
  Ipv6,        // "ip:[2001:db8::1]:443"
};

struct Destination {
  DestinationKind kind = DestinationKind::Name;
  // Lower-case name; for Subdomains the suffix without "*."; for literals the canonical
  // text inet_ntop gives; "localhost" for Localhost.
  std::string host;
  uint16_t port = 0;

  // The spelling that parses back to this destination, one port: "pypi.org:443",
  // "*.pythonhosted.org:80", "localhost:5432", "ip:192.0.2.10:443", "ip:[2001:db8::1]:443".
  std::string str() const;

  friend bool operator==(const Destination&, const Destination&) = default;
  friend auto operator<=>(const Destination&, const Destination&) = default;
};

struct DestinationError {
  std::string reason;
};

// Parses one allow-list entry. An entry without a port stands for ports 80 and 443 (so it
// yields two destinations), except `localhost`, which needs its port. Refused with a
// reason: a scheme, a path, a query or user part, an empty or over-long label, a
// character outside [a-z0-9-_], non-ASCII (write the xn-- form), a wildcard anywhere but
// as the whole leading label, a wildcard alone, a port outside 1..65535, and a bare IP
// literal (or a name whose last label is numeric, which resolvers read as an address):
// literals must be written `ip:ADDRESS[:PORT]`, IPv6 in brackets.
std::optional<std::vector<Destination>> parse_destination(std::string_view text,
                                                          DestinationError* error);

// Whether `host` (lower-case, without a trailing dot) is a host name by the grammar above,
// without a wildcard: the only names the proxy may hand a resolver. A byte outside it (a
// NUL ends the name a resolver sees) would make the name checked and the name resolved
// differ (red team R6-N1).
bool is_host_name(std::string_view host);

}  // namespace zpolicy::ir
