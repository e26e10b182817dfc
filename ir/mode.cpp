#include "ir/mode.hpp"

namespace zpolicy::ir {

std::optional<Mode> parse_mode(std::string_view t) {
  if (t == "read-only" || t == "read_only") return Mode::ReadOnly;
  if (t == "workspace-write" || t == "workspace_write") return Mode::WorkspaceWrite;
  if (t == "danger-full-access" || t == "danger_full_access") return Mode::DangerFullAccess;
  return std::nullopt;
}

const char* to_string(Mode m) {
  switch (m) {
    case Mode::ReadOnly:
      return "read-only";
    case Mode::WorkspaceWrite:
      return "workspace-write";
    case Mode::DangerFullAccess:
      return "danger-full-access";
  }
  return "read-only";
}

std::optional<Network> parse_network(std::string_view t) {
  if (t == "none") return Network::None;
  if (t == "loopback") return Network::Loopback;
  if (t == "full") return Network::Full;
  return std::nullopt;
}

const char* to_string(Network n) {
  switch (n) {
    case Network::None:
      return "none";
    case Network::Loopback:
      return "loopback";
    case Network::Full:
      return "full";
    case Network::Allow:
      return "allow";
  }
  return "none";
}

std::optional<Unavailable> parse_unavailable(std::string_view t) {
  if (t == "deny") return Unavailable::Deny;
  if (t == "run-unconfined") return Unavailable::RunUnconfined;
  return std::nullopt;
}

const char* to_string(Unavailable u) {
  return u == Unavailable::Deny ? "deny" : "run-unconfined";
}

}  // namespace zpolicy::ir
