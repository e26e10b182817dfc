#pragma once

#include <string>

#include "runner/run_records.hpp"

namespace zpolicy::runner {

// Removing a placeholder a run recorded. Every step opens the parent directory from "/"
// following no symlink (runner/open_no_symlinks) and acts on the last component by name
// without following it, so a path changed since the run (a component swapped for a
// symlink) can only make the removal refuse, never act elsewhere.

// A pin is writable inside the sandbox, so the command may have chmod'ed it (say to 000),
// which would leave the placeholders below it unremovable. Gives the owner's rwx back to
// `p` if it is still the directory recorded (same device and inode). Callers go
// shallowest first.
void restore_access_if_ours(const RecordedPlaceholder& p);

enum class Removal {
  Removed,
  Gone,         // nothing is there any more
  NotEmpty,     // the command put something inside: user data, never deleted
  NotOurs,      // another object (a file, a symlink, another directory) is there now
  Unreachable,  // the way to it is not a directory or cannot be searched
};
const char* to_string(Removal r);

// Whether `p` is still the directory recorded.
bool still_recorded(const RecordedPlaceholder& p);

// Removes `p` only if it is still the empty directory recorded. Callers go deepest first.
Removal remove_if_ours(const RecordedPlaceholder& p);

}  // namespace zpolicy::runner
