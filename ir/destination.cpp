#include "ir/destination.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

namespace zpolicy::ir {
namespace {

constexpr uint16_t kDefaultPorts[] = {80, 443};

bool fail(DestinationError* e, std::string reason) {
  if (e) e->reason = std::move(reason);
  return false;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "443" → 443; nullopt with a reason for "", "0", "65536", "x".
std::optional<uint16_t> parse_port(std::string_view text, std::string_view entry,
                                   DestinationError* e) {
  unsigned long v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || !all_digits(text)) {
    fail(e, "'" + std::string(entry) + "': the port must be a number from 1 to 65535");
    return std::nullopt;
  }
  if (ec != std::errc() || ptr != text.data() + text.size() || v == 0 || v > 65535) {
    fail(e, "'" + std::string(entry) + "': port " + std::string(text) +
                " is out of range (1 to 65535)");
    return std::nullopt;
  }
  return static_cast<uint16_t>(v);
}

// A host name (possibly "*.suffix"), lower-cased. Labels of [a-z0-9-_], 1..63 bytes, not
// starting or ending with '-'; at most 253 bytes in all.
bool check_name(std::string_view host, std::string_view entry, DestinationError* e) {
  const std::string quoted = "'" + std::string(entry) + "'";
  if (host.empty()) return fail(e, quoted + ": no host name");
  if (host.size() > 253) return fail(e, quoted + ": the name is longer than 253 bytes");
  size_t start = 0;
  size_t index = 0;
  std::string_view last;
  while (true) {
    const size_t dot = host.find('.', start);
    const std::string_view label =
        host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty()) return fail(e, quoted + ": empty label (two dots, or a dot at an end)");
    if (label.find('*') != std::string_view::npos) {
      if (index != 0 || label != "*")
        return fail(e, quoted + ": a wildcard may only be the whole leading label ('*.example.org')");
    } else {
      if (label.size() > 63) return fail(e, quoted + ": a label is longer than 63 bytes");
      for (unsigned char c : label) {
        if (c >= 0x80)
          return fail(e, quoted + ": non-ASCII name; write its xn-- (punycode) form");
        if (!(std::isalnum(c) || c == '-' || c == '_'))
          return fail(e, quoted + ": '" + std::string(1, static_cast<char>(c)) +
                             "' is not allowed in a host name");
      }
      if (label.front() == '-' || label.back() == '-')
        return fail(e, quoted + ": a label may not start or end with '-'");
    }
    last = label;
    ++index;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (host == "*") return fail(e, quoted + ": a wildcard alone would admit every name; use network: full");
  if (all_digits(last))
    return fail(e, quoted + ": looks like an IP address; write an address as ip:ADDRESS[:PORT] "
                            "if you mean it");
  return true;
}

}  // namespace

bool is_host_name(std::string_view host) {
  return host.find('*') == std::string_view::npos && check_name(host, host, nullptr);
}

std::string Destination::str() const {
  const std::string port_text = ":" + std::to_string(port);
  switch (kind) {
    case DestinationKind::Subdomains:
      return "*." + host + port_text;
    case DestinationKind::Ipv4:
      return "ip:" + host + port_text;
    case DestinationKind::Ipv6:
      return "ip:[" + host + "]" + port_text;
    case DestinationKind::Name:
    case DestinationKind::Localhost:
      break;
  }
  return host + port_text;
}

std::optional<std::vector<Destination>> parse_destination(std::string_view text,
                                                          DestinationError* e) {
  const std::string quoted = "'" + std::string(text) + "'";
  if (text.empty()) return fail(e, "empty entry"), std::nullopt;
  for (unsigned char c : text)
    if (c <= ' ' || c == 0x7f)
      return fail(e, quoted + ": whitespace or a control character"), std::nullopt;
  if (text.find("://") != std::string_view::npos)
    return fail(e, quoted + ": a scheme; write the host (and port) only, e.g. 'pypi.org' or "
                            "'github.com:22'"),
           std::nullopt;
  if (text.find_first_of("/?#") != std::string_view::npos)
    return fail(e, quoted + ": a path or query; the proxy admits hosts and ports, not URLs"),
           std::nullopt;
  if (text.find('@') != std::string_view::npos)
    return fail(e, quoted + ": a user part; write the host (and port) only"), std::nullopt;

  Destination d;
  std::string_view rest = text;
  std::optional<std::string_view> port_text;
  const bool literal = rest.starts_with("ip:");
  if (literal) rest.remove_prefix(3);
  if (rest.starts_with("[")) {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos)
      return fail(e, quoted + ": '[' without ']'"), std::nullopt;
    const std::string addr(rest.substr(1, close - 1));
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail(e, quoted + ": text after ']'"), std::nullopt;
      port_text = after.substr(1);
    }
    in6_addr a6{};
    if (inet_pton(AF_INET6, addr.c_str(), &a6) != 1)
      return fail(e, quoted + ": not an IPv6 address in brackets"), std::nullopt;
    if (!literal)
      return fail(e, quoted + ": a bare IP literal; write ip:[" + addr +
                         "]... if you mean this address"),
             std::nullopt;
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, &a6, buf, sizeof buf);
    d.kind = DestinationKind::Ipv6;
    d.host = buf;
  } else {
    const size_t colon = rest.find(':');
    if (colon != std::string_view::npos && rest.find(':', colon + 1) != std::string_view::npos) {
      in6_addr a6{};
      if (inet_pton(AF_INET6, std::string(rest).c_str(), &a6) == 1)
        return fail(e, quoted + (literal ? ": write an IPv6 address in brackets, ip:[ADDRESS]:PORT"
                                         : ": a bare IP literal; write ip:[ADDRESS]:PORT if you "
                                           "mean this address")),
               std::nullopt;
      return fail(e, quoted + ": more than one ':'"), std::nullopt;
    }
    std::string_view host = rest.substr(0, colon);
    if (colon != std::string_view::npos) port_text = rest.substr(colon + 1);
    const std::string h = lower(host);
    in_addr a4{};
    if (inet_pton(AF_INET, h.c_str(), &a4) == 1) {
      if (!literal)
        return fail(e, quoted + ": a bare IP literal; write ip:" + std::string(text) +
                           " if you mean this address"),
               std::nullopt;
      char buf[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, &a4, buf, sizeof buf);
      d.kind = DestinationKind::Ipv4;
      d.host = buf;
    } else if (literal) {
      return fail(e, quoted + ": 'ip:' must be followed by an IPv4 address or [IPv6]"), std::nullopt;
    } else {
      if (!check_name(h, text, e)) return std::nullopt;
      if (h == "localhost") {
        d.kind = DestinationKind::Localhost;
        if (!port_text)
          return fail(e, quoted + ": localhost needs a port (localhost:PORT): it forwards one "
                                  "port of the host's loopback"),
                 std::nullopt;
      } else if (h.starts_with("*.")) {
        d.kind = DestinationKind::Subdomains;
      }
      d.host = d.kind == DestinationKind::Subdomains ? h.substr(2) : h;
    }
  }
  std::vector<Destination> out;
  if (port_text) {
    auto port = parse_port(*port_text, text, e);
    if (!port) return std::nullopt;
    d.port = *port;
    out.push_back(d);
  } else {
    for (uint16_t p : kDefaultPorts) {
      d.port = p;
      out.push_back(d);
    }
  }
  return out;
}

}  // namespace zpolicy::ir
