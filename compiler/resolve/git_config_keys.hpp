#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/resolve/git_config.hpp"

namespace zpolicy::compiler {

// What a config variable names that the host's next git command runs or reads as config
// (git-config(1)). Command covers every key whose value git hands to a shell or executes:
// by name (core.editor, core.pager, core.askPass, core.gitProxy, core.fsmonitor,
// diff.external, filter.<d>.clean|smudge|process, merge.<d>.driver, diff.<d>.textconv,
// credential[.<url>].helper, gpg[.<fmt>].program, imap.tunnel, *.browser, man.viewer,
// instaweb.httpd, remote.<r>.uploadpack|receivepack, uploadpack.packObjectsHook,
// sendemail[.<id>].smtpServer, interactive.diffFilter), by a name ending in "command"
// or "cmd" (core.sshCommand, core.alternateRefsCommand, hook.<h>.command,
// trailer.<t>.command|cmd, gpg.ssh.defaultKeyCommand, sendemail.*Cmd, the tools'
// <tool>.cmd), the tools' <tool>.path (difftool, mergetool, browser, man), every
// pager.<cmd>, and an alias or submodule.<s>.update that starts with '!'.
enum class GitConfigRole { None, HooksDir, Include, WorkTree, Command };
GitConfigRole git_config_role(const GitConfigEntry& e);

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
  std::optional<std::string> unreadable;
};
CommandPaths paths_in_command(std::string_view value);

// Whether a script whose first line is `first_line` runs under an interpreter that loads
// code from the script's own directory or the one it runs in (red team A15-G4): a `#!`
// line naming python, node, perl, ruby, php, lua, … (directly or through `env`, its
// options and assignments skipped). python puts the script's directory first on its
// import path, node looks for `node_modules` there, php and lua search the working
// directory. A shell loads nothing by itself and does not count.
bool loads_code_beside_script(std::string_view first_line);

}  // namespace zpolicy::compiler
