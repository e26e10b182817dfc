#pragma once

#include <optional>
#include <string>

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

}  // namespace zpolicy::compiler
