#include "ir/host_route.hpp"

namespace zpolicy::ir {

std::optional<RouteAnswer> reaches_host(const IpAddress& a, const RouteOf& route_of) {
  auto ask = [&](const IpAddress& x) -> std::optional<RouteAnswer> {
    if (x == IpAddress{.v6 = x.v6})
      return RouteAnswer{Delivery::ThisHost, "the unspecified address"};
    RouteAnswer r = route_of(x);
    if (r.delivery == Delivery::ThisHost || r.delivery == Delivery::Unknown) return r;
    return std::nullopt;
  };
  if (auto r = ask(a)) return r;
  for (const IpAddress& v4 : carried_ipv4(a))
    if (auto r = ask(v4)) return r;
  return std::nullopt;
}

}  // namespace zpolicy::ir
