#pragma once

#include <optional>
#include <string>

#include "runner/run.hpp"

namespace zpolicy::runner {

// The one line `run` ends with when the sandboxed command fails, so that a user who sees
// EROFS or EPERM knows where to ask: `zpolicy explain` with the policy file, mode and
// workspace the run had. None when the command succeeded, ran unconfined, or the status
// is zpolicy's own failure (4 no backend, 124 timeout, 125 internal), which says why itself.
// `started` false: the sandbox reported that the command was never executed, which the line
// then says instead of "exited with" (none after an interruption, which zpolicy reported).
std::optional<std::string> explain_hint(const RunRequest& request, bool confined, int status,
                                        bool started = true);

}  // namespace zpolicy::runner
