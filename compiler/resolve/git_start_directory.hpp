#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace zpolicy::compiler {

// Where the host's git runs a repository's hooks and `!` aliases, and so what a relative
// `core.hooksPath`, a command's relative word or a relative remote URL names. Started in
// a worktree, git goes to its top (setup.c setup_discovered_git_dir), where zpolicy
// resolves them. It stays in the directory it was started in (red team A23C-3) when the
// repository's configuration, as git's setup reads it, says:
// * `core.bare = true` (setup_discovered_git_dir; with core.worktree too,
//   setup_explicit_git_dir's "core.bare and core.worktree do not make sense");
// * `core.worktree` naming a directory that does not hold where git was started
//   (setup_explicit_git_dir, "cwd outside worktree"); one that holds every top is the top
//   git goes to, which zpolicy reads as one.
// git's setup reads the two keys from the common directory's `config` alone (no includes,
// no global file: check_repository_format_gently), and for a linked worktree only with
// `extensions.worktreeConfig`, then from the worktree's `config.worktree` as well.
//
// Returns the key that makes git stay where it was started, for the refusal
// ("core.bare = true (git config 'F' line N)"), or none. Each file is read where
// `canonical` takes it, through a symlink as git's setup reads it; one that cannot be
// read (`canonical` gives none, or it is no regular file) may say either: that is returned
// too ("what 'F' may say (…)"), and git taken to stay where it was started (review R24-2).
// `gitdir` is the git directory, `common` its common directory (`gitdir` itself when it
// names none), `tops` the worktree tops whose `.git` leads to it (none: git is not started
// in a worktree of it, and runs its hooks in the git directory). `canonical` is the
// canonical form of an absolute path, or none where it cannot be vouched for (a directory
// named through a link the sandbox could re-point holds nothing for certain).
std::optional<std::string> git_stays_where_started(
    const std::string& gitdir, const std::string& common, const std::vector<std::string>& tops,
    const std::function<std::optional<std::string>(const std::string&)>& canonical);

// A config value as git_config_bool reads it: no value (`bare` without `=`), `true`,
// `yes`, `on` and a non-zero integer are true; `false`, `no`, `off`, the empty string and
// zero false. git dies on anything else, which is taken for true here (more refusals,
// never fewer).
bool git_config_true(const std::optional<std::string>& value);

}  // namespace zpolicy::compiler
