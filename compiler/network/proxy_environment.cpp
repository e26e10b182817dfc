#include "compiler/network/proxy_environment.hpp"

#include <algorithm>

namespace zpolicy::compiler {

uint16_t proxy_port(const std::vector<ir::Located<ir::Destination>>& allow) {
  uint16_t port = 3128;
  auto forwarded = [&](uint16_t p) {
    return std::any_of(allow.begin(), allow.end(), [&](const auto& d) {
      return d.value.kind == ir::DestinationKind::Localhost && d.value.port == p;
    });
  };
  while (forwarded(port)) ++port;
  return port;
}

void set_proxy_environment(std::vector<std::string>& env, uint16_t port,
                           const std::vector<ir::Located<ir::Destination>>&) {
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"HTTP_PROXY", url},  {"HTTPS_PROXY", url}, {"ALL_PROXY", url},
      {"http_proxy", url},  {"https_proxy", url}, {"all_proxy", url},
      {"NO_PROXY", "localhost,127.0.0.1,::1"},    {"no_proxy", "localhost,127.0.0.1,::1"}};
  for (const auto& [name, value] : vars) {
    env.erase(std::remove_if(env.begin(), env.end(),
                             [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; }),
              env.end());
    env.push_back(name + "=" + value);
  }
}

}  // namespace zpolicy::compiler
