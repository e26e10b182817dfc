#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zpolicy::ir {

// An IPv4 or IPv6 address, as the proxy resolved it or a client wrote it.
struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 in the first four

  static std::optional<IpAddress> parse(std::string_view text);  // "192.0.2.1", "2001:db8::1"
  std::string str() const;                                      // inet_ntop's form
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
  friend auto operator<=>(const IpAddress&, const IpAddress&) = default;
};

// What an address reaches. Only Public is ever connected to for a listed name; the rest
// are the host's own services, its neighbours, the cloud's metadata service, or no one.
enum class AddressScope {
  Public,
  Loopback,      // 127/8, ::1
  Private,       // RFC 1918, 100.64/10 (shared), fc00::/7 (ULA), fec0::/10, 64:ff9b:1::/48
  LinkLocal,     // 169.254/16 (169.254.169.254, the metadata address), fe80::/10
  Multicast,     // 224/4, ff00::/8
  Unspecified,   // 0/8, ::
  Reserved,      // 240/4 and broadcast, 192.0.0/24, ::/96 (IPv4-compatible)
  Ipv4Mapped,    // ::ffff:0:0/96: a v4 address in v6 dress, refused whatever it holds
  Translated,    // NAT64 64:ff9b::/96, 6to4 2002::/16, SIIT ::ffff:0:0:0/96, Teredo
                 // 2001::/32 or an ISATAP identifier carrying a non-public IPv4 address
};
AddressScope scope_of(const IpAddress& a);
const char* to_string(AddressScope s);  // "loopback", "private", "link-local", ...

// The IPv4 addresses an IPv6 address carries, which a translator or tunnel of the host
// sends to: IPv4-mapped, IPv4-compatible (::a.b.c.d, deprecated) and SIIT's
// ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4, Teredo (server and client) and an ISATAP
// identifier under any prefix. Empty for IPv4 and for
// other IPv6 addresses.
std::vector<IpAddress> carried_ipv4(const IpAddress& a);

}  // namespace zpolicy::ir
