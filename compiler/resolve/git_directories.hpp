#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/resolve/caller_environment.hpp"
#include "compiler/resolve/canonical.hpp"
#include "compiler/resolve/protected_index.hpp"
#include "ir/diagnostic.hpp"
#include "ir/resolved.hpp"
#include "ir/source_location.hpp"

namespace zpolicy::compiler {

// The resolver's walks of a host path (resolve.cpp's HostResolver, same names), each
// guarded by the guards (GitDirectoryWalk::guards): a symlink inside one stops the walk,
// one outside is followed, and the `_or_refuse` ones report a stop as an error with `what`
// at `loc`.
struct HostWalks {
  std::function<Canonical(const std::string& lexical)> canonicalize;
  std::function<std::optional<Canonical>(const std::string& lexical, const ir::SourceLoc& loc,
                                         const std::string& what)>
      walked_or_refuse;
  std::function<std::optional<std::string>(const std::string& lexical, const ir::SourceLoc& loc,
                                           const std::string& what)>
      canonical_or_refuse;
  // Every name the kernel would create `path` at through a dangling link, link after link.
  std::function<std::vector<std::string>(const std::string& path, const ir::SourceLoc& loc,
                                         const std::string& what)>
      created_through_links;
  // The first of those in a guard.
  std::function<std::optional<std::string>(const std::string& path, const ir::SourceLoc& loc,
                                           const std::string& what)>
      created_in_guard;
  // The worktrees whose `.git` pointer named `gitdir`.
  std::function<std::vector<std::string>(const std::string& gitdir)> pointer_worktrees;
  // Whether the lookup of `lexical` fails for its count of links whatever the sandbox does
  // (a host loop: red team A24-5): it names nothing, now or later.
  std::function<bool(const std::string& lexical)> loops_for_good;
};

// What the walk over git directories needs of the resolver, and nothing more.
struct GitDirectoryWalk {
  const HostWalks& h;
  // The writable roots and every other name the host's mounts give them or a part of them:
  // "in a writable root" is judged by them, and every walk is guarded by them.
  const std::vector<ir::ResolvedPath>& guards;
  // Protects a path as a protect entry naming it would (`canonical`: no walk is needed);
  // it appends to the protected paths, which may add a git directory to read.
  const std::function<void(const std::string& path, const ir::SourceLoc& loc, bool canonical)>&
      protect_absolute;
  // The protected paths so far, asked whether a path is protected already.
  ProtectedIndex& protected_index;
  // The git directories whose symlinked `commondir` the resolver refused already.
  const std::set<std::string>& commondir_judged;
  // The host's home directory, for git's global configuration files.
  const std::string& home;
  // The caller's working directory, against which the host's git in the caller's shell takes
  // a relative $GIT_DIR.
  const std::string& cwd;
  // The caller's environment: its $GIT_DIR and $GIT_COMMON_DIR, and what names git's
  // system and global configuration files.
  const CallerEnvironment& environment;
  ir::Diagnostics& diags;
  // The git directories of the repositories above a writable root (red team A23-4), read
  // after those among the protected paths, and the tops each was found at, against which
  // git resolves its config's relative values.
  const std::vector<std::string>& enclosing_gitdirs;
  const std::map<std::string, std::vector<std::string>>& enclosing_tops;
};

// Reads every git directory among `protected_paths` (a directory with a HEAD), and each one
// they lead to (a linked worktree's, a submodule's, a local remote's), for what the host's
// git would run or read from a writable root: the common directory, the hooks, the fixed
// names git reads (remotes, branches, modules) and what the configuration names. Each such
// path is protected through `walk.protect_absolute`; what cannot be protected soundly is
// an error in `walk.diags`. `protected_paths` is read once, before anything is protected.
void protect_git_directories(const std::vector<ir::ResolvedPath>& protected_paths,
                             const GitDirectoryWalk& walk);

}  // namespace zpolicy::compiler
