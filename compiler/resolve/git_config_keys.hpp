#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/resolve/git_config.hpp"

namespace zpolicy::compiler {

// What a config variable names that the host's next git command runs, reads as config,
// or connects to (git-config(1); the table in git_config_keys.cpp gives each key's
// reason). HooksDir: a directory whose hooks git runs. Command: a value git hands to a shell
// or executes. GitCommand: an alias without '!', which runs git with those arguments
// (git_arguments). Url: a repository git fetches from or pushes to (git_url); UrlRewrite:
// `url.<base>.insteadOf`, whose subsection is the URL that replaces the value.
enum class GitConfigRole {
  None,
  HooksDir,
  Include,
  WorkTree,
  Command,
  GitCommand,
  Url,
  UrlRewrite
};
struct GitConfigKey {
  GitConfigRole role = GitConfigRole::None;
  std::string_view why;  // what git does with the value, for refusals
};
GitConfigKey git_config_key(const GitConfigEntry& e);
inline GitConfigRole git_config_role(const GitConfigEntry& e) { return git_config_key(e).role; }

// What a command value names, read as `sh -c` reads it (git_command_words.cpp): the
// words after POSIX quote removal (`"tools"/fsm` and `to"ol"s/fsm` are `tools/fsm`), each
// split at '=' and ':', that contain a '/' (`words`; an option word, `-x/y`, names none);
// the scripts an interpreter (sh, bash, python3, perl, ruby, node, …, wherever it stands:
// after `env`, behind `timeout` or `nice`, red team A15-G1) is given by an absolute or `~/` path
// (`scripts`, which must lie outside every writable root: interpreters load code next to their
// script). `unreadable` says why zpolicy will not read the value without a shell, and then nothing
// else is given: a command substitution, `cd`/`pushd`/`popd`, `eval`/`source`/`.`, input
// redirection, an assignment to a loader variable (PYTHONPATH, LD_PRELOAD, …), the shell's
// operators together with a path, a path with a parameter expansion, a glob or `~user`, and an
// interpreter given a relative script, a module or include option (`-m`, `-I`, `-M`,
// `-r`, `-l`, `--require`, glued or not), no program, or inline code that loads anything
// by name (red team A14B-2, A14B-3), and a program file sed or awk is given (`-f`) by a
// relative name (A15-G2; an absolute one is a script). `sh -c STRING` is read in turn.
struct CommandPaths {
  std::vector<std::string> words;
  std::vector<std::string> scripts;
  // The arguments of each simple command whose program is git, escaped for git_arguments
  // (`git -c core.fsmonitor=x status` sets a key as a non-'!' alias's `-c` does).
  std::vector<std::string> git_commands;
  std::optional<std::string> unreadable;
};
CommandPaths paths_in_command(std::string_view value);

// A non-'!' alias's value read as git reads it (git_arguments.cpp): split as git's
// split_cmdline splits it (quotes and backslashes, no shell), the global options an alias
// may carry, then the subcommand's options that run a program. `config`: each `-c
// key[=value]` (git applies it to the command the alias runs); `commands`: each value git
// hands to a shell (`difftool -x`/`--extcmd`, `rebase -x`/`--exec`, `--upload-pack`,
// `--receive-pack`, `bisect run`, `submodule foreach`, filter-branch's filters, …), with
// `in_submodules` when git runs it in each submodule's directory; `directories`: a
// directory git takes programs from (`--exec-path=`); `templates`: one whose hooks
// `git init`/`git clone` copy into a git directory (`--template=`).
// `unreadable` says why zpolicy will not read the value (a bad quote, `--config-env`
// setting a key that runs or names something, from the host's environment).
struct GitArgumentCommand {
  std::string option;  // as written: "--extcmd", "bisect run"
  std::string text;    // a shell command
  bool in_submodules = false;
};
struct GitArguments {
  std::vector<std::pair<std::string, std::optional<std::string>>> config;
  std::vector<GitArgumentCommand> commands;
  std::vector<std::string> directories;  // --exec-path: programs git runs by name
  std::vector<std::string> templates;    // --template: hooks `git init` copies
  std::optional<std::string> unreadable;
};
GitArguments git_arguments(std::string_view value);

// What a remote URL makes the host's git run or read (git_url.cpp, as transport.c and
// connect.c classify it): `ext::CMD` runs CMD (git-remote-ext splits it at spaces, `% `
// a literal space; `command` is that argv quoted for paths_in_command); a local path
// (`../other`, `/srv/r.git`, `~/r`, `file:///srv/r`) makes git run upload-pack or
// receive-pack, and receive-pack's hooks, in that repository (`path`, still relative to
// where git runs); any other URL (`https://`, `ssh://`, `host:path`, `<helper>::…`)
// names nothing here. `unreadable` when zpolicy will not decide (`file://host/…`, `~user`).
struct GitUrl {
  std::optional<std::string> command;
  std::optional<std::string> path;
  std::optional<std::string> unreadable;
};
GitUrl git_url(std::string_view url);

// Whether a script whose first line is `first_line` runs under an interpreter that loads
// code from the script's own directory or the one it runs in (red team A15-G4): a `#!`
// line naming python, node, perl, ruby, php, lua, … (directly or through `env`, its
// options and assignments skipped). python puts the script's directory first on its
// import path, node looks for `node_modules` there, php and lua search the working
// directory. A shell loads nothing by itself and does not count.
bool loads_code_beside_script(std::string_view first_line);

}  // namespace zpolicy::compiler
