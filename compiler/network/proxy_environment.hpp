#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/destination.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// The port of the sandbox's loopback where the proxy listens: 3128, the customary proxy
// port, or the next one that no `localhost:PORT` entry forwards.
uint16_t proxy_port(const std::vector<ir::Located<ir::Destination>>& allow);

// Sets HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, their lower-case forms to
// http://127.0.0.1:PORT, and NO_PROXY/no_proxy to the loopback names (the localhost
// forwards are reached directly), replacing any kept from the caller.
void set_proxy_environment(std::vector<std::string>& env, uint16_t port,
                           const std::vector<ir::Located<ir::Destination>>& allow);

}  // namespace zpolicy::compiler
