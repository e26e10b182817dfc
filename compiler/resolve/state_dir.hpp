#pragma once

#include <string>

namespace zpolicy::compiler {

// The directory where `zpolicy run` keeps its own state (the lock and the run records
// that make placeholders shared between concurrent runs, runner/placeholders). One per
// user, and the same for every run of that user whatever its environment: /run/zpolicy
// for root, /tmp/zpolicy-UID for every other user, when it is absent (the first run
// creates it, mode 0700) or a private directory of the caller's.
//
// Run records tell a later run which directories to chmod and remove (reconciliation), so
// none may ever be written from inside a sandbox. Every bound policy hides this directory
// (a deny root, see resolve_for_host), and the runner refuses a run whose policy does not
// hide it. That proves nothing about a directory some other run did not hide: so no run
// ever reads records anywhere else. The choice reads no environment variable
// ($XDG_RUNTIME_DIR was read until red team A10B-2: a run without it used /tmp/zpolicy-UID
// while a sandbox of a run with it could write there, and the other way round), and
// never looks a directory up by pattern (the first caller's /tmp/zpolicy-UID-XXXXXX was
// used when the usual name was taken: a sandbox that could write /tmp made one).
//
// A name in a directory every user can write (/tmp) can be taken first by another user,
// whose directory a run must never trust, and the run would refuse (red team R7-L1). Then
// each process keeps its state in a directory of its own, /tmp/zpolicy-UID-<random>, which
// no other process reads and the runner removes at the end of the run
// (`zpolicy_state_dir_is_private_to_this_process`): records there are never reconciled,
// and a placeholder a run in it leaves (killed, or ending while another run is live) stays
// for the user to remove. Chosen once per process, so that every part of one run names
// the same.
//
// It is a host fact because every bound policy hides it from the sandbox: a sandbox that
// could open the lock could stall every other run, and one that could edit a run record
// could make cleanup remove what a live run needs, or chmod and remove any directory of
// the caller's (docs/protected-paths.md "zpolicy's own state").
std::string zpolicy_state_dir();

// Whether zpolicy_state_dir() is a directory of this process's own (the usual name was
// taken by another user): the runner creates it and removes it, and nothing reads it later.
bool zpolicy_state_dir_is_private_to_this_process();

// The usual name: /run/zpolicy for root, /tmp/zpolicy-UID for every other user. While
// another user holds it, a run whose sandbox could make it there is refused (red team
// A11-5, runner/state_dir_exposure.hpp).
std::string zpolicy_usual_state_dir();

// When the usual name was taken by another user: says so (for `zpolicy doctor`); else empty.
std::string zpolicy_state_dir_note();

// The source location the hidden state directory is attributed to in findings.
inline constexpr const char* kStateDirRule = "<zpolicy state>";

}  // namespace zpolicy::compiler
