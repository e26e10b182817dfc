#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve/git_config.hpp"
#include "compiler/resolve/git_config_environment.hpp"
#include "compiler/resolve/gitdir.hpp"
#include "ir/source_location.hpp"

namespace zpolicy::compiler {

// Git gives up past this depth of nested includes (config.c MAX_INCLUDE_DEPTH); so does
// resolution, refusing the run rather than reading less than git would.
inline constexpr int kGitIncludeMaxDepth = 10;
// What one git directory's config files and their includes may come to, counted each time
// a file is read (an included file is read again at each include): more refuses the run
// (red team R17-7: includes that fan out multiply).
inline constexpr size_t kGitConfigMaxReads = 256;
inline constexpr size_t kGitConfigMaxTotalBytes = size_t{4} << 20;
// And what every git directory of one resolution may come to together: the bounds above
// are per directory, and a sandbox makes as many nested repositories and linked-worktree
// directories as it likes (200 of them, each with a 0.7 MB config.worktree, held every
// later run 13.8 s). A workspace's legitimate configs are kilobytes each.
inline constexpr size_t kGitConfigMaxReadsInAll = 4096;
inline constexpr size_t kGitConfigMaxBytesInAll = size_t{16} << 20;
// The caller's system and global files count toward those once, but their entries are
// applied again for each git directory (relative paths resolve against each top), 16 ms
// of CPU per MB each time: a sandbox that makes 300 repositories held every later run of a
// caller with a 1 MB ~/.gitconfig 4.8 s. So their bytes applied again, over every git
// directory, have a bound of their own: about 1 s of CPU; a 64 KB config for 1 024 git
// directories (the mount bound refuses a run with more than ~500 nested repositories
// anyway), a 1 MB one for 64.
inline constexpr size_t kGitConfigMaxSharedBytesInAll = size_t{64} << 20;

// One of the caller's system and global config files, as read and parsed once.
struct SharedGitConfig {
  GitConfigFile file;
  GitConfig parsed;
  bool ready = false;  // `parsed` holds the file's entries
};

// What has been read so far, over every git directory of one resolution.
struct GitConfigReads {
  size_t reads = 0;
  size_t bytes = 0;
  // The caller's system and global files (GitConfigSources::shared) by canonical path.
  // git reads them for every repository, but they are the same bytes each time and no
  // sandbox makes them grow: read, parsed and counted toward the bounds in all once per
  // resolution. Counted per git directory, a 1 MB ~/.gitconfig refused every workspace
  // with 16 repositories, a 64 KB one every workspace with 256 (red team A18-1).
  std::map<std::string, SharedGitConfig> shared;
  // Their bytes applied again, for each git directory after the first.
  size_t shared_bytes = 0;
};

// One git directory's configuration as the host's git reads it: `files` (its `config`
// and `config.worktree`, its common directory's), in order, and the worktree tops its
// commands run from (where a relative core.hooksPath and command words resolve).
struct GitConfigSources {
  std::string gitdir;
  std::vector<std::string> files;
  std::vector<std::string> tops;
  // The first `shared` of `files` are the caller's system and global files, the same for
  // every git directory (GitConfigReads::shared); what they include is not.
  size_t shared = 0;
  // The key that makes git stay in the directory it was started in rather than go to a top
  // (git_start_directory.hpp), as said in refusals; empty when it goes to a top. Then a
  // relative path or command word git resolves there cannot be resolved: it refuses.
  std::string stays_where_started = {};
  // Read without a git directory (`files` are the caller's system and global ones, which
  // the scheduler's git reads, started in the home): what they name by an absolute path, or
  // relative to `tops` (the top of every repository, when there is one), and the
  // directories git's scheduled maintenance runs git in (`maintenance.repo`), which is
  // taken from these files only.
  bool scheduled = false;
  // The settings of the caller's environment (git_config_environment.hpp), which git
  // applies after `files`: read as `-c` settings are, their includes too.
  std::vector<GitEnvironmentSetting> environment = {};
};

// A file or directory the host's next git command runs or reads as config, named by the
// config line at `loc` (absolute and canonical, by `canonical`).
struct GitConfigTarget {
  std::string path;
  ir::SourceLoc loc;
  bool hooks = false;  // a core.hooksPath directory: git runs the hooks in it
  // A script an interpreter runs, which loads code next to it: allowed only outside every
  // writable root (red team A14B-2).
  bool script = false;
  // A local repository a remote URL names (red team A14B-4): git runs upload-pack or
  // receive-pack, and receive-pack's hooks, in it; the caller protects the git directory
  // git would find there. With `url_prefix`, the URL is only the start of the
  // repository's path (`url.<base>.insteadOf`): the caller refuses it in a writable root.
  bool repository = false;
  bool url_prefix = false;
  // "git config 'FILE' line N: KEY", for the caller's refusals.
  std::string named_by = {};
  // For a populated submodule's `.git` the index records, the submodule's directory: git
  // enters the git directory that `.git` is or names, there, which the caller reads as every
  // git directory.
  std::string submodule = {};
  // For a repository, the path as the URL spells it: git tries its names (`P/.git`, `P`,
  // `P.git/.git`, `P.git`) from that spelling, not from the canonical `path`.
  std::string spelled = {};
  // For a repository: a directory git runs in (`maintenance.repo`), whose repository git's
  // discovery finds from there up (`D/.git`, then `D` itself as a bare one), rather than a
  // URL whose names git's enter_repo tries.
  bool discovered = false;
};

// The canonical form of an absolute path under the rules of every protected path, or
// none once it has reported why it cannot give one; `named_by` says which config line and
// key named it ("git config 'FILE' line N: KEY"), for that report.
using GitCanonical = std::function<std::optional<std::string>(
    const std::string& lexical, const ir::SourceLoc&, const std::string& named_by)>;
using GitRefusal = std::function<void(const ir::SourceLoc&, const std::string&)>;

// Reads `src.files` and every file they include (include.path and includeIf.<cond>.path,
// whatever the condition: including too much is the safe direction), and returns every
// config file read or included, the core.hooksPath directories, each
// path a command value names (git_config_keys.hpp; a non-'!' alias's `-c` settings are
// read as keys of the same file and line, its program options as commands) and each
// local repository a remote, submodule or URL rewrite names (and each URL as the
// rewrites make it), and each submodule the git directory's index records (its directory
// when it is not populated, its `.git` when it is; red team A16-6). Relative paths resolve as git
// resolves them: includes against the including file's directory, core.worktree against the git
// directory, hook paths and commands against each top; `~/` against `home`. What it
// cannot read soundly (a bad line, an include that is not a regular file or cannot be
// opened, `~user`, `%(prefix)`, a key git requires a value for without one, a command
// paths_in_command cannot follow, includes deeper than kGitIncludeMaxDepth) is reported
// to `refuse` at its file and line, and so is, with `src.stays_where_started`, each
// relative value git would resolve against the directory it runs in (red team A23C-3). An
// interpreter's script is a target with `script` set, for the caller to refuse inside a writable
// root: one a command names after its interpreter, and a file a command names whose `#!` line runs
// an interpreter that loads code next to it (red team A15-G4); the interpreter a `#!` line names is
// a target too. A word without a '/' names a file at a top only if one exists there (red team
// A15-G2). With `src.scheduled` (the caller's system and global files, read without a git
// directory), what they name by an absolute path and each directory git's scheduled
// maintenance runs git in (`maintenance.repo`, a repository target with `discovered`;
// relative against `home`, where the scheduler starts) are returned; no relative value, which
// resolves against the tops of each git directory read. `all` counts the reads
// toward kGitConfigMaxReadsInAll and kGitConfigMaxBytesInAll.
std::vector<GitConfigTarget> git_config_targets(const GitConfigSources& src,
                                                const std::string& home,
                                                const GitCanonical& canonical,
                                                const GitRefusal& refuse, GitConfigReads& all);

}  // namespace zpolicy::compiler
