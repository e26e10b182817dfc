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
// What walking `spelled` (absolute, or relative to the canonical `cwd`) one component at
// a time found: the first symlink other than an accepted one, named as spelled up to it,
// or else the canonical path the walk reached. Components that do not exist end the walk
// (the workspace check reports them). The caller compares `walked` with its own
// canonicalization of the spelling: a symlink swapped in or out between the two shows as
// a difference (red team R4-W1).
struct WorkspaceSpelling {
  std::optional<std::string> link;
  std::string walked;
};
WorkspaceSpelling walk_workspace_spelling(const std::string& spelled, const std::string& cwd);

// `path` (absolute) without empty components, '.' and '..' (each taking the component
// before it away, as a shell's logical `cd` does).
std::string lexically_normal(const std::string& path);

// The workspace as the caller named it (HostFacts::workspace_spelled, red team A23C-4):
// `workspace` as given (none: the current directory), a relative one taken against `pwd`
// (the caller's $PWD), the shell's name for the current directory, which keeps the links
// `cd` went through (`cd mono/app` with the host's `mono/app -> /data/app`), and used only
// where it names the current directory. Lexically normalized; empty unless it differs from
// `canonical` and names the same directory (device and inode).
std::string caller_workspace_spelling(const std::optional<std::string>& workspace,
                                      const std::string& canonical,
                                      const std::optional<std::string>& pwd);

}  // namespace zpolicy::compiler
