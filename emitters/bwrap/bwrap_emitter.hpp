#pragma once

#include <string>
#include <vector>

#include "ir/resolved.hpp"

namespace zpolicy::emitters::bwrap {

// The descriptor on which the runner hands bwrap the seccomp program; fixed so that the
// compiled argv is exactly what runs.
inline constexpr int kSeccompFd = 3;

// The bwrap arguments for a confined mode, up to and excluding "--". Pure: depends on
// the resolved IR only. Precondition: r.mode is read-only or workspace-write.
std::vector<std::string> emit_args(const ir::Resolved& r);

// The `bwrap.args` artifact: one argument per line.
std::string args_text(const std::vector<std::string>& args);

}  // namespace zpolicy::emitters::bwrap
