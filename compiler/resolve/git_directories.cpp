#include "compiler/resolve/git_directories.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>

#include "compiler/resolve/git_command_words.hpp"
#include "compiler/resolve/git_config_environment.hpp"
#include "compiler/resolve/git_config_files.hpp"
#include "compiler/resolve/git_config_keys.hpp"
#include "compiler/resolve/git_config_targets.hpp"
#include "compiler/resolve/git_pointer.hpp"
#include "compiler/resolve/git_start_directory.hpp"
#include "compiler/resolve/gitdir.hpp"
#include "compiler/resolve/link_free_stat.hpp"

namespace zpolicy::compiler {
namespace {

using ir::HostKind;
using ir::ResolvedPath;

// Entries looked at below a git directory's `modules` on the way to the submodules' git
// directories (each a name's components; a git directory found is not listed further).
constexpr size_t kMaxSubmoduleEntries = 4096;

// The walk's state: what the resolver gave it (GitDirectoryWalk) and the git directories
// found so far.
struct GitDirectories {
  explicit GitDirectories(const GitDirectoryWalk& walk)
      : walk(walk),
        h(walk.h),
        guards(walk.guards),
        protect_absolute(walk.protect_absolute),
        protected_index(walk.protected_index),
        commondir_judged(walk.commondir_judged),
        diags(walk.diags) {}

  void read(const std::vector<ResolvedPath>& protected_paths);
  void read_git_directory(const std::string& dir);
  void read_scheduled_repositories();
  bool read_work_tree();
  void read_environment_git_directories();
  // A path the caller's environment gives, as spelled there and as git takes it.
  struct EnvironmentPath {
    std::string spelled, lexical;
  };
  std::optional<EnvironmentPath> environment_path(const std::string& name) const;
  void protect_environment_trace_files();
  void read_linked_worktrees(const std::string& common);
  std::optional<std::string> git_target(const std::string& lexical, const ir::SourceLoc& loc,
                                        const std::string& named_by);
  std::optional<std::string> common_directory(const std::string& dir);
  std::vector<std::string> worktree_tops(const std::string& dir,
                                         const std::optional<std::string>& linked_top) const;
  void protect_config_targets(const std::vector<GitConfigTarget>& targets,
                              std::vector<GitConfigTarget>& hook_dirs);
  void protect_git_target(const std::string& path, const ir::SourceLoc& loc);
  bool writable(const std::string& path) const;
  void protect_repository(const GitConfigTarget& t);
  // What one name enter_repo tries for a URL is: refused (nothing is protected), not the
  // repository (the next is tried), or the last one tried (the repository, where one is).
  enum class RepositoryName { Refused, Next, Last };
  RepositoryName try_repository_name(const std::string& name, const GitConfigTarget& t,
                                     std::vector<std::string>& names,
                                     std::optional<std::string>& gitdir);
  RepositoryName repository_of_pointer(const std::string& name, const std::string& file,
                                       const GitConfigTarget& t,
                                       std::optional<std::string>& gitdir);
  void protect_discovered_repository(const GitConfigTarget& t);
  std::optional<std::string> discovered_at(const std::string& d, const GitConfigTarget& t,
                                           bool& stop);
  void read_populated_submodule(const GitConfigTarget& t);
  void judge_rewrite_base(const GitConfigTarget& t);
  bool refused_where_made(const std::string& path, const ir::SourceLoc& loc,
                          const std::string& what, const std::string& missing,
                          const std::string& then);
  std::optional<std::string> fixed_name(const std::string& lexical, const std::string& what);
  void read_submodule_git_directories(const std::string& common);
  void protect_linked_hooks(const std::vector<GitConfigTarget>& hook_dirs);
  void protect_config_and_hooks(const GitConfigSources& src,
                                std::vector<GitConfigTarget> hook_dirs);
  void protect_symlink_targets_in(const std::string& dir);
  void protect_linked_worktree_pointer(const std::string& admin, const std::string& top);
  GitPointerWalk pointer_walk(const ir::SourceLoc& loc);
  std::function<void(const std::string&)> refusal(const ir::SourceLoc& loc);

