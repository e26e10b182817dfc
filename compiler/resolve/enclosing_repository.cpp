#include "compiler/resolve/enclosing_repository.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "compiler/resolve/gitdir.hpp"

namespace zpolicy::compiler {

namespace {

std::string parent_of(const std::string& dir) {
  const size_t slash = dir.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
}

std::string child(const std::string& dir, const std::string& name) {
  return (dir == "/" ? std::string() : dir) + "/" + name;
}

// Whether the caller may not `mode` `path` now, and may give that access back to itself:
// `path`, or the directory on the way that denies it, is the caller's own (a `.git/config`
// at mode 0, a `.git` file the caller made unreadable). git, run by the caller once it
// did, reads what nobody protected (review R25-8); the walk refuses instead.
bool denied_for_now(const std::string& path, int mode) {
  return faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) != 0 && errno == EACCES &&
         !denied_for_good(path, mode);
}

// git run by the caller dies at a repository config it may not read (config.c
// do_git_config_sequence: access_or_die), so it runs nothing there; unless that config is
// the caller's to make readable again (denied_for_now, checked first).
bool config_denied(const std::string& gitdir) {
  const std::string config = gitdir + "/config";
  const int fd = open(config.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    return false;
  }
  return errno == EACCES;
}

// The git directory a `.git` file names; git follows a `.git` that is a symlink to one, and
// a relative name in it is relative to the directory of `.git` (setup.c
// read_gitfile_gently), not to the link's target: gitdir_named_by's rule, read by it.
NamedPath pointer_target(const std::string& top, const std::string& dot_git,
                         const struct stat& lst) {
  if (S_ISREG(lst.st_mode)) return gitdir_named_by(dot_git, top);
  char real[PATH_MAX];
  if (!realpath(dot_git.c_str(), real)) return {};
  return gitdir_named_by(real, top);
}

// What the walk cannot read and the caller may make readable (or will not read, `why`):
// refused (Unreadable).
EnclosingRepository regainable(const std::string& dir, const std::string& path,
                               const std::string& why = "") {
  return {EnclosingRepository::Shape::Unreadable, dir, path, EACCES,
          why.empty() ? std::string(std::strerror(EACCES)) +
                            ", the caller's own, which the caller or the sandbox may make "
                            "readable again"
                      : why};
}

// What git's discovery finds at `dir` itself.
std::vector<EnclosingRepository> found_at(const std::string& dir) {
  std::vector<EnclosingRepository> out;
  const std::string dot_git = child(dir, ".git");
  struct stat lst, st;
  const bool have = lstat(dot_git.c_str(), &lst) == 0;
  // Nothing there, or nothing git run by the caller could look at either (EACCES: `dir` is
  // not searchable to the caller), is no repository; any other failure (EIO, ELOOP,
  // ENAMETOOLONG, ENOMEM), and a stat of what lstat found that fails, may hide one.
  const int lstat_error = have ? 0 : errno;
  const bool stated = have && stat(dot_git.c_str(), &st) == 0;
  const int stat_error = have && !stated ? errno : 0;
  if ((!have && lstat_error != ENOENT && lstat_error != ENOTDIR && lstat_error != EACCES) ||
      (have && !stated && !S_ISLNK(lst.st_mode) && stat_error != ENOENT)) {
    out.push_back(
        {EnclosingRepository::Shape::Unreadable, dir, dot_git, have ? stat_error : lstat_error});
    return out;
  }
  if (stated) {
    if (S_ISDIR(st.st_mode)) {
      if (denied_for_now(dot_git, X_OK) || denied_for_now(dot_git + "/config", R_OK))
        out.push_back(regainable(dir, dot_git));
      else if (is_git_directory(dot_git) && !config_denied(dot_git))
        out.push_back({EnclosingRepository::Shape::GitDirectory, dir, dot_git});
    } else if (S_ISREG(st.st_mode)) {
      // One whose git directory the caller cannot look into: git run by the caller dies
      // there ("not a git repository"). One that does not exist is kept: it may be made.
      struct stat head;
      auto named = pointer_target(dir, dot_git, lst);
      if (named.refusal)
        out.push_back(regainable(dir, dot_git, *named.refusal));
      else if (named.path && (denied_for_now(*named.path + "/HEAD", F_OK) ||
                              denied_for_now(*named.path + "/config", R_OK)))
        out.push_back(regainable(dir, *named.path));
      else if (named.path &&
               !(lstat((*named.path + "/HEAD").c_str(), &head) != 0 && errno == EACCES) &&
               !config_denied(*named.path))
        out.push_back({EnclosingRepository::Shape::Pointer, dir, std::move(*named.path)});
    }
  }
  // A symlink is listed whatever it leads to now: where it leads may be a writable root,
  // where the sandbox makes the git directory (or `.git` file) git then takes. With the
  // host's `repo/.git -> app/gd` and `gd` missing or empty, the command made `gd` a git
  // directory with a pre-commit hook, and the host's next `git commit` in `repo` ran it
  // (review A23R-2).
  if (have && S_ISLNK(lst.st_mode) && out.empty())
    out.push_back({EnclosingRepository::Shape::Link, dir, dot_git});
  // A common directory needs no HEAD (A12-4): a linked worktree's git directory names it in
  // its `commondir`, and git reads its config and runs its hooks for that worktree. With
  // `--workspace C/hooks` for such a `C` (a bare repository used through `git worktree
  // add`, its HEAD gone), the command wrote the hooks the worktree's `git commit` ran
  // (attack 24's noticed item). Which git directories name it cannot be known from here:
  // its layout alone decides, so that a directory that merely holds an `objects` and a
  // `refs` is refused too, never one git would use let through.
  if (is_git_directory(dir) || has_objects_and_refs(dir))
    out.push_back({EnclosingRepository::Shape::Inside, dir, dir});
  return out;
}

}  // namespace

const std::vector<EnclosingRepository>& EnclosingRepositories::above(const std::string& dir) {
  static const std::vector<EnclosingRepository> none;
  if (dir == "/") return none;
  return at_and_above(parent_of(dir));
}

const std::vector<EnclosingRepository>& EnclosingRepositories::at_and_above(
    const std::string& start) {
  std::vector<std::string> chain;
  for (std::string at = start; !at_and_above_.contains(at); at = parent_of(at)) {
    chain.push_back(at);
    if (at == "/") break;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    std::vector<EnclosingRepository> found = found_at(*it);
    if (*it != "/") {
      const auto& up = at_and_above_.at(parent_of(*it));
      found.insert(found.end(), up.begin(), up.end());
    }
    at_and_above_.emplace(*it, std::move(found));
  }
  return at_and_above_.at(start);
}

}  // namespace zpolicy::compiler
