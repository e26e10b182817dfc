#pragma once

#include <cstddef>
#include <optional>

#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// sandbox-exec takes the profile and every parameter on its command line, which macOS
// bounds by ARG_MAX (kern.argmax, 1 MiB with the environment).
inline constexpr size_t kSbplMaxArgumentBytes = size_t{1} << 20;

// A profile names, one parameter each, the directories above a protected path or deny
// root that a writable root may hold (a rename of one would carry the path away), so its
// size grows with the square of a path's depth. Refused, at the protected path or deny
// root that crosses the limit, when the distinct directories above all of them (an upper
// bound on those the profile names) total more than kSbplMaxArgumentBytes: no such
// profile could run. Linear in the policy's paths, so `compile` asks before emitting
// (issue 19 §2).
std::optional<ir::Diagnostic> too_many_ancestor_bytes(const ir::Resolved& policy);

}  // namespace zpolicy::compiler
