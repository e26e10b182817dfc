#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/destination.hpp"
#include "ir/mode.hpp"
#include "ir/path.hpp"
#include "ir/path_pattern.hpp"
#include "ir/source_location.hpp"
#include "ir/syscall_policy.hpp"

namespace zpolicy::ir {

// A value together with the policy line that set it.
template <class T>
struct Located {
  T value{};
  SourceLoc loc;
};

// The `syscalls:` section as written. A deny-list adds to the mode's baseline; an
// allow-list (what an imported OCI profile becomes) replaces the default action.
struct SyscallSpec {
  enum class Style { DenyList, AllowList };
  Style style = Style::DenyList;
  Located<Action> action{Action::errno_(1), {}};  // deny action, or the allow-list default
  std::vector<SyscallRule> rules;
};

struct EnvPolicy {
  // Names to keep; a trailing '*' keeps every name with that prefix (LC_*).
  std::vector<Located<std::string>> keep;
  std::map<std::string, Located<std::string>> set;
};

// The portable policy: what the YAML says, with symbolic roots, before any host fact.
struct Policy {
  SourceLoc origin;  // the file (or "<builtin>")
  Located<Mode> mode{Mode::WorkspaceWrite, {}};
  std::vector<Located<PolicyPath>> read;
  std::vector<Located<PolicyPath>> write;
  std::vector<Located<PolicyPath>> protect;  // relative = below each writable root
  SourceLoc protect_loc;  // where `protect:` is written; the builtin file when it is not
  std::vector<Located<PolicyPath>> deny;
  // Entries of `protect` and `deny` written as patterns (`**/.git`, `packages/*/.env`):
  // kept symbolic here and in portable output, expanded against the host tree when the
  // policy is bound (compiler/resolve/pattern_expand).
  std::vector<Located<PathPattern>> protect_patterns;
  std::vector<Located<PathPattern>> deny_patterns;
  Located<Network> network{Network::None, {}};
  // With network Allow: the destinations the proxy admits, sorted, each once (the first
  // entry that names it gives the location).
  std::vector<Located<Destination>> allow;
  SyscallSpec syscalls;
  EnvPolicy env;
  std::optional<Located<std::chrono::milliseconds>> timeout;
  Located<Unavailable> unavailable{Unavailable::Deny, {}};
};

// Keep names of the default environment policy.
const std::vector<std::string>& default_env_keep();

}  // namespace zpolicy::ir
