#include "compiler/network/admission.hpp"

#include <algorithm>

namespace zpolicy::compiler {
namespace {

std::string normalize(std::string_view host) {
  if (host.ends_with('.')) host.remove_suffix(1);
  std::string out(host);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// `text` with every byte outside printable ASCII as \xHH, for messages.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

bool names(const ir::Destination& d, const std::string& host,
           const std::optional<ir::IpAddress>& literal) {
  switch (d.kind) {
    case ir::DestinationKind::Name:
    case ir::DestinationKind::Localhost:
      return !literal && host == d.host;
    case ir::DestinationKind::Subdomains:
      return !literal && host.size() > d.host.size() + 1 && host.ends_with(d.host) &&
             host[host.size() - d.host.size() - 1] == '.';
    case ir::DestinationKind::Ipv4:
    case ir::DestinationKind::Ipv6:
      return literal && literal->str() == d.host;
  }
  return false;
}

Admission refuse(AdmissionRefusal r, std::string reason) {
  Admission a;
  a.refusal = r;
  a.reason = std::move(reason);
  return a;
}

}  // namespace

const char* to_string(AdmissionRefusal r) {
  switch (r) {
    case AdmissionRefusal::NotListed:
      return "not-listed";
    case AdmissionRefusal::PortNotListed:
      return "port-not-listed";
    case AdmissionRefusal::NotResolved:
      return "not-resolved";
    case AdmissionRefusal::AddressRefused:
      return "address-refused";
  }
  return "not-listed";
}

std::optional<ir::IpAddress> host_literal(std::string_view host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    auto a = ir::IpAddress::parse(host.substr(1, host.size() - 2));
    return a && a->v6 ? a : std::nullopt;
  }
  return ir::IpAddress::parse(host);
}

Admission match_destination(const std::vector<ir::Located<ir::Destination>>& allow,
                            std::string_view requested, uint16_t port) {
  const std::string host = normalize(requested);
  const auto literal = host_literal(host);
  // Matched as text, resolved as a C string: only a well-formed name is matched at all.
  if (!literal && !ir::is_host_name(host))
    return refuse(AdmissionRefusal::NotListed, "'" + printable(host) + "' is not a host name");
  bool other_port = false;
  for (const auto& entry : allow) {
    if (!names(entry.value, host, literal)) continue;
    if (entry.value.port != port) {
      other_port = true;
      continue;
    }
    Admission a;
    a.admitted = true;
    a.entry = entry;
    a.reason = "allowed by '" + entry.value.str() + "' at " + entry.loc.str();
    return a;
  }
  const std::string what = host + ":" + std::to_string(port);
  if (other_port)
    return refuse(AdmissionRefusal::PortNotListed,
                  what + " is not listed: the allow list names " + host + " on other ports only");
  return refuse(
      AdmissionRefusal::NotListed,
      what + " is not listed" + (literal ? " (an address is admitted only by an ip: entry)" : ""));
}

Admission admit(const std::vector<ir::Located<ir::Destination>>& allow, std::string_view host,
                uint16_t port, const std::vector<ir::IpAddress>& addresses,
                const ir::RouteOf& route_of) {
  Admission a = match_destination(allow, host, port);
  if (!a.admitted) return a;
  const ir::Destination& d = a.entry->value;
  const std::string what = normalize(host) + ":" + std::to_string(port);
  if (d.kind == ir::DestinationKind::Localhost) {
    a.address = ir::IpAddress::parse("127.0.0.1");
    return a;
  }
  std::vector<ir::IpAddress> checked;
  if (auto literal = host_literal(normalize(host))) {
    checked.push_back(*literal);
  } else {
    checked = addresses;
  }
  if (checked.empty())
    return refuse(AdmissionRefusal::NotResolved, what + ": the name has no address");
  for (const auto& address : checked) {
    const ir::AddressScope scope = ir::scope_of(address);
    if (scope != ir::AddressScope::Public)
      return refuse(AdmissionRefusal::AddressRefused,
                    what + " resolves to " + address.str() + ", a " + ir::to_string(scope) +
                        " address (only localhost:PORT entries reach the host's own services)");
    if (const auto route = ir::reaches_host(address, route_of)) {
      if (route->delivery == ir::Delivery::Unknown)
        return refuse(AdmissionRefusal::AddressRefused,
                      what + " resolves to " + address.str() +
                          ", whose route cannot be read: " + route->what);
      return refuse(AdmissionRefusal::AddressRefused,
                    what + " resolves to " + address.str() +
                        ", which reaches this host (" + route->what +
                        "; only localhost:PORT entries reach the host's own services)");
    }
  }
  a.address = checked.front();
  return a;
}

}  // namespace zpolicy::compiler
