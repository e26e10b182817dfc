#pragma once

#include <string>

namespace zpolicy::compiler {

// The directory where `zpolicy run` keeps its own state (the lock and the run records
// that make placeholders shared between concurrent runs, runner/placeholders). One per
// user: /run/zpolicy for root, $XDG_RUNTIME_DIR/zpolicy when the caller owns that
// directory, /tmp/zpolicy-UID otherwise. Computed only, never created here.
//
// It is a host fact because every bound policy hides it from the sandbox (a deny root,
// see resolve_for_host): a sandbox that could open the lock could stall every other run,
// and one that could edit a run record could make cleanup remove what a live run needs.
std::string zpolicy_state_dir();

// The source location the hidden state directory is attributed to in findings.
inline constexpr const char* kStateDirRule = "<zpolicy state>";

}  // namespace zpolicy::compiler
