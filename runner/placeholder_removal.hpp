#pragma once

#include <optional>
#include <string>

#include "runner/run_records.hpp"

namespace zpolicy::runner {

// Removing a placeholder a run recorded. Every step opens the parent directory from "/"
// following no symlink (runner/open_no_symlinks) and acts on the last component by name
// without following it, so a path changed since the run (a component swapped for a
// symlink) can only make the removal refuse, never act elsewhere.
//
// What tells the directory a run made from one made at that path since: the same device
// and inode number are not enough (ext4 hands a freed inode number out again at once). A
// run that is gone is taken at the birth time it recorded, and nothing is done to a
// directory whose birth time was not recorded or is not reported now (fail closed: it
// stays, an empty directory at a protected path, which keeps the path protected). A run
// that is live holds a descriptor on each of its placeholders (`held`): while it is open
// the inode cannot be freed, so its number names nothing else.

// A pin is writable inside the sandbox, so the command may have chmod'ed it (say to 000),
// which would leave the placeholders below it unremovable. Gives the owner's rwx back to
// `p` if it is still the directory recorded. Callers go shallowest first.
void restore_access_if_ours(const RecordedPlaceholder& p);
void restore_access_if_ours(const RecordedPlaceholder& p, int held);

enum class Removal {
  Removed,
  Gone,          // nothing is there any more
  NotEmpty,      // the command put something inside: user data, never deleted
  NotOurs,       // another object (a file, a symlink, another directory) is there now
  Unreachable,   // the way to it is not a directory or cannot be searched
  Unidentified,  // no birth time to tell it from a directory made there since
};
const char* to_string(Removal r);

// Whether `p` may still be the directory recorded: the same device and inode, and the same
// birth time unless none is known (for listing what runs left, never for acting on it).
bool still_recorded(const RecordedPlaceholder& p);

// Removes `p` only if it is still the empty directory recorded. Callers go deepest first.
Removal remove_if_ours(const RecordedPlaceholder& p);
Removal remove_if_ours(const RecordedPlaceholder& p, int held);

// The identity to record of the directory open on `fd` (`path` set by the caller), or
// nullopt when it cannot be examined.
std::optional<RecordedPlaceholder> examine_placeholder(int fd);

}  // namespace zpolicy::runner
