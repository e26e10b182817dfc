#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

namespace zpolicy::compiler {

// The first line of the regular file `path`, for a `#!` line (at most 4 KiB: the kernel
// reads no more of one), trailing CR and spaces removed;
// none for anything but a regular file, which is never opened (nor a symlink followed).
std::optional<std::string> first_line_of(const std::string& path);

// What git takes from a file that names one path: a `.git` file's `gitdir: ` line, a git
// directory's `commondir`, a linked worktree's administrative `gitdir`. git reads each one
// whole and strips only its trailing '\n' and '\r' (setup.c read_gitfile_gently, up to
// 1 MiB, and get_common_dir_noenv; worktree.c strips every trailing space of the last):
// `gitdir: /x/gd ` names `/x/gd `, and a second line is part of the name. `path`: the
// name, made absolute against the file's directory, still to be canonicalized by the caller
// with the rules of every protected path; none where git takes none (nothing there, no
// regular file: a FIFO, socket or device is never opened, a symlink never followed; no
// `gitdir: `; a file git run by the caller cannot read either). `refusal`: why zpolicy
// will not say what git takes, for the caller to refuse: a file larger than 1 MiB, one
// holding a NUL (git stops the name there; no such file is git's), one that cannot be
// read for another reason than another user's permissions (the caller's own at mode 0 is
// the caller's, or the sandbox's running as the caller, to chmod back: review R25-8).
inline constexpr size_t kGitPathFileMaxBytes = 1 << 20;
struct NamedPath {
  std::optional<std::string> path;
  std::optional<std::string> refusal;
};

// The git directory a `.git` pointer file (worktree, submodule) names, made absolute
// against the pointer's directory.
NamedPath gitdir_named_by(const std::string& pointer);

// The same for a `.git` that git looked up as `dir`/.git and found to be a symlink to the
// regular file `file` (a canonical path): a relative name is made absolute against `dir`,
// the directory git looked in, never against the directory of the link's target (setup.c
// read_gitfile_gently joins it to the name git looked up; path.c enter_repo alike).
NamedPath gitdir_named_by(const std::string& file, const std::string& dir);

// The common directory a linked worktree's git directory (one with a HEAD) names in its
// `commondir` file (where git reads config, hooks, objects and refs for it), made
// absolute against `gitdir`, by the same rules; none when there is none. A `commondir`
// that is a symlink is not read: git reads through it, so whoever may write what it
// points at chooses the common directory; `link` says so, for the caller to refuse.
struct CommonDir {
  std::optional<std::string> path;
  bool link = false;
  std::optional<std::string> refusal = {};  // as NamedPath's
};
CommonDir commondir_named_by(const std::string& gitdir);

// Whether the caller lacks `mode` (R_OK, X_OK) on `path` for good: `path`, or the first
// directory on the way to it the caller may not search, is another user's. One of the
// caller's own is the caller's to chmod back, and the sandbox's, which runs as the caller
// (red team A14B-5, review R25-8). False where the caller has that access.
bool denied_for_good(const std::string& path, int mode);

// Whether git takes `dir` for a git directory: it has a HEAD (a file, or a symlink in old
// repositories).
bool has_git_head(const std::string& dir);

// What git makes of the HEAD at `path` (looked at without following a link) when it tests its
// directory for a git directory (setup.c validate_headref). Taken: a symlink whose target
// starts with `refs/`, a regular file saying `ref: refs/…` or starting with an object name
// (hex digits). Could: something git would open whose content is the writer's to choose (a
// FIFO, a device), or a regular file zpolicy cannot read for another reason than the caller's
// permission. None: missing, a directory, or a file git rejects (the caller keeps each so by
// protecting the name), or one the caller may not read (git run by the caller cannot either).
enum class GitHead { None, Taken, Could };
GitHead git_head_at(const std::string& path);

// Whether `dir` holds an `objects` and a `refs` that access(2) finds searchable: all git
// asks of a common directory, which a linked worktree's git directory names in its
// `commondir` (setup.c is_git_directory, through get_common_dir): it needs no HEAD, and git
// reads its config and runs its hooks for that worktree (A12-4).
bool has_objects_and_refs(const std::string& dir);

// Whether git takes `dir` for a repository's git directory as upload-pack and
// receive-pack do (setup.c is_git_directory): a HEAD, and an `objects` and a `refs` that
// access(2) finds searchable, or a `commondir` file naming where they are.
bool is_git_directory(const std::string& dir);

// The names git's enter_repo (path.c) tries, in order, for a local repository `path` a
// remote URL names: `path/.git`, `path`, `path.git/.git`, `path.git`. The first that is a
// git directory, or a regular file (a `.git` pointer), is the repository.
std::vector<std::string> enter_repo_candidates(const std::string& path);

// The worktree a linked worktree's administrative directory (`<common>/worktrees/<id>`)
// belongs to: the directory of the `.git` file its `gitdir` file names; none without one.
NamedPath worktree_of_admin_dir(const std::string& admin);

// The entries of `dir`, a directory whose entries git reaches by name (`modules` and the
// levels below it, `remotes`, `branches`, `worktrees`), but `.` and `..`, in name order.
// `error` (an errno) is set where it is there and cannot be listed, or its listing fails
// part way: git reaches what it holds with search permission alone, so one zpolicy cannot
// list (the caller's uid against another user's 0711) hides the files git reads there, and
// the caller refuses with unlistable_git_level() (review A23R-3, red team A24-3). Nothing
// there (ENOENT, ENOTDIR) holds nothing, and so does one the caller cannot even search
// (EACCES, and no search permission on it or on the way): git, run by the caller, cannot
// reach what it holds either, and the sandbox, with the caller's rights or fewer, cannot
// change that.
struct GitLevel {
  std::vector<std::string> names;
  int error = 0;
};
GitLevel list_git_level(const std::string& dir);

// Why a run is refused where list_git_level(`dir`) failed with `error`: git reaches `what`
// ("the submodules' git directories below", "the legacy remote files in") there by name.
// Without "; refusing to run".
std::string unlistable_git_level(const std::string& dir, const std::string& what, int error);

// Whether `error`, met looking at an entry of the directory `dir` that a listing gave
// (lstat), means nothing git run by the caller reaches is there: the entry vanished
// (ENOENT), or the caller may list `dir` but not search it (EACCES, and no search
// permission), which git run by the caller meets too. Any other failure (a name too long
// for a path, an I/O error) hides what git may read or run there: the caller refuses.
bool entry_unreachable(const std::string& dir, int error);

// The administrative directories of a common directory's linked worktrees: the
// directories and symlinks in `<common>/worktrees`, as named there (git reads through a
// symlink; the caller canonicalizes each). A linked worktree's `.git` file names
// `worktrees/<id>`, which git reaches by name, and reads its `config.worktree` there:
// `error` (an errno) is set where list_git_level() sets it, or where an entry is there and
// cannot be looked at for another reason than the caller's missing search permission on
// `worktrees` (which git run by the caller lacks too); `unreadable` names what failed.
// The caller refuses.
struct AdminDirs {
  std::vector<std::string> dirs;
  int error = 0;
  std::string unreadable;
};
AdminDirs linked_worktree_admin_dirs(const std::string& common);

// The symlinks directly in `dir` (a hooks directory), each with the text it holds, in
// name order; none when nothing is at `dir` or it is no directory. `unreadable` names
// what exists and could not be looked at (a directory that cannot be listed or whose
// listing fails part way, an entry whose lstat fails, a link that cannot be read): the
// caller refuses, since git may run what it holds (red team A14B-5). Not an entry that
// vanished (ENOENT), nor one of a directory the caller may list but not search (EACCES),
// nor a directory the caller cannot even search (list_git_level's rule): git, run by the
// caller, cannot reach it either.
struct DirLink {
  std::string path, target;
};
struct DirLinks {
  std::vector<DirLink> links;
  std::optional<std::string> unreadable;
};
DirLinks symlinks_in(const std::string& dir);

// A git config file read for resolution, by the rules of the pointer files: lstat says
// regular file (Missing: nothing there; Directory: git reads nothing from it, and dies
// reading a config file that is one; Other: a symlink, FIFO, socket or device, never
// opened), then O_NONBLOCK|O_NOFOLLOW and fstat; Unreadable when that fails or finds
// another file than lstat did (opened_config_status), TooLarge above kGitConfigMaxBytes.
inline constexpr size_t kGitConfigMaxBytes = 1 << 20;
struct GitConfigFile {
  // Denied: the caller may not read it or search a directory above it (EACCES).
  enum class Status { Read, Missing, Directory, Other, Unreadable, Denied, TooLarge };
  Status status = Status::Missing;
  std::string text;
};
GitConfigFile read_git_config_file(const std::string& path);

// What the open of a config file that lstat found a regular file (`named`) gave, by its
// fstat (`opened`): Read where it is that file, Unreadable (the caller refuses) where the
// name was swapped in between, whatever for. A directory swapped in was read as
// "Directory", nothing, though git may read the file that was there, or is put back, with
// its content (tidy 25): a disagreement never reads as less than git would read.
GitConfigFile::Status opened_config_status(const struct stat& named, const struct stat& opened);

}  // namespace zpolicy::compiler
