#include "compiler/review/network_diff.hpp"

#include <set>

#include "compiler/network/admission.hpp"

namespace zpolicy::compiler::review {
namespace {

int breadth(ir::Network n) {
  switch (n) {
    case ir::Network::None:
      return 0;
    case ir::Network::Loopback:
      return 1;
    case ir::Network::Allow:
      return 2;
    case ir::Network::Full:
      return 3;
  }
  return 3;
}

// The name the proxy would be asked for to reach `d`: below the suffix for a
// `*.suffix` entry, which does not admit the suffix itself.
std::string asked_host(const ir::Destination& d) {
  return d.kind == ir::DestinationKind::Subdomains ? "zpolicy-probe." + d.host : d.host;
}

Side destination_side(const ir::Resolved& r, const ir::Destination& d) {
  switch (r.network) {
    case ir::Network::Full:
      return {"admitted", "network: full", r.network_loc};
    case ir::Network::Allow: {
      const auto a = match_destination(r.allow, asked_host(d), d.port);
      if (a.admitted && a.entry) return {"admitted", "allow " + a.entry->value.str(), a.entry->loc};
      return {"refused", a.reason, r.network_loc};
    }
    case ir::Network::None:
    case ir::Network::Loopback:
      break;
  }
  return {"refused", std::string("network: ") + ir::to_string(r.network), r.network_loc};
}

}  // namespace

std::vector<Difference> diff_network(const ir::Resolved& before, const ir::Resolved& after) {
  std::vector<Difference> out;
  if (before.network != after.network) {
    Difference d;
    d.area = Area::Network;
    d.subject = "network";
    d.direction = breadth(after.network) > breadth(before.network) ? Direction::Widening
                                                                    : Direction::Narrowing;
    d.before = {ir::to_string(before.network), "network", before.network_loc};
    d.after = {ir::to_string(after.network), "network", after.network_loc};
    out.push_back(std::move(d));
  }
  std::set<ir::Destination> destinations;
  for (const auto* r : {&before, &after})
    for (const auto& a : r->allow) destinations.insert(a.value);
  for (const auto& dest : destinations) {
    Side was = destination_side(before, dest), now = destination_side(after, dest);
    if (was.verdict == now.verdict) continue;
    Difference d;
    d.area = Area::Network;
    d.subject = "connect " + dest.str();
    d.direction = now.verdict == "admitted" ? Direction::Widening : Direction::Narrowing;
    d.before = std::move(was);
    d.after = std::move(now);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace zpolicy::compiler::review
