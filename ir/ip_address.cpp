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
  // SIIT's IPv4-translated form (RFC 2765), ::ffff:0:a.b.c.d.
  static constexpr uint8_t kTranslatedForm[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
  if (std::memcmp(b, kTranslatedForm, 12) == 0) return translated(b + 12);
  // Teredo (RFC 4380), 2001::/32: the relay sends to the client's IPv4 address, carried
  // inverted in the last 32 bits; the server's sits in bits 32 to 63.
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
    const uint8_t client[4] = {static_cast<uint8_t>(~b[12]), static_cast<uint8_t>(~b[13]),
                               static_cast<uint8_t>(~b[14]), static_cast<uint8_t>(~b[15])};
    return translated(b + 4) == AddressScope::Public ? translated(client)
                                                     : AddressScope::Translated;
  }
  // An ISATAP interface identifier (RFC 5214), ::0:5efe:a.b.c.d or ::200:5efe:a.b.c.d
  // under any prefix: the host's ISATAP tunnel sends to that IPv4 address. A public one
  // leaves the prefix to be judged (fe80::5efe:8.8.8.8 stays link-local).
  if ((b[8] & 0xfd) == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe &&
      scope_v4(b + 12) != AddressScope::Public)
    return AddressScope::Translated;
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

std::vector<IpAddress> carried_ipv4(const IpAddress& addr) {
  if (!addr.v6) return {};
  const uint8_t* b = addr.bytes.data();
  auto v4 = [](const uint8_t* p, bool inverted = false) {
    IpAddress a;
    for (int i = 0; i < 4; ++i) a.bytes[i] = static_cast<uint8_t>(inverted ? ~p[i] : p[i]);
    return a;
  };
  static constexpr uint8_t kZero[10] = {};
  static constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b};
  static constexpr uint8_t kTranslatedForm[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
  std::vector<IpAddress> out;
  if (std::memcmp(b, kZero, 10) == 0 && b[10] == 0xff && b[11] == 0xff) out.push_back(v4(b + 12));
  if (std::memcmp(b, kZero, 10) == 0 && b[10] == 0 && b[11] == 0) out.push_back(v4(b + 12));
  if (std::memcmp(b, kTranslatedForm, 12) == 0) out.push_back(v4(b + 12));
  if (std::memcmp(b, kNat64, 12) == 0) out.push_back(v4(b + 12));
  if (b[0] == 0x20 && b[1] == 0x02) out.push_back(v4(b + 2));
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
    out.push_back(v4(b + 4));
    out.push_back(v4(b + 12, true));
  }
  if ((b[8] & 0xfd) == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe) out.push_back(v4(b + 12));
  return out;
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
