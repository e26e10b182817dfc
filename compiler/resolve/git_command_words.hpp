#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/resolve/git_config_keys.hpp"

namespace zpolicy::compiler {

// What a command value git runs names (git_config_keys.hpp says which values), read as
// `sh -c` reads it (git_command_words.cpp):
// * `words`: the words after POSIX quote removal (`"tools"/fsm` and `to"ol"s/fsm` are
//   `tools/fsm`), each split at '=' and ':', that contain a '/' (an option word, `-x/y`,
//   names none), and the file a known program's script or config option names with or
//   without a '/' (`jq -f q.jq`, `ssh -F`, `xargs -a`, `vim -u`; red team A15-G2):
//   protected, with a placeholder when missing;
// * `bare`: the other pieces without a '/' (`cfg.toml`, `--config=cfg.toml`), which name a
//   file at the worktree top if one exists there: protected only then (A15-G2);
// * `scripts`: the scripts an interpreter (sh, bash, python3, perl, ruby, node, …) is given
//   by an absolute or `~/` path, which must lie outside every writable root: interpreters
//   load code next to their script (A14B-2); so are sed's and awk's program files (`-f`,
//   gawk's `-i`, `-l`, `-E`), a relative one refused (A15-G2).
// The program of a simple command is its first word after assignments, reserved words and
// the wrappers zpolicy reads exactly (env, exec, command, builtin, nohup, time). Any other
// program may be a wrapper (`timeout 10 python3 -m x`, `nice`, `stdbuf -o0`, `xargs`; red
// team A15-G1): its later words are read again from the first that names an interpreter,
// sed or awk, a program from the script-option table, a project runner or env, as if that
// one ran; a later assignment to a
// loader variable refuses, and a word holding a blank is read as a command of its own (what
// `su -c`, `watch`, `sg` or an assignment such as `PAGER='python3 -m x'` hand to a shell).
// `unreadable` says why zpolicy will not read the value without a shell, and then nothing
// else is given: a command substitution, `cd`/`pushd`/`popd`, `eval`/`source`/`.`, input
// redirection, an assignment to a loader variable (PYTHONPATH, LD_PRELOAD, …), the shell's
// operators together with a path, a path with a parameter expansion, a glob or `~user`, a
// program that runs the project at the working directory (make, npm, npx, yarn, bundle,
// poetry, cargo, …: A15-G2), and an interpreter given a relative script, a module or include
// option (`-m`, `-I`, `-M`, `-r`, `-l`, `--require`, glued or not), no program, or inline
// code that loads anything by name (red team A14B-2, A14B-3). `sh -c STRING` is read as a
// command in turn.
struct CommandPaths {
  std::vector<std::string> words;
  std::vector<std::string> bare;
  std::vector<std::string> scripts;
  // The arguments of each simple command whose program is git, escaped for git_arguments
  // (`git -c core.fsmonitor=x status` sets a key as a non-'!' alias's `-c` does; A15-G3),
  // with where each word came from and whether the program before git adds words (xargs,
  // find, parallel; red team A15C-8, A15C-10).
  struct GitCommand {
    std::string line;
    std::vector<GitWordOrigin> origins;
    bool more_arguments = false;
    bool operator==(const GitCommand&) const = default;
  };
  std::vector<GitCommand> git_commands;
  std::optional<std::string> unreadable;
};
CommandPaths paths_in_command(std::string_view value);

// What the `#!` line of an executable file runs (red team A15-G4): the interpreter's path
// as written, and whether that interpreter (directly, or the program `env` is given) is one
// that loads code next to its script or from the working directory (python, node, perl,
// ruby, php, lua, …, or a project runner such as `uv run`; not the shells, which load
// nothing by themselves). None for a line without `#!`.
struct Shebang {
  std::string interpreter;
  bool loads_code_by_name = false;
};
std::optional<Shebang> shebang_of(std::string_view first_line);

}  // namespace zpolicy::compiler
