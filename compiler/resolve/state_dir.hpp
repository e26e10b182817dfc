#pragma once

#include <string>

namespace zpolicy::compiler {

// The directory where `zpolicy run` keeps its own state (the lock and the run records
// that make placeholders shared between concurrent runs, runner/placeholders). One per
// user: /run/zpolicy for root, $XDG_RUNTIME_DIR/zpolicy when the caller owns that
// directory and nobody else can write it, /tmp/zpolicy-UID otherwise.
//
// A name in a directory every user can write (/tmp) can be taken first by another user,
// whose directory a run must never trust, and the run would refuse (red team R7-L1). So a
// candidate is used only when it is absent (the first run creates it, mode 0700) or a
// private directory of the caller's; when /tmp/zpolicy-UID is taken, the state lives in a
// directory of an unpredictable name, /tmp/zpolicy-UID-XXXXXX, found again by the next run
// as the caller's own (the first such one by name) and created with mkdtemp(3) when there
// is none. Chosen once per process, so that every part of one run names the same.
//
// It is a host fact because every bound policy hides it from the sandbox (a deny root,
// see resolve_for_host): a sandbox that could open the lock could stall every other run,
// and one that could edit a run record could make cleanup remove what a live run needs.
std::string zpolicy_state_dir();

// When the usual name was taken by another user: says so (for `zpolicy doctor`); else empty.
std::string zpolicy_state_dir_note();

// The source location the hidden state directory is attributed to in findings.
inline constexpr const char* kStateDirRule = "<zpolicy state>";

}  // namespace zpolicy::compiler
