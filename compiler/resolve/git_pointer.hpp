#pragma once

#include <functional>
#include <optional>
#include <string>

namespace zpolicy::compiler {

// How a follower of a `.git` pointer walks and protects what it names.
struct GitPointerWalk {
  // The canonical form of `lexical` under the rules of every protected path, or none once
  // it refused, saying `what` names it.
  std::function<std::optional<std::string>(const std::string& lexical, const std::string& what)>
      canonical_or_refuse;
  // Protects the canonical `path` wherever it lies, as every git target is: whole where it
  // exists, a placeholder where the kernel would create it (through a dangling link too).
  std::function<void(const std::string& path)> protect;
  // Where the kernel would create the canonical `path` through a dangling link, in a
  // writable root (HostWalks::created_in_guard); none when nowhere there.
  std::function<std::optional<std::string>(const std::string& path, const std::string& what)>
      created_in_guard;
};

// The refusal of a git directory (or remote, or common directory) that does not exist and
// that the kernel would create at `made`, in a writable root, through a dangling host link:
// `missing` names it ("... '<name>'", or "... '<name>', which"), `then` says what git would
// do with what the sandbox made there. One wording for every follower, so that the refusal
// and its check cannot drift apart (tidy 25).
std::string made_in_writable_root(const std::string& missing, const std::string& made,
                                  const std::string& then);

// The git directory the `.git` pointer `file` names, `.git` looked up by git in `dir`
// (gitdir_named_by: a relative name against `dir`), canonical and protected: one rule for
// every follower of a pointer (a protected `.git` file, a repository's above a writable
// root, a populated submodule's, a remote's; review R25-2). What it names is protected
// whatever it is: a git directory, or one that is missing or not yet a git directory, which
// git takes for none now ("not a git repository") and the sandbox could make one in a
// writable root; a placeholder keeps it from doing so for the run, and a stale pointer (a
// removed worktree's, a submodule whose git directory was deleted) refuses no run. Passed
// by, a submodule's `.git` naming a missing `app/.mods/lib.git` let the command make a git
// directory there with `core.worktree` and `core.fsmonitor`, which the host's `git status`
// in the repository above ran. One the kernel would create through a dangling link in a
// writable root refuses (red team A22E-2: the placeholder of its `config` alone let the
// command make the rest beside it): `refuse` is told why. The caller reads it as a git
// directory when it is one. `named`: `file` names a git directory (gitdir_named_by);
// `gitdir`: none when it names none or the follower refused.
struct FollowedGitPointer {
  bool named = false;
  std::optional<std::string> gitdir;
};
FollowedGitPointer follow_git_pointer(const std::string& file, const std::string& dir,
                                      const std::string& what, const GitPointerWalk& walk,
                                      const std::function<void(const std::string&)>& refuse);

}  // namespace zpolicy::compiler
