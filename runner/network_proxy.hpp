#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/destination.hpp"
#include "ir/ip_address.hpp"
#include "ir/policy.hpp"
#include "runner/run_report.hpp"

namespace zpolicy::runner {

// Names the proxy resolves to fixed addresses instead of asking the host's resolver:
// only `zpolicy run --resolve NAME=ADDRESS`, for tests (docs/network.md). A pinned
// address is checked like any other; a policy cannot set this.
using PinnedNames = std::map<std::string, std::vector<ir::IpAddress>>;

// zpolicy's allow-list proxy, served by the runner outside the sandbox on listening
// sockets that live in the sandbox's network namespace (listen_in_sandbox). HTTP CONNECT
// and absolute-form plain HTTP requests are admitted by compiler::admit, names resolved
// here, and the connection made to the address that was checked; `localhost:PORT`
// forwards are plain TCP to the host's 127.0.0.1:PORT. Each connection has a thread.
class NetworkProxy {
 public:
  NetworkProxy(std::vector<ir::Located<ir::Destination>> allow, PinnedNames pinned);
  ~NetworkProxy();
  NetworkProxy(const NetworkProxy&) = delete;
  NetworkProxy& operator=(const NetworkProxy&) = delete;

  void serve_proxy(int listener);                   // takes the descriptor
  void serve_forward(int listener, uint16_t port);  // takes the descriptor
  // The refused destinations, sorted, each once: the first 256 distinct ones.
  std::vector<ProxyRefusal> refusals() const;
  // Refused connections to destinations past the first 256 distinct ones, which are not
  // kept: the command decides how many it asks for.
  size_t refusals_omitted() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// A TCP socket listening on 127.0.0.1:`port` inside the network namespace of process
// `pid` (the sandbox's init): a child process joins its user namespace (when it is not
// ours) and its network namespace, makes the socket and hands it back. -1 and `why` on
// failure. IP_FREEBIND: the sandbox's `lo` may not be up yet.
int listen_in_sandbox(pid_t pid, uint16_t port, std::string& why);

}  // namespace zpolicy::runner
