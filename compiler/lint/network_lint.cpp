#include "compiler/lint/network_lint.hpp"

#include <algorithm>
#include <set>

#include "ir/ip_address.hpp"

namespace zpolicy::compiler {

const std::vector<std::string>& public_suffix_list() {
  static const std::vector<std::string> v = {
      "ac.uk",          "amazonaws.com",      "appspot.com",     "azurewebsites.net",
      "blogspot.com",   "cloudfront.net",     "co.in",           "co.jp",
      "co.nz",          "co.uk",              "co.za",           "com.au",
      "com.br",         "com.cn",             "fly.dev",         "github.io",
      "gitlab.io",      "glitch.me",          "gov.uk",          "herokuapp.com",
      "netlify.app",    "ngrok-free.app",     "ngrok.io",        "onrender.com",
      "org.uk",         "pages.dev",          "s3.amazonaws.com", "trycloudflare.com",
      "vercel.app",     "web.app",            "workers.dev",
  };
  return v;
}

std::vector<ir::Diagnostic> lint_network(const ir::Policy& p) {
  std::vector<ir::Diagnostic> out;
  if (p.network.value != ir::Network::Allow) return out;
  const auto& suffixes = public_suffix_list();
  // One finding per entry as written: `*.com` stands for two destinations (80 and 443).
  std::set<std::pair<int, int>> seen;
  for (const auto& [d, loc] : p.allow) {
    if (!seen.insert({loc.line, loc.col}).second) continue;
    const std::string shown = d.kind == ir::DestinationKind::Subdomains ? "*." + d.host : d.host;
    if (d.kind == ir::DestinationKind::Subdomains &&
        (d.host.find('.') == std::string::npos ||
         std::find(suffixes.begin(), suffixes.end(), d.host) != suffixes.end()))
      out.push_back({"ZP014", ir::Severity::Error, loc,
                     "'" + shown + "' covers the public suffix '" + d.host +
                         "': anyone can own a name below it, so it admits anyone; list the "
                         "hosts (or a wildcard below a domain you trust)"});
    if (d.kind == ir::DestinationKind::Ipv4 || d.kind == ir::DestinationKind::Ipv6) {
      const auto scope = ir::scope_of(*ir::IpAddress::parse(d.host));
      if (scope != ir::AddressScope::Public)
        out.push_back({"ZP015", ir::Severity::Warning, loc,
                       "'ip:" + d.host + "' is a " + std::string(ir::to_string(scope)) +
                           " address, which the proxy never connects to; a service on the "
                           "host's loopback is 'localhost:PORT'"});
    }
    if ((d.kind == ir::DestinationKind::Name || d.kind == ir::DestinationKind::Subdomains) &&
        (d.host == "localhost" || d.host.ends_with(".localhost") || d.host == "invalid" ||
         d.host.ends_with(".invalid")))
      out.push_back({"ZP015", ir::Severity::Warning, loc,
                     "'" + shown + "' never resolves to a public address (RFC 6761); a "
                                   "service on the host's loopback is 'localhost:PORT'"});
  }
  return out;
}

}  // namespace zpolicy::compiler
