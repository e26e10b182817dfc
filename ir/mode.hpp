#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zpolicy::ir {

// Ordered by how much they allow: a policy's mode is a ceiling and a request may only
// narrow it, so the order is part of the type.
enum class Mode { ReadOnly = 0, WorkspaceWrite = 1, DangerFullAccess = 2 };

inline bool narrower_or_equal(Mode requested, Mode ceiling) {
  return static_cast<int>(requested) <= static_cast<int>(ceiling);
}

inline bool is_confined(Mode m) { return m != Mode::DangerFullAccess; }

// Accepts the hyphenated spellings and the seed aliases read_only, workspace_write,
// danger_full_access.
std::optional<Mode> parse_mode(std::string_view text);
const char* to_string(Mode m);

// Allow: the sandbox's own loopback only, and zpolicy's proxy admitting the policy's
// allow list (ir::Destination); the list lives next to this value in Policy/Resolved.
enum class Network { None, Loopback, Full, Allow };
std::optional<Network> parse_network(std::string_view text);
const char* to_string(Network n);

// What `run` does when the sandbox backend cannot be proven usable.
enum class Unavailable { Deny, RunUnconfined };
std::optional<Unavailable> parse_unavailable(std::string_view text);
const char* to_string(Unavailable u);

}  // namespace zpolicy::ir
