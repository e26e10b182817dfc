#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/resolved.hpp"

namespace zpolicy::emitters::sbpl {

// A Seatbelt profile for `sandbox-exec -p TEXT -D NAME=VALUE ...`. Every host path is a
// parameter, so a hostile directory name cannot become SBPL syntax: the text names a
// path only by its parameter, whose name is made of A-Z, 0-9 and `_`. A name is derived
// from its role and its path (PROTECTED_WORKSPACE_GIT for ${WORKSPACE}/.git), not from
// its position, so that a one-line policy edit is a diff of that path's lines only.
struct Profile {
  std::string text;
  // NAME, VALUE grouped by role: READ_ROOT_*, WRITABLE_ROOT_*, PROTECTED_ANCESTOR_*,
  // PROTECTED_*, DENY_ROOT_*; every name unique.
  std::vector<std::pair<std::string, std::string>> params;
};

// Pure and deterministic. Under danger-full-access the profile is `(allow default)`:
// that mode is the explicit opt-out and the runner does not start sandbox-exec for it,
// but `compile` still writes an artifact that says so plainly.
Profile emit(const ir::Resolved& policy);

// The `params.txt` artifact: one NAME=VALUE per line, in `params` order.
std::string params_text(const Profile& profile);

}  // namespace zpolicy::emitters::sbpl
