#include "ir/host_addresses.hpp"

namespace zpolicy::ir {

bool reaches_host(const IpAddress& a, const HostAddresses& host) {
  if (a == IpAddress{.v6 = a.v6}) return true;  // 0.0.0.0 or ::
  if (host.own.contains(a)) return true;
  for (const IpAddress& v4 : carried_ipv4(a))
    if (v4 == IpAddress{} || host.own.contains(v4)) return true;
  return false;
}

}  // namespace zpolicy::ir
