#include "ir/ip_address.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace zpolicy::ir {
namespace {

AddressScope scope_v4(const uint8_t* b) {
  const uint8_t a = b[0];
  if (a == 0) return AddressScope::Unspecified;
  if (a == 127) return AddressScope::Loopback;
  if (a == 10 || (a == 172 && (b[1] & 0xf0) == 16) || (a == 192 && b[1] == 168) ||
      (a == 100 && (b[1] & 0xc0) == 64))
    return AddressScope::Private;
  if (a == 169 && b[1] == 254) return AddressScope::LinkLocal;
  if ((a & 0xf0) == 224) return AddressScope::Multicast;
  if ((a & 0xf0) == 240) return AddressScope::Reserved;  // 255.255.255.255 included
  if (a == 192 && b[1] == 0 && b[2] == 0) return AddressScope::Reserved;
  return AddressScope::Public;
}

AddressScope translated(const uint8_t* v4) {
  return scope_v4(v4) == AddressScope::Public ? AddressScope::Public
                                              : AddressScope::Translated;
}

}  // namespace

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  const std::string s(text);
  IpAddress a;
  if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) return a;
  a.v6 = true;
  if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) return a;
  return std::nullopt;
}

std::string IpAddress::str() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof buf);
  return buf;
}

AddressScope scope_of(const IpAddress& addr) {
  const uint8_t* b = addr.bytes.data();
  if (!addr.v6) return scope_v4(b);
  static constexpr uint8_t kZero[16] = {};
  if (std::memcmp(b, kZero, 15) == 0 && b[15] == 0) return AddressScope::Unspecified;
  if (std::memcmp(b, kZero, 15) == 0 && b[15] == 1) return AddressScope::Loopback;
  if (std::memcmp(b, kZero, 10) == 0 && b[10] == 0xff && b[11] == 0xff)
    return AddressScope::Ipv4Mapped;
  if (std::memcmp(b, kZero, 12) == 0) return AddressScope::Reserved;
  // Addresses that carry an IPv4 address reach whatever that address reaches.
  static constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b};
  if (std::memcmp(b, kNat64, 12) == 0) return translated(b + 12);
  if (b[0] == 0x20 && b[1] == 0x02) return translated(b + 2);  // 6to4, 2002::/16
  // RFC 8215's local-use NAT64 prefix is translated by the site's own translator, to any
  // address it routes (where the IPv4 part sits depends on the site's prefix length).
  static constexpr uint8_t kLocalNat64[6] = {0, 0x64, 0xff, 0x9b, 0, 1};
  if (std::memcmp(b, kLocalNat64, 6) == 0) return AddressScope::Private;
  if ((b[0] & 0xfe) == 0xfc) return AddressScope::Private;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressScope::LinkLocal;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressScope::Private;
  if (b[0] == 0xff) return AddressScope::Multicast;
  return AddressScope::Public;
}

const char* to_string(AddressScope s) {
  switch (s) {
    case AddressScope::Public:
      return "public";
    case AddressScope::Loopback:
      return "loopback";
    case AddressScope::Private:
      return "private";
    case AddressScope::LinkLocal:
      return "link-local";
    case AddressScope::Multicast:
      return "multicast";
    case AddressScope::Unspecified:
      return "unspecified";
    case AddressScope::Reserved:
      return "reserved";
    case AddressScope::Ipv4Mapped:
      return "IPv4-mapped";
    case AddressScope::Translated:
      return "translation of a non-public address";
  }
  return "reserved";
}

}  // namespace zpolicy::ir
