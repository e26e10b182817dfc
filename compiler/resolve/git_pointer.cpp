#include "compiler/resolve/git_pointer.hpp"

#include "compiler/resolve/gitdir.hpp"

namespace zpolicy::compiler {

std::string made_in_writable_root(const std::string& missing, const std::string& made,
                                  const std::string& then) {
  return missing + " does not exist, and the kernel would create it at '" + made +
         "', in a writable root: the sandbox could make it, and " + then + "; refusing to run";
}

FollowedGitPointer follow_git_pointer(const std::string& file, const std::string& dir,
                                      const std::string& what, const GitPointerWalk& walk,
                                      const std::function<void(const std::string&)>& refuse) {
  const NamedPath read = gitdir_named_by(file, dir);
  const std::string as = what + ": the git directory named by '" + file + "'";
  // One zpolicy cannot read, the caller's own, names a git directory once the caller makes
  // it readable again (review R25-8).
  if (read.refusal) {
    refuse(as + ": " + *read.refusal + "; refusing to run");
    return {true, std::nullopt};
  }
  const auto& named = read.path;
  if (!named) return {};
  const auto gitdir = walk.canonical_or_refuse(*named, as);
  if (!gitdir) return {true, std::nullopt};
  if (const auto made = walk.created_in_guard(*gitdir, as)) {
    refuse(made_in_writable_root(as + " '" + *named + "'", *made,
                                 "the host's git would enter it and run its hooks and the "
                                 "commands its config names"));
    return {true, std::nullopt};
  }
  walk.protect(*gitdir);
  return {true, gitdir};
}

}  // namespace zpolicy::compiler
