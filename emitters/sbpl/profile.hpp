#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/resolved.hpp"

namespace zpolicy::emitters::sbpl {

// A Seatbelt profile for `sandbox-exec -p TEXT -D NAME=VALUE ...`. Every host path is a
// parameter, so `text` depends only on the shape of the policy (how many roots, which
// protected paths lie below which root), never on a path's characters: the same text
// serves every workspace, and a hostile directory name cannot become SBPL syntax.
struct Profile {
  std::string text;
  // NAME, VALUE grouped by role: READ_ROOT_i, WRITABLE_ROOT_i, PROTECTED_ANCESTOR_i,
  // PROTECTED_i, DENY_ROOT_i.
  std::vector<std::pair<std::string, std::string>> params;
};

// Pure and deterministic. Under danger-full-access the profile is `(allow default)`:
// that mode is the explicit opt-out and the runner does not start sandbox-exec for it,
// but `compile` still writes an artifact that says so plainly.
Profile emit(const ir::Resolved& policy);

// The `params.txt` artifact: one NAME=VALUE per line, in `params` order.
std::string params_text(const Profile& profile);

}  // namespace zpolicy::emitters::sbpl
