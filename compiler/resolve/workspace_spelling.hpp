#pragma once

#include <optional>
#include <string>

namespace zpolicy::compiler {

// A --workspace spelled through a symlink binds the link's target, and a symlink may have
// been planted by an earlier sandbox in a directory it could write (red team R3-E1s: `sub ->
// ~/project`, then `--workspace WS/sub` let the run write ~/project). So a workspace
// given on the command line must be spelled without symlinks, with one exception: a link
// directly in "/" (`/home -> usr/home`, macOS's `/tmp`, merged-/usr's `/lib`) when "/" is
// a directory only root can write: no sandbox writes "/" unless a user accepted the finding
// that refuses it as a writable root.
//
// Returns nullopt when `spelled` (absolute, or relative to the canonical `cwd`) crosses no
// other symlink; else the first such link, named as spelled up to it. Components that do
// not exist end the walk (the workspace check reports them).
std::optional<std::string> symlink_in_workspace_spelling(const std::string& spelled,
                                                         const std::string& cwd);

}  // namespace zpolicy::compiler