  const GitDirectoryWalk& walk;
  const HostWalks& h;
  const std::vector<ResolvedPath>& guards;
  const std::function<void(const std::string&, const ir::SourceLoc&, bool)>& protect_absolute;
  ProtectedIndex& protected_index;
  const std::set<std::string>& commondir_judged;
  ir::Diagnostics& diags;
  // The git directories to read, in the order found: read() and the walks it calls
  // append to it.
  std::vector<std::string> gitdirs;
  // The caller's system and global config files, read before each git directory's own.
  std::vector<std::string> global_git_configs;
  // The settings the caller's environment gives every git of the caller's shell, read with
  // each git directory's files and the global ones.
  std::vector<GitEnvironmentSetting> environment_settings;
  // What the config files of every git directory read so far cost, against the bounds.
  GitConfigReads git_reads;
  // The worktrees git enters a git directory from, by that git directory, for those the
  // walk found (a populated submodule's, where the host's `git status` runs `git status`; a
  // scheduled maintenance's repository): git resolves the relative values of that git
  // directory's config against them.
  std::map<std::string, std::vector<std::string>> entered_tops;
  // `$GIT_WORK_TREE` of the caller's environment, canonical (read_work_tree).
  std::optional<std::string> work_tree;
  // Set when `$GIT_DIR` is not: then `work_tree` is the top of whatever repository the host's
  // git in the caller's shell discovers, so of every git directory read.
  bool work_tree_of_every_repository = false;
};

void GitDirectories::read(const std::vector<ResolvedPath>& protected_paths) {
  // What a protected git directory's configuration names in a writable root is as good as
  // its config: the host's next git command runs the hooks in core.hooksPath, reads the
  // included files as config and runs the commands its values name (red team A13-3).
  // Each such file or directory is protected too (a placeholder when missing); a config
  // zpolicy cannot read soundly refuses the run. By index: linked worktrees' git
  // directories join the list. "In a writable root" is judged below by the guards, every
  // name the host's mounts give a writable root too: with `mount --bind /srv/data WS/mnt`,
  // a `core.hooksPath` of `/srv/data/hooks` through a link planted there was followed, and
  // the command replaced the link by hooks of its own (red team A21C-4).
  for (const auto& p : protected_paths)
    if (p.kind == HostKind::Directory && has_git_head(p.path)) gitdirs.push_back(p.path);
  gitdirs.insert(gitdirs.end(), walk.enclosing_gitdirs.begin(), walk.enclosing_gitdirs.end());
  GitConfigFilesOutside outside = git_config_files_outside(walk.home, walk.environment);
  if (outside.refusal) {
    diags.error({"<host>", 0, 0}, *outside.refusal + "; refusing to run");
    return;
  }
  global_git_configs = std::move(outside.files);
  GitEnvironmentSettings exported = git_config_environment(walk.environment);
  if (exported.refusal) {
    diags.error({"<host>", 0, 0}, *exported.refusal + "; refusing to run");
    return;
  }
  environment_settings = std::move(exported.settings);
  // Each git directory read, with the count of submodule worktrees it was read with: one
  // found a populated submodule's after it was read (a git directory of the workspace
  // `app/x/.git` that the repository above's `lib/.git` names) is read again with them. Read
  // once with its own worktree `app/x` only, its `core.fsmonitor = ../app/fsm.sh` was
  // protected at `app/app/fsm.sh`, and the host's `git status` in the repository above ran
  // `app/fsm.sh`, the command's, in `lib` (red team A24D-2). Tops only grow, and are
  // finitely many, so this ends.
  std::map<std::string, size_t> read_with;
  if (!read_work_tree()) return;
  read_scheduled_repositories();
  read_environment_git_directories();
  for (size_t i = 0; i < gitdirs.size(); ++i) {
    // Past the bound over every git directory the run is refused once; reading more of
    // them would only repeat that.
    if (git_reads.reads > kGitConfigMaxReadsInAll || git_reads.bytes > kGitConfigMaxBytesInAll ||
        git_reads.shared_bytes > kGitConfigMaxSharedBytesInAll)
      break;
    const std::string dir = gitdirs[i];
    const auto tops = entered_tops.find(dir);
    const size_t submodules = tops == entered_tops.end() ? 0 : tops->second.size();
    const auto [at, first] = read_with.try_emplace(dir, submodules);
    if (!first && at->second >= submodules) continue;
    at->second = submodules;
    read_git_directory(dir);
  }
}

// `$GIT_WORK_TREE` of the caller's environment, which git takes for the top of the
// repository `$GIT_DIR` names or, without `$GIT_DIR`, of the one it discovers from the
// directory it is started in (setup.c: setup_discovered_git_dir and setup_bare_git_dir go
// to setup_explicit_git_dir when the variable is set). Then it is a top of every git
// directory read, and the caller's system and global files resolve their relative values
// there for any repository: with `GIT_WORK_TREE=WS/sub` exported and `core.hooksPath =
// .husky`, the host's `git commit` in the workspace ran `sub/.husky/pre-commit`, which the
// command wrote (owner question 16). False when the run is refused.
bool GitDirectories::read_work_tree() {
  const auto value = environment_path("GIT_WORK_TREE");
  if (!value) return true;
  // Exported alone, it is the top of whatever repository the host's git in the caller's
  // shell discovers, and a relative one names another top in each directory git runs in:
  // with `core.hooksPath = .husky`, every `DIR/.husky` in a writable root was a hook
  // directory for a `cd DIR && git commit` there (red team A28D-3). Which directories that
  // shell runs git in is no question zpolicy can answer, so refused, as a relative
  // `$GIT_CONFIG_GLOBAL` is (git_config_files.cpp). With `$GIT_DIR` (the shape git gives
  // its hooks) the repository is fixed and the value is taken against the working directory.
  if (!value->spelled.starts_with("/") && !environment_path("GIT_DIR")) {
    diags.error({"$GIT_WORK_TREE", 0, 0},
                "$GIT_WORK_TREE is the relative path '" + value->spelled +
                    "' without $GIT_DIR: the host's git in the caller's shell takes it, from "
                    "the directory it runs in, as the top of whatever repository it finds "
                    "there, perhaps in a writable root: make it absolute; refusing to run");
    return false;
  }
  work_tree = h.canonical_or_refuse(value->lexical, {"$GIT_WORK_TREE", 0, 0}, "$GIT_WORK_TREE");
  work_tree_of_every_repository = !environment_path("GIT_DIR");
  return work_tree.has_value();
}

// The git directory and common directory the caller's environment names (`$GIT_DIR`,
// `$GIT_COMMON_DIR`), which the host's git in the caller's shell uses from any directory,
// after the run as before it: protected wherever they lie (a placeholder where missing),
// and read when they are git directories. Missing in the workspace, `GIT_DIR=WS/meta.git`
// let the command make one with `core.worktree` and `core.fsmonitor`, and the host's `git
// status` in that shell ran it (red team A25C-2). A relative one (`.git`, as git gives its
// hooks) is taken against the caller's working directory, where a run started from a hook
// is; git in that shell elsewhere takes it from there, the limit of every relative name.
// Read as git reads it (red team A26-1, A26-2): a `.git` file given as `$GIT_DIR` is
// followed (setup.c setup_explicit_git_dir reads it with read_gitfile), and its worktree's
// top is `$GIT_WORK_TREE`, or else (without core.worktree) the directory git is started in,
// which git does not leave: `$GIT_WORK_TREE` and the caller's working directory are tops.
void GitDirectories::read_environment_git_directories() {
  std::vector<std::string> started_in{walk.cwd};
  if (work_tree) started_in.push_back(*work_tree);
  for (const std::string name : {"GIT_DIR", "GIT_COMMON_DIR"}) {
    const auto value = environment_path(name);
    if (!value) continue;
    const std::string& lexical = value->lexical;
    const std::string what = "$" + name;
    const ir::SourceLoc at{what, 0, 0};
    const auto c = git_target(lexical, at, what);
    if (!c || refused_where_made(*c, at, what, what + " '" + value->spelled + "'",
                                 "the host's git in the caller's shell would enter it and run "
                                 "its hooks and the commands its config names"))
      continue;
    protect_git_target(*c, at);
    std::optional<std::string> gitdir = c;
    // A `.git` file's name is taken against the directory of `$GIT_DIR` as git was given it
    // (read_gitfile_gently), through its links. Not followed, `GIT_DIR=BASE/meta` saying
    // `gitdir: WS/gd.git` (missing) let the command make that git directory with
    // `core.fsmonitor`, which the host's `git status` in that shell ran (red team A26-1).
    if (struct stat st; name == "GIT_DIR" && stat_without_links(*c, st) && S_ISREG(st.st_mode)) {
      const std::string spelled_in = lexical.substr(0, std::max<size_t>(lexical.rfind('/'), 1));
      const auto in = h.canonical_or_refuse(spelled_in, at, what);
      if (!in) continue;
      gitdir = follow_git_pointer(*c, *in, what, pointer_walk(at), refusal(at)).gitdir;
    }
    if (!gitdir || !is_git_directory(*gitdir)) continue;
    // With `GIT_DIR=R/.git` exported in `R/app`, the host's `git commit` there ran
    // `app/.husky/pre-commit`, the command's, for `core.hooksPath = .husky` (red team A26-2).
    // Not the git directory itself, a top already (A24E-1): `GIT_DIR=.` in a bare
    // repository's hook, started there, stays judged as that repository alone.
    auto& tops = entered_tops[*gitdir];
    for (const auto& top : started_in)
      if (top != *gitdir && std::find(tops.begin(), tops.end(), top) == tops.end())
        tops.push_back(top);
    gitdirs.push_back(*gitdir);
  }
  // The index `$GIT_INDEX_FILE` names, from which the host's git in that shell takes the
  // repository's entries, its gitlinks too: git enters each submodule they record (`git
  // status` runs `git status` there). Protected wherever it lies, as `$GIT_DIR`: with
  // `GIT_INDEX_FILE=WS/idx`, the command recorded `lib` there, a repository it made with
  // `core.fsmonitor`, and the host's `git status` in the workspace ran it (red team A26-5).
  if (const auto index = environment_path("GIT_INDEX_FILE")) {
    const std::string what = "$GIT_INDEX_FILE";
    const ir::SourceLoc at{what, 0, 0};
    const auto c = git_target(index->lexical, at, what);
    if (c && !refused_where_made(*c, at, what, what + " '" + index->spelled + "'",
                                 "the host's git in the caller's shell would read its entries"))
      protect_git_target(*c, at);
  }
  protect_environment_trace_files();
}

// The path the caller's environment gives in `name` (none when unset or empty): a relative
// one is taken against the caller's working directory (read_environment_git_directories
// says why).
std::optional<GitDirectories::EnvironmentPath> GitDirectories::environment_path(
    const std::string& name) const {
  auto value = walk.environment.get(name);
  if (!value || value->empty()) return std::nullopt;
  std::string lexical = value->starts_with("/") ? *value : walk.cwd + "/" + *value;
  return EnvironmentPath{std::move(*value), std::move(lexical)};
}

// The files git writes its traces to by the caller's environment: every `$GIT_TRACE*` whose
// value names one (git_trace_path). Protected wherever they lie, as `$GIT_INDEX_FILE`: with
// GIT_TRACE=WS/trace.log the command made it a link to a file outside every writable root, and the
// host's next git in that shell appended to that file (red team A26C-1).
void GitDirectories::protect_environment_trace_files() {
  for (const std::string& entry : walk.environment.entries()) {
    const std::string_view var = entry;
    const size_t eq = var.find('=');
    if (eq == std::string_view::npos || !var.starts_with("GIT_TRACE")) continue;
    const auto path = git_trace_path(var.substr(eq + 1));
    if (!path) continue;
    const std::string what = "$" + std::string(var.substr(0, eq));
    const ir::SourceLoc at{what, 0, 0};
    const auto c = git_target(*path, at, what);
    if (c && !refused_where_made(*c, at, what, what + " '" + *path + "'",
                                 "the host's git in the caller's shell would write its trace "
                                 "wherever the sandbox pointed it"))
      protect_git_target(*c, at);
  }
}

// The repositories git's scheduled maintenance runs git in (`maintenance.repo` in the
// caller's system and global config, which `git maintenance register` and `start` add),
// whether or not any git directory is read: with no repository in or above the workspace,
// `maintenance.repo = WS/pkg` (a plain directory) let the command make `pkg` a repository
// whose config the host's next scheduled maintenance obeyed (red team A25-1). Their git
// directories join `gitdirs`. The files read are protected as every config file is, and
// what they include: read only along with a git directory, a `~/.gitconfig` including
// `WS/team.gitconfig` left that file to a command in a workspace without repositories, which
// wrote `core.fsmonitor` there for the host's next `git status` anywhere (red team A25-4).
// Their relative values are taken against an exported `$GIT_WORK_TREE` (read_work_tree) as
// well, the top of a repository anywhere on the host, which no git directory read stands for.
void GitDirectories::read_scheduled_repositories() {
  GitConfigSources src{"", global_git_configs, {}, global_git_configs.size()};
  src.scheduled = true;
  src.environment = environment_settings;
  if (work_tree_of_every_repository) src.tops.push_back(*work_tree);
  protect_config_and_hooks(src, {});
}

// One git directory: its config files with the caller's system and global ones, its
// common directory, linked worktrees, hooks and the fixed names git runs code from.
void GitDirectories::read_git_directory(const std::string& dir) {
  // The system and global files first, as git reads them before the repository's own
  // (red team R18-6): a relative core.hooksPath there resolves against each worktree
  // top, and an include there may name a file in a writable root.
  GitConfigSources src{dir, global_git_configs, {}, global_git_configs.size()};
  src.files.push_back(dir + "/config");
  src.files.push_back(dir + "/config.worktree");
  src.environment = environment_settings;
  const std::optional<std::string> common_dir = common_directory(dir);
  if (!common_dir) return;
  const std::string& common = *common_dir;
  if (common != dir) {
    src.files.push_back(common + "/config");
    src.files.push_back(common + "/config.worktree");
  }
  // Where git runs `dir`'s hooks and reads its config, refs and objects: protected whole,
  // as protect_common_directories protects those of the protected paths (A12-4). Only its
  // config files were, for a git directory this walk found: a remote's `/srv/r.git`
  // naming `WS/common`, a `.git` file above naming `app/gd` whose `commondir` is
  // `app/common`; the command wrote `common/hooks/post-receive` (or `pre-commit`) and the
  // host's `git push` (`git commit`) ran it (red team A24-6). Outside every writable root
  // too, where that only records it for the searches of its other names (hard links, the
  // host's mounts): with the host's `ln mono/.git/hooks/pre-commit wt/app/pc` (`wt` a
  // linked worktree of `mono`, the workspace `wt/app`), or `ln /srv/r.git/hooks/post-receive
  // WS/pr` (`/srv/r.git` a remote), the command rewrote the hook through its other name and
  // the host's `git commit` (`git push`) ran it (review R24-1). A no-op where a protected
  // path covers it already.
  protect_git_target(common, {common == dir ? dir : dir + "/commondir", 0, 0});
  // A common directory with a HEAD is a git directory too, of the main worktree (its parent
  // when it is named `.git`, or its core.worktree), where git resolves its config's relative
  // values as well (A24E-1: every git directory is a top). Read only with the linked
  // worktree's tops, `core.hooksPath = ../x/wt/h` in `mono/.git/config` was taken against
  // `x/wt` and `mono/.git/worktrees/wt`, never `mono`; with the workspace `x/wt`, the
  // command wrote `h/pre-commit` and the host's `git commit` in `mono` ran it (review R25-3).
  if (common != dir && has_git_head(common)) gitdirs.push_back(common);
  read_linked_worktrees(common);
  // The worktree `dir/gitdir` names, read once: where the config's relative values are taken
  // and whose `.git` file is protected are then one worktree, whatever writes that file
  // meanwhile.
  const NamedPath linked = worktree_of_admin_dir(dir);
  // One zpolicy cannot read, the caller's own, names the worktree git runs in once it is
  // readable again (review R25-8).
  if (linked.refusal)
    diags.error({dir + "/gitdir", 0, 0},
                "git reads the linked worktree's '.git' file's name from '" + dir +
                    "/gitdir', and " + *linked.refusal + "; refusing to run");
  src.tops = worktree_tops(dir, linked.path);
  if (linked.path) protect_linked_worktree_pointer(dir, *linked.path);
  src.stays_where_started =
      git_stays_where_started(dir, common, src.tops, [&](const std::string& path) {
        const Canonical c = h.canonicalize(path);
        return c.stop == Canonical::Stop::None ? std::optional<std::string>(c.path) : std::nullopt;
      }).value_or("");
  // A bare repository runs its hooks and commands in the git directory itself, and every
  // repository runs its push hooks there (receive-pack enters the git directory: githooks(5),
  // "always executed in $GIT_DIR"), so a relative `core.hooksPath` is taken against it too:
  // a non-bare remote `/srv/repo` saying `core.hooksPath = ../../../ws/hooks` had
  // `/srv/repo/../../../ws/hooks` protected, and the host's `git push` ran the
  // `post-receive` the command wrote in `ws/hooks` (red team A24E-1).
  if (std::find(src.tops.begin(), src.tops.end(), dir) == src.tops.end()) src.tops.push_back(dir);
  std::vector<GitConfigTarget> hook_dirs;
  if (const auto c = fixed_name(common + "/hooks", "git's hooks directory"))
    hook_dirs.push_back({*c, {common + "/hooks", 0, 0}, true, false, false, false, {}});
  // The other fixed names whose content makes git run code: the legacy remotes files
  // (`remotes/<r>`, `branches/<r>`: a URL whose receive-pack hooks `git push` runs) and
  // the submodules' git directories (`modules/<name>`, which `git submodule update`
  // takes over as they are, hooks and config). With the host's `.git/remotes ->
  // ../.remotes`, the command wrote `.remotes/origin` naming a repository of its own and
  // the host's `git push origin` ran its post-receive hook; with `.git/modules ->
  // ../.mods`, it made `.mods/sub` and the host's `git submodule update --init` ran its
  // post-checkout hook (red team A22F-1).
  for (const char* name : {"/remotes", "/branches"})
    fixed_name(common + name, "git's '" + std::string(name + 1) + "' directory");
  read_submodule_git_directories(common);
  protect_symlink_targets_in(dir);
  if (common != dir) protect_symlink_targets_in(common);
  protect_config_and_hooks(src, std::move(hook_dirs));
}

// What the config files of `src` name (git_config_targets), protected, and the hooks linked
// from each hook directory among them and in `hook_dirs`.
void GitDirectories::protect_config_and_hooks(const GitConfigSources& src,
                                              std::vector<GitConfigTarget> hook_dirs) {
  protect_config_targets(
      git_config_targets(
          src, walk.home,
          [this](const std::string& lexical, const ir::SourceLoc& loc,
                 const std::string& named_by) { return git_target(lexical, loc, named_by); },
          [this](const ir::SourceLoc& loc, const std::string& why) {
            diags.error(loc, why + "; refusing to run");
          },
          git_reads),
      hook_dirs);
  protect_linked_hooks(hook_dirs);
}

// The linked worktrees' git directories of the common directory `common` (`worktrees/<id>`,
// each reached by name), which join the git directories to read.
void GitDirectories::read_linked_worktrees(const std::string& common) {
  const AdminDirs admins = linked_worktree_admin_dirs(common);
  if (admins.error)
    diags.error(
        {admins.unreadable, 0, 0},
        (admins.unreadable == common + "/worktrees"
             ? unlistable_git_level(admins.unreadable,
                                    "the linked worktrees' git directories below", admins.error)
             : "git reaches the linked worktree's git directory '" + admins.unreadable +
                   "' by name, and zpolicy cannot look at it (" + std::strerror(admins.error) +
                   ") to read it") +
            "; refusing to run");
  for (const auto& admin : admins.dirs)
    if (const auto c = fixed_name(admin, "linked worktree's git directory"); c && has_git_head(*c))
      gitdirs.push_back(*c);
}

// The canonical name of what a git config names (`named_by`). A symlink in a writable root
// on the way refuses, as for every protected path, saying why here: the sandbox can re-point it,
// and a virtual environment's interpreter
// (`.venv/bin/python`, a symlink) loads code from the environment, which it can write
// too (red team A14B-7).
std::optional<std::string> GitDirectories::git_target(const std::string& lexical,
                                                      const ir::SourceLoc& loc,
                                                      const std::string& named_by) {
  const Canonical c = h.canonicalize(lexical);
  if (c.stop != Canonical::Stop::SymlinkInWritableRoot)
    return h.canonical_or_refuse(lexical, loc, named_by + " names");
  diags.error(loc, named_by + " names '" + lexical + "', which passes through the symlink '" +
                       c.at + "' in a writable root: the sandbox could re-point it, and git " +
                       "on the host would run or read what it chose (an interpreter of a " +
                       "virtual environment in the workspace also loads code the sandbox " +
                       "can write); name a path outside every writable root (the link's " +
                       "target), or run that git command outside the sandbox; refusing to run");
  return std::nullopt;
}

// The tops of the worktrees the git directory `dir` was found in, where git started in one
// of them runs its hooks and commands and resolves its config's relative values;
// `linked_top` is the linked worktree its `gitdir` file names (worktree_of_admin_dir).
std::vector<std::string> GitDirectories::worktree_tops(
    const std::string& dir, const std::optional<std::string>& linked_top) const {
  std::vector<std::string> tops;
  if (dir.size() > 5 && dir.substr(dir.size() - 5) == "/.git")
    tops.push_back(dir.substr(0, dir.size() - 5));
  if (linked_top) tops.push_back(*linked_top);
  for (const auto& top : h.pointer_worktrees(dir)) tops.push_back(top);
  if (const auto it = entered_tops.find(dir); it != entered_tops.end())
    for (const auto& top : it->second)
      if (std::find(tops.begin(), tops.end(), top) == tops.end()) tops.push_back(top);
  if (const auto it = walk.enclosing_tops.find(dir); it != walk.enclosing_tops.end())
    for (const auto& top : it->second)
      if (std::find(tops.begin(), tops.end(), top) == tops.end()) tops.push_back(top);
  if (work_tree_of_every_repository &&
      std::find(tops.begin(), tops.end(), *work_tree) == tops.end())
    tops.push_back(*work_tree);
  return tops;
}

// What one git directory's configuration names: each protected, or refused; the hooks
// directories among them join `hook_dirs`.
void GitDirectories::protect_config_targets(const std::vector<GitConfigTarget>& targets,
                                            std::vector<GitConfigTarget>& hook_dirs) {
  for (const auto& t : targets) {
    if (t.repository) {
      if (t.discovered)
        protect_discovered_repository(t);
      else
        protect_repository(t);
      continue;
    }
    if (t.script && ir::within_any(guards, t.path)) {
      diags.error(t.loc, t.named_by + " runs the script '" + t.path +
                             "' with an interpreter (named in the command or by the "
                             "script's '#!' line), which loads code next to it or from the "
                             "directory git runs it in, in the writable root; move the script "
                             "outside every writable root, or run the command outside the "
                             "sandbox; refusing to run");
      continue;
    }
    protect_git_target(t.path, t.loc);
    if (t.hooks) hook_dirs.push_back(t);
    if (!t.submodule.empty()) read_populated_submodule(t);
  }
}

// The git directory a populated submodule's `.git` is or names, which the host's `git
// status` (and `fetch`, `push --recurse-submodules`) enters with its config and hooks:
// read as every git directory, and protected wherever it lies. Only the `.git` was: one
// naming a git directory outside `modules` (`gitdir: /srv/lib.git`), or a `.git` directory
// of its own, in the repository above the workspace was neither read nor recorded, so with
// the host's `ln /srv/lib.git/config WS/cfg` the command wrote `core.fsmonitor` there, and
// with a `core.fsmonitor` naming `WS/fsm.sh` it wrote that script; the host's `git status`
// in the repository above ran it (red team A24C-1).
void GitDirectories::read_populated_submodule(const GitConfigTarget& t) {
  struct stat st;
  if (!stat_without_links(t.path, st)) return;
  std::optional<std::string> gitdir;
  if (S_ISDIR(st.st_mode)) {
    gitdir = t.path;
  } else if (S_ISREG(st.st_mode)) {
    // Against the submodule's directory, where git looked `.git` up: `t.path` is its
    // canonical form, a symlink's target elsewhere. With the host's `lib/.git -> BASE/gf/lib`
    // saying `gitdir: ../../mods/lib.git`, the name was taken against `BASE/gf`, named
    // nothing, and git's `BASE/mods/lib.git` went unread (red team A24D-1).
    // Protected whatever it is (follow_git_pointer): passed by when missing or not yet a
    // git directory, `gitdir: ../app/.mods/lib.git` let the command make one there whose
    // `core.fsmonitor` the host's `git status` in the repository above ran (review R25-2).
    gitdir =
        follow_git_pointer(t.path, t.submodule, t.named_by, pointer_walk(t.loc), refusal(t.loc))
            .gitdir;
  } else {
    return;
  }
  if (!gitdir) return;
  protect_git_target(*gitdir, t.loc);
  if (!is_git_directory(*gitdir)) return;
  // Its worktree, where git runs in it: a relative `core.fsmonitor = ../app/fsm.sh` in a
  // `BASE/mods/lib.git/config` without `core.worktree` was resolved against the git
  // directory (`BASE/mods/app/fsm.sh`) and git ran `WS/app/fsm.sh` (red team A24C-1).
  auto& tops = entered_tops[*gitdir];
  if (std::find(tops.begin(), tops.end(), t.submodule) == tops.end()) tops.push_back(t.submodule);
  gitdirs.push_back(*gitdir);
}

// The common directory of the git directory `dir` (`dir` itself when it names none); none
// when it refused, and `dir` is not read.
std::optional<std::string> GitDirectories::common_directory(const std::string& dir) {
  // Canonical, so that a worktree's `commondir` ("../..") names its common directory by
  // one string, and the worktrees below it are read once.
  std::string common = dir;
  // With the guards (A22C-7). HostResolution::protect_common_directories judged the
  // `commondir` of the protected paths it saw (walked_or_refuse): those in commondir_judged
  // refused there already. Every other git directory is judged here, a protected one too.
  const CommonDir named_common = commondir_named_by(dir);
  // One zpolicy cannot read, the caller's own, names what git reads once it is readable
  // again (review R25-8); refused once, where the protected paths' were judged.
  if (named_common.refusal && !commondir_judged.contains(dir)) {
    diags.error({dir + "/commondir", 0, 0}, "git reads the common directory's name from '" + dir +
                                                "/commondir', and " + *named_common.refusal +
                                                "; refusing to run");
    return std::nullopt;
  }
  // A symlinked `commondir` refuses here too, in the git directories no protected path
  // names (a remote's repository, a linked worktree's or a submodule's git directory):
  // git reads the common directory's name through it. With the host's
  // `/srv/repo.git/commondir -> WS/cd`, the command wrote `WS/evil` into `cd` and made
  // `evil` a bare repository with a post-receive hook, and the host's `git push origin`
  // ran it (red team A23-1).
  if (named_common.link && !commondir_judged.contains(dir)) {
    diags.error({dir + "/commondir", 0, 0},
                "'" + dir + "/commondir' is a symlink: git reads the common directory's " +
                    "name through it, from a file that may lie in a writable root; " +
                    "refusing to run");
    return std::nullopt;
  }
  if (const auto& named = named_common.path) {
    const Canonical c = h.canonicalize(*named);
    // A name the walk cannot resolve (a symlink in a writable root, '..' below a missing
    // directory, more links than the kernel follows) is refused here, as
    // protect_common_directories refuses it: taken as spelled, `app/m/../c` with `m`
    // missing had its hooks, remotes, modules and config refused one by one under a name
    // that is not the one the kernel would resolve once the sandbox made `m` (review R25-9).
    if (c.stop != Canonical::Stop::None) {
      // Not by protected_index: a directory protected during this walk (a `.git` file's
      // git directory above the workspace, a remote's) was never judged, and stayed silent
      // while the sandbox re-pointed the link (review A23R-1).
      if (!commondir_judged.contains(dir))
        h.walked_or_refuse(*named, {dir + "/commondir", 0, 0},
                           "common git directory named by '" + dir + "/commondir'");
      return std::nullopt;
    }
    // One spelled from a dangling link is made where the link leads: a remote's
    // repository `/srv/repo.git` whose `commondir` names `/srv/h/common`, with the host's
    // `/srv/h -> WS/l`, got placeholders at `l/common/config` only; the command made
    // `objects`, `refs` and `hooks/post-receive` there, and the host's `git push` ran the
    // hook (red team A22E-3). A common directory that does not exist is no git
    // directory git can use yet: refused where the sandbox could make it.
    if (c.stop == Canonical::Stop::None && !c.complete) {
      const std::string what = "common git directory named by '" + dir + "/commondir'";
      const ir::SourceLoc at{dir + "/commondir", 0, 0};
      if (refused_where_made(c.path, at, what, what + " '" + *named + "'",
                             "git would run its hooks and read its config"))
        return std::nullopt;
    }
    common = c.path;
  }
  return common;
}

// How a `.git` pointer is followed from here: walked with the guards, its git directory
// protected as every git target, a refusal reported at `loc`.
GitPointerWalk GitDirectories::pointer_walk(const ir::SourceLoc& loc) {
  return {[this, loc](const std::string& lexical, const std::string& what) {
            return h.canonical_or_refuse(lexical, loc, what);
          },
          [this, loc](const std::string& path) { protect_git_target(path, loc); },
          [this, loc](const std::string& path, const std::string& what) {
            return h.created_in_guard(path, loc, what);
          }};
}

std::function<void(const std::string&)> GitDirectories::refusal(const ir::SourceLoc& loc) {
  return [this, loc](const std::string& why) { diags.error(loc, why); };
}

void GitDirectories::protect_git_target(const std::string& path, const ir::SourceLoc& loc) {
  if (!protected_index.covers(path)) protect_absolute(path, loc, true);
}

// Whether the run is refused because the kernel would create the missing `path` (canonical,
// spelled from a dangling host link) in a writable root, where the sandbox could make it
// (made_in_writable_root says `missing` and `then`). A walk that refuses on the way reports
// `what` at `loc`.
bool GitDirectories::refused_where_made(const std::string& path, const ir::SourceLoc& loc,
                                        const std::string& what, const std::string& missing,
                                        const std::string& then) {
  const auto made = h.created_in_guard(path, loc, what);
  if (!made) return false;
  diags.error(loc, made_in_writable_root(missing, *made, then));
  return true;
}

// Whether `path` lies in a guard: a writable root, or another name the host's mounts give one.
bool GitDirectories::writable(const std::string& path) const {
  return ir::within_any(guards, path);
}

// A URL rewrite's base, only the start of a path: in a writable root it refuses.
void GitDirectories::judge_rewrite_base(const GitConfigTarget& t) {
  // Walked with the guards, and a dangling link taken for where the base would be
  // made: a base through the host's `/srv/h -> WS/l`, `l` a link an earlier run
  // planted to a directory outside, was judged by that directory, and the command
  // replaced the link by a bare repository whose post-receive hook the host's `git
  // push` ran (red team A22-5); with `l` missing, the command made it.
  const std::string what = t.named_by + " rewrites URLs to the local path";
  const Canonical c = h.canonicalize(t.path);
  if (c.stop == Canonical::Stop::SymlinkInWritableRoot) {
    diags.error(t.loc, what + " '" + t.path + "', which passes through the symlink '" +
                           c.at + "' in a writable root: the sandbox could re-point it " +
                           "at a repository of its own, whose upload-pack, receive-pack " +
                           "and hooks git would run; rewrite to a path outside every " +
                           "writable root; refusing to run");
    return;
  }
  // One the walk cannot resolve names what the sandbox makes of it: `/srv/h/../h/` with
  // the host's dangling `/srv/h -> WS/l` ('..' below a missing target) was judged by
  // its spelling, and once the command made `l`, the kernel took `..` to the workspace
  // and the host's `git push` ran the hook of the sandbox's `WS/h/repo.git` (red team
  // A22C-6). More links than the kernel follows are no better.
  if (c.stop != Canonical::Stop::None) {
    diags.error(t.loc, what + " '" + t.path + "', which " +
                           (c.stop == Canonical::Stop::DotDotBelowMissing
                                ? "has '..' below '" + c.at + "', which does not exist"
                                : "crosses more symlinks than the kernel follows") +
                           ": what it names once that changes is unknown, and may be a " +
                           "repository the sandbox made, whose upload-pack, receive-pack " +
                           "and hooks git would run; rewrite to a canonical path outside " +
                           "every writable root; refusing to run");
    return;
  }
  std::vector<std::string> bases{c.path};
  if (!c.complete)
    for (auto& made : h.created_through_links(c.path, t.loc, what))
      bases.push_back(std::move(made));
  for (const auto& base : bases)
    for (const auto& w : guards)
      if (w.path.rfind(base, 0) == 0 || ir::path_within(w.path, base)) {
        diags.error(t.loc, what + " '" + t.path +
                               "', and with the rest of each URL it names a repository " +
                               "the writable root '" + w.path + "' may hold, whose " +
                               "upload-pack, receive-pack and hooks git would run; " +
                               "rewrite to a path outside every writable root; refusing " +
                               "to run");
        return;
      }
}

// A local repository a remote URL names (red team A14B-4): git's fetch and push run
// upload-pack or receive-pack there, with its config, and receive-pack its hooks. The
// names git's enter_repo tries are protected in a writable root up to the first that
// is a git directory or a `.git` pointer (so the sandbox cannot make an earlier one
// win, nor change the one found), and that git directory is read in turn, as a
// protected `.git` is. A URL rewrite's base is only the start of a path: in a writable
// root it refuses.
void GitDirectories::protect_repository(const GitConfigTarget& t) {
  if (t.url_prefix) {
    judge_rewrite_base(t);
    return;
  }
  // The names up to the first git directory or pointer; that one is the repository.
  std::vector<std::string> names;
  std::optional<std::string> gitdir;
  // From the URL's spelling, as path.c enter_repo tries them: with the host's `/srv/r ->
  // /data/repo` (a plain directory) beside the bare `/srv/r.git`, git pushes into
  // `/srv/r.git`, and the canonical form's `/data/repo.git` named nothing (red team
  // attack 24d); a `.git` file found as `/srv/r` itself names its git directory relative to
  // `/srv`.
  for (const auto& name : enter_repo_candidates(t.spelled.empty() ? t.path : t.spelled)) {
    const RepositoryName found = try_repository_name(name, t, names, gitdir);
    if (found == RepositoryName::Refused) return;
    if (found == RepositoryName::Last) break;
  }
  // Wherever it lies, as the `.git` file naming it above (review R24-1): outside every
  // writable root, so that another name of a hook or config file of it (a hard link, a host
  // mount) in one is protected too. Read when it is a git directory (a pointer's may not be).
  if (gitdir) {
    protect_git_target(*gitdir, t.loc);
    if (is_git_directory(*gitdir)) gitdirs.push_back(*gitdir);
  }
  // Outermost first (`P` before `P/.git`), so that a name inside one protected already
  // gets no placeholder of its own. Outside every writable root the names before the
  // repository are no git directory, which the sandbox cannot make one there (a host link
  // or mount into a writable root on the way is refused above): a hard link of a file in
  // one changes nothing git runs, and recording a working tree (`P` for `P.git`) would
  // search it whole.
  for (auto it = names.rbegin(); it != names.rend(); ++it)
    if (writable(*it)) protect_git_target(*it, t.loc);
}

// One name enter_repo tries for the URL `t` names: walked and added to `names`. It is the
// repository (`gitdir` set) when it is a git directory or a `.git` pointer; a walk that
// refused, or a pointer naming none, protects nothing.
GitDirectories::RepositoryName GitDirectories::try_repository_name(
    const std::string& name, const GitConfigTarget& t, std::vector<std::string>& names,
    std::optional<std::string>& gitdir) {
  const auto walked = h.walked_or_refuse(name, t.loc, t.named_by + " names the repository");
  if (!walked) return RepositoryName::Refused;
  const std::string& c = walked->path;
  names.push_back(c);
  // What the walk found, links followed: a name spelled from a dangling link is none,
  // but the sandbox may make where it leads: `remote.origin.url = /srv/h/repo.git`
  // with the host's dangling `/srv/h -> WS/l` protected nothing, the command made
  // `l/repo.git` with a post-receive hook, and the host's `git push origin` ran it
  // (red team A22D-1; A22-5 for a URL that is no rewrite's base). Refused, as A22-5
  // refuses such a rewrite base: a remote that does not exist yet, named through the
  // host's link into a writable root, is the sandbox's to make.
  if (!walked->complete)
    return refused_where_made(c, t.loc, t.named_by + " names the repository",
                              t.named_by + " names the repository '" + name + "', which",
                              "git would run its upload-pack, receive-pack and hooks; name a "
                              "repository outside every writable root")
               ? RepositoryName::Refused
               : RepositoryName::Next;
  if (S_ISDIR(walked->mode) && is_git_directory(c)) {
    gitdir = c;
    return RepositoryName::Last;
  }
  if (S_ISREG(walked->mode)) return repository_of_pointer(name, c, t, gitdir);
  return RepositoryName::Next;
}

// The repository the `.git` pointer `file` (found as `name`) names, for a URL `t` names.
GitDirectories::RepositoryName GitDirectories::repository_of_pointer(
    const std::string& name, const std::string& file, const GitConfigTarget& t,
    std::optional<std::string>& gitdir) {
  // Relative to the directory git looked `name` up in (path.c enter_repo), which is not
  // that of `file` where `name` is a symlink to the file: with the host's
  // `/srv/repo/.git -> ../../gf/repo` saying `gitdir: ../../mods/repo.git`, the name was
  // taken against `gf`, and the git directory git pushes into went unread (red team
  // A24D-1).
  const std::string spelled_in = name.substr(0, std::max<size_t>(name.rfind('/'), 1));
  const auto in = h.canonical_or_refuse(spelled_in, t.loc, t.named_by + " names the repository");
  if (!in) return RepositoryName::Refused;
  // One spelled from a dangling link into a writable root refuses (follow_git_pointer,
  // red team A22E-2); one missing, or not yet a git directory, is protected.
  const FollowedGitPointer followed =
      follow_git_pointer(file, *in, t.named_by, pointer_walk(t.loc), refusal(t.loc));
  if (!followed.named) return RepositoryName::Last;
  gitdir = followed.gitdir;
  if (!gitdir) return RepositoryName::Refused;
  // Outside every writable root too, as the git directory it names: hard-linked at
  // `WS/gitfile`, the command wrote `gitdir:` naming a repository of its own, and the
  // host's `git push` ran its post-receive hook (red team A24B-1).
  protect_git_target(file, t.loc);
  return RepositoryName::Last;
}

// The repository git's discovery finds from the directory `t.path` (a scheduled
// maintenance's `maintenance.repo`; setup.c setup_git_directory_gently_1, after `git -C`
// entered it), protected and read as a remote's (protect_repository): the names the
// discovery looks at in a writable root on its way are the sandbox's to make a repository
// at (red team A25-1), so each is protected up to the repository found. Above the
// writable roots the discovery meets the repositories above them, which
// read_enclosing_repositories reads already.
void GitDirectories::protect_discovered_repository(const GitConfigTarget& t) {
  const std::string what = t.named_by + " names the directory git runs in";
  const auto walked = h.walked_or_refuse(t.spelled, t.loc, what);
  if (!walked) return;
  if (!walked->complete) {
    // `git -C` fails on a missing directory until someone makes it: one the kernel would
    // make through a host link into a writable root is the sandbox's to make, refused as
    // a remote's is (A22D-1); in a writable root, its first missing name is protected (a
    // placeholder, whose inside the sandbox cannot write), so that nothing is there for
    // git to enter.
    if (const auto made = h.created_in_guard(walked->path, t.loc, what)) {
      diags.error(t.loc, what + " '" + t.spelled + "', which does not exist, and the " +
                             "kernel would create it at '" + *made + "', in a writable " +
                             "root: the sandbox could make a repository there, whose " +
                             "config and hooks git would obey; refusing to run");
      return;
    }
    std::string first = walked->path;
    for (std::string up = first.substr(0, std::max<size_t>(first.rfind('/'), 1));
         up != "/" && kind_of(up) == HostKind::Missing;
         up = up.substr(0, std::max<size_t>(up.rfind('/'), 1)))
      first = up;
    if (writable(first)) protect_git_target(first, t.loc);
    return;
  }
  // `git -C` fails on anything else, as long as it stays there: in a writable root the
  // sandbox could remove a file there and make the directory.
  if (!S_ISDIR(walked->mode)) {
    if (writable(walked->path)) protect_git_target(walked->path, t.loc);
    return;
  }
  // Up to the top of the writable root: above it the discovery meets the repositories above
  // the root, which read_enclosing_repositories reads. A directory outside every writable
  // root leads to a repository of the host's, which is not read: as one elsewhere whose
  // config names the workspace (docs/protected-paths.md, "Limits" of the repositories
  // above), and reading every registered repository whole (the hard-link search walks what
  // is recorded) would cost each run what the caller's other repositories hold.
  std::optional<std::string> gitdir;
  bool stop = false;
  for (std::string d = walked->path; !gitdir && !stop && writable(d);) {
    gitdir = discovered_at(d, t, stop);
    if (d == "/") break;
    d = d.substr(0, std::max<size_t>(d.rfind('/'), 1));
  }
  if (!gitdir) return;
  protect_git_target(*gitdir, t.loc);
  gitdirs.push_back(*gitdir);
}

// What git's discovery finds at the directory `d` of a writable root, on its way up from a
// directory `t` names: the git directory of `d/.git` (a git directory, or what a `.git` file
// names) or `d` itself (bare); none, with `stop` set where git stops there without one (a
// `.git` file naming no git directory: git dies) or the run was refused. Each name looked at
// is protected, so that the sandbox can make no repository there: `d/.git` (a placeholder
// when missing), and `d/HEAD`, which git needs to take `d` for a bare repository (R18-2's
// rule for a writable root's top; one git would take refuses, as there: A25-2).
std::optional<std::string> GitDirectories::discovered_at(const std::string& d,
                                                         const GitConfigTarget& t, bool& stop) {
  const std::string prefix = d == "/" ? "" : d;
  const std::string what = t.named_by + ": git's discovery from '" + t.spelled + "' looks at";
  const auto dot_git = h.walked_or_refuse(prefix + "/.git", t.loc, what);
  if (!dot_git) return stop = true, std::nullopt;
  protect_git_target(dot_git->path, t.loc);
  // A git directory only where git takes its HEAD (validate_headref, as A25-3's rule for a
  // writable root's top): past one it rejects, git's discovery goes on to `d` itself and
  // up. Taken for one by its parts, `pkg/.git` with an empty HEAD (as a crash leaves it)
  // stopped the walk there, and the command made `pkg` a bare repository whose remote's
  // upload-pack the host's scheduled maintenance ran (red team A25C-1).
  const auto taken = [](const std::string& dir) {
    return is_git_directory(dir) && git_head_at(dir + "/HEAD") != GitHead::None;
  };
  if (dot_git->complete && S_ISDIR(dot_git->mode) && taken(dot_git->path)) return dot_git->path;
  if (dot_git->complete && S_ISREG(dot_git->mode)) {
    stop = true;
    // Protected wherever it lies, missing too (a placeholder in a writable root): git dies
    // on it now, and the sandbox could make it.
    const auto c =
        follow_git_pointer(dot_git->path, d, t.named_by, pointer_walk(t.loc), refusal(t.loc))
            .gitdir;
    if (!c) return std::nullopt;
    auto& tops = entered_tops[*c];
    if (std::find(tops.begin(), tops.end(), d) == tops.end()) tops.push_back(d);
    return c;
  }
  if (taken(d)) return d;
  const std::string head = prefix + "/HEAD";
  if (git_head_at(head) != GitHead::None) {
    diags.error(t.loc, what + " '" + d + "', whose HEAD '" + head + "' git would take: " +
                           "once the sandbox made 'objects' and 'refs' beside it, git would " +
                           "take '" + d + "' for a bare repository and obey the 'config' " +
                           "the sandbox wrote there; rename or remove that HEAD; refusing " +
                           "to run");
    return stop = true, std::nullopt;
  }
  if (const auto c = h.canonical_or_refuse(head, t.loc, what)) protect_git_target(*c, t.loc);
  return std::nullopt;
}

// Every fixed name git reads or runs in a git directory is looked at with lstat and
// canonicalized as any protected path (red team A14B-1): one that is a symlink names
// another directory, protected as a whole; one behind a symlink in a writable root
// refuses the run.
std::optional<std::string> GitDirectories::fixed_name(const std::string& lexical,
                                                      const std::string& what) {
  const ir::SourceLoc at{lexical, 0, 0};
  auto c = h.canonical_or_refuse(lexical, at, what);
  if (!c) return c;
  // A dangling link is spelled from the link itself: what git would create or run
  // through it is unknown.
  if (struct stat st; stat_without_links(*c, st) && S_ISLNK(st.st_mode)) {
    diags.error(at, what + " '" + lexical + "' reaches the dangling symlink '" + *c +
                        "': what git would find through it is unknown; refusing to run");
    return std::nullopt;
  }
  if (*c != lexical) protect_git_target(*c, at);
  return c;
}

// Each submodule's git directory below `modules` (`modules/<name>`, a name may hold
// '/'), populated or not, is one the host's `git submodule update` takes over with its
// hooks and config: read as every git directory here, and a symlink on the way to it
// judged as `modules` is. With the host's `.git/modules/sub -> ../../.msub`, or a
// deinitialized `sub` whose git directory's `hooks` or `config` the host linked into
// the workspace, the command made a git directory or wrote hooks there, and the host's
// `git submodule update --init` ran its post-checkout hook (red team A23-3).
void GitDirectories::read_submodule_git_directories(const std::string& common) {
  if (const auto modules = fixed_name(common + "/modules", "git's 'modules' directory")) {
    std::vector<std::string> pending{*modules};
    std::set<std::string> listed;
    size_t entries = 0;
    while (!pending.empty()) {
      const std::string at = std::move(pending.back());
      pending.pop_back();
      if (!listed.insert(at).second) continue;
      // A level there and not listable refuses (list_git_level): with mode 0711 (the
      // caller's uid against another user's directory) it hid the submodule git
      // directories below it, and their hooks and config went unread (review A23R-3).
      const GitLevel level = list_git_level(at);
      if (level.error) {
        diags.error({at, 0, 0},
                    unlistable_git_level(at, "the submodules' git directories below", level.error) +
                        "; refusing to run");
        return;
      }
      for (const auto& name : level.names) {
        if (++entries > kMaxSubmoduleEntries) {
          diags.error({*modules, 0, 0},
                      "git's 'modules' directory '" + *modules + "' holds more than " +
                          std::to_string(kMaxSubmoduleEntries) +
                          " entries on the way to its submodules' git directories, which "
                          "zpolicy reads as every git directory; refusing to run");
          pending.clear();
          break;
        }
        std::string path = at + "/" + name;
        struct stat st;
        if (!stat_without_links(path, st)) {
          // A submodule git directory git reaches by name that zpolicy cannot look at was
          // passed by as none (fix24), as `worktrees` entries were.
          const int error = errno;
          if (entry_unreachable(at, error)) continue;
          diags.error({path, 0, 0}, "git reaches the submodules' git directories below '" + at +
                                        "' by name, and zpolicy cannot look at '" + path + "' (" +
                                        std::strerror(error) + ") to read them; refusing to run");
          return;
        }
        if (!(S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))) continue;
        if (S_ISLNK(st.st_mode)) {
          auto c = fixed_name(path, "submodule git directory");
          if (!c || kind_of(*c) != HostKind::Directory) continue;
          path = std::move(*c);
        }
        if (has_git_head(path))
          gitdirs.push_back(std::move(path));
        else
          pending.push_back(std::move(path));
      }
    }
  }
}

// A hook that is a symlink runs what it points at (`pre-commit ->
// ../../scripts/pre-commit`): the link is protected with its directory, its target is
// protected too.
void GitDirectories::protect_linked_hooks(const std::vector<GitConfigTarget>& hook_dirs) {
  for (const auto& hooks : hook_dirs) {
    const DirLinks links = symlinks_in(hooks.path);
    if (links.unreadable)
      diags.error(hooks.loc, "git runs the hooks in '" + hooks.path + "', and zpolicy cannot " +
                                 "read '" + *links.unreadable + "' to see what they are; " +
                                 "make it readable by the user running zpolicy; refusing to run");
    for (const auto& link : links.links) {
      const std::string named =
          link.target[0] == '/' ? link.target : hooks.path + "/" + link.target;
      if (h.loops_for_good(named)) continue;  // runs nothing (protect_symlink_targets_in)
      const auto c =
          h.canonical_or_refuse(named, hooks.loc, "target of the git hook '" + link.path + "'");
      if (!c) continue;
      // A linked hook whose `#!` interpreter loads code next to it, as a command's
      // script (red team A15-G4).
      const auto line = first_line_of(*c);
      const auto shebang = line ? shebang_of(*line) : std::nullopt;
      if (shebang && shebang->loads_code_by_name && ir::within_any(guards, *c)) {
        diags.error(hooks.loc, "the git hook '" + link.path + "' runs the script '" + *c +
                                   "' with its '#!' interpreter, which loads code next to "
                                   "it, in the writable root; move the script outside every "
                                   "writable root, or run the command outside the sandbox; "
                                   "refusing to run");
        continue;
      }
      protect_git_target(*c, hooks.loc);
    }
  }
}

// The `.git` file of the linked worktree `top` whose git directory is `admin` (its `gitdir`
// file names `top/.git`), git's way from that worktree to it, as a populated submodule's `.git` is
// (A16-6): in a writable root the sandbox could point it at a git directory of its own, whatever
// the policy protects (red team A24-8: under `protect: [.git]` the command rewrote `WS/wt/.git`,
// and the host's `git commit` in `wt` ran the hook it chose). Outside every writable root too:
// another name of it there (a hard link) is as much the sandbox's to write (red team A24B-1).
void GitDirectories::protect_linked_worktree_pointer(const std::string& admin,
                                                     const std::string& top) {
  const ir::SourceLoc at{admin + "/gitdir", 0, 0};
  if (const auto c =
          h.walked_or_refuse((top == "/" ? "" : top) + "/.git", at,
                             "the linked worktree's '.git' file named by '" + admin + "/gitdir'");
      c && c->complete)
    protect_git_target(c->path, at);
}

// A symlink directly in a git directory, or in the state of a rebase, `am`, cherry-pick or
// revert in progress, names what git reads or runs there: its target is protected as the
// directory's own content is (outside every writable root too: a dangling one is made where
// a host link leads, perhaps in one). With the host's `rebase-merge -> WS/rb`,
// made by hand mid-rebase, the command could add an `exec` line to `git-rebase-todo`, which
// the host's `git rebase --continue` runs (attack 23's open item); the same for any other
// name git creates there. A `HEAD` linked to `refs/heads/main` (core.preferSymlinkRefs)
// names a file inside the directory, protected already.
void GitDirectories::protect_symlink_targets_in(const std::string& dir) {
  for (const char* state : {"", "/rebase-merge", "/rebase-apply", "/sequencer"}) {
    const std::string at = dir + state;
    const DirLinks links = symlinks_in(at);
    if (links.unreadable) {
      diags.error({at, 0, 0}, "git reads what the git directory '" + at + "' holds, and " +
                                  "zpolicy cannot read '" + *links.unreadable + "' to see " +
                                  "where its symlinks lead; make it readable by the user " +
                                  "running zpolicy; refusing to run");
      continue;
    }
    for (const auto& link : links.links) {
      const std::string named = link.target[0] == '/' ? link.target : at + "/" + link.target;
      // A target that runs into a host loop the sandbox cannot end names nothing git can read
      // or run, now or later (ELOOP), as a pattern's walk takes such a link (A24-5): found by
      // this walk, not named by the user, it refused every run (tidy 25). The link itself is
      // protected with its directory.
      if (h.loops_for_good(named)) continue;
      const ir::SourceLoc loc{link.path, 0, 0};
      const auto c = h.canonical_or_refuse(named, loc, "target of the symlink '" + link.path + "'");
      if (c) protect_git_target(*c, loc);
    }
  }
}

}  // namespace

void protect_git_directories(const std::vector<ir::ResolvedPath>& protected_paths,
                             const GitDirectoryWalk& walk) {
  GitDirectories(walk).read(protected_paths);
}

}  // namespace zpolicy::compiler
