#pragma once

#include <map>
#include <string>
#include <vector>

namespace zpolicy::compiler {

// A repository whose worktree holds a directory from above (red team A23-4): in a monorepo
// run with the workspace `repo/app`, `repo/.git/config`'s `core.hooksPath = app/hooks`
// names a directory the sandbox writes, and the host's next `git commit` anywhere in the
// monorepo runs what it wrote there. Its git directory is read as a protected one is.
struct EnclosingRepository {
  enum class Shape {
    // `top/.git` is a git directory (or a symlink to one); `gitdir` is `top/.git`.
    GitDirectory,
    // `top/.git` is a `.git` file (a linked worktree, a submodule); `gitdir` is what it
    // names, made absolute, still to be canonicalized.
    Pointer,
    // `top/.git` is a symlink that leads to no git directory or `.git` file git would use
    // (dangling, an empty directory, one the caller cannot read): git does not take it
    // now, but the sandbox may make one where it leads; `gitdir` is `top/.git`.
    Link,
    // `top` is itself a git directory (a bare repository, or a `.git` the directory lies
    // in), or a common directory a linked worktree's git directory may name (an `objects`
    // and a `refs`, no HEAD needed): the directory is inside a git directory, whose config
    // and hooks git reads.
    Inside,
    // `top/.git` cannot be looked at (`error`: an lstat or stat error other than its
    // absence, or EACCES where the caller cannot search `top`): git may find a repository
    // there; `gitdir` is `top/.git`. The caller refuses (review R24-5). Also a `.git`, its
    // `config`, the `.git` file or the git directory it names that the caller may not read
    // now and may make readable again, its own (`gitdir`: what is denied; review R25-8),
    // and a `.git` file zpolicy will not read (`refusal` says why).
    Unreadable,
  };
  Shape shape;
  std::string top;
  std::string gitdir;
  int error = 0;
  std::string refusal = {};
};

// The repositories above directories, found as git's discovery (setup.c,
// setup_git_directory_gently_1) tests each directory on the way up: `DIR/.git` a git
// directory or a `.git` file, or DIR itself a git directory. Every one up to `/` is
// listed, not only the nearest: the host's git runs in each of their worktrees, and each
// config may name a path below. Neither GIT_CEILING_DIRECTORIES nor a filesystem boundary
// stops the walk: they stop git's discovery from the directory below, not a git started in
// the repository above, which is the one that runs the hook. A `.git` (or the git
// directory a `.git` file names) the caller cannot look into is no git directory to git
// run by the caller either, and is not listed; one whose `config` the caller cannot read
// is left out too, since git run by the caller dies there before it runs anything
// (`unable to access '.git/config'`). A `.git` symlink is listed whatever it leads to
// (Shape::Link when git takes nothing there now): the sandbox may make what it leads to.
class EnclosingRepositories {
 public:
  // The repositories strictly above the absolute, canonical `dir`, nearest first. Each
  // directory is looked at once per object, whatever the directories asked about.
  const std::vector<EnclosingRepository>& above(const std::string& dir);
  // The repositories at the absolute, canonical `dir` and above it, nearest first: those
  // above a directory spelled through host links are those at and above the canonical
  // form of each directory the spelling names on the way up (red team A23C-4).
  const std::vector<EnclosingRepository>& at_and_above(const std::string& dir);

 private:
  // The repositories at a directory and above it, by directory.
  std::map<std::string, std::vector<EnclosingRepository>> at_and_above_;
};

}  // namespace zpolicy::compiler
