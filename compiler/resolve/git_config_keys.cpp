// git_config_key (git_config_keys.hpp): what git does with each config key that runs a
// program, reads config or connects to a repository, from git-config(1) and the sources
// it cites. A key no rule matches is data to git (a name, a flag, a file it reads as
// text). `init.templateDir` is read from the global and system config only by git, which
// resolution reads too since red team R18-6: it counts as a hooks directory.
#include <algorithm>

#include "compiler/resolve/git_config_keys.hpp"

namespace zpolicy::compiler {

namespace {

using Role = GitConfigRole;

// Which subsection a rule's key has: none (`core.editor`), some (`diff.<driver>.textconv`)
// or either (`credential[.<url>].helper`).
enum class Sub { None, Some, Any };

// A rule: section ("" any), subsection, name ("" any; a leading '*' matches a suffix).
struct Rule {
  std::string_view section;
  Sub sub;
  std::string_view name;
  Role role;
  std::string_view why;
};

// In order: the first match decides. Aliases and submodule.<s>.update are decided by
// their value first (git_config_key), then here.
constexpr Rule kRules[] = {
    {"core", Sub::None, "hookspath", Role::HooksDir, "git runs the hooks in this directory"},
    {"init", Sub::None, "templatedir", Role::HooksDir,
     "`git init` and `git clone` copy this directory's hooks into each repository they make"},
    {"core", Sub::None, "worktree", Role::WorkTree,
     "git runs commands and hooks from this directory"},
    {"include", Sub::None, "path", Role::Include, "git reads this file as config"},
    {"includeif", Sub::Some, "path", Role::Include,
     "git reads this file as config when the condition holds"},
    {"remote", Sub::Some, "url", Role::Url,
     "`git fetch` and `git push` connect to this repository: `ext::` runs a command, a local "
     "path runs upload-pack or receive-pack and its hooks in that repository"},
    {"remote", Sub::Some, "pushurl", Role::Url,
     "`git push` connects to this repository (receive-pack and its hooks run there)"},
    {"svn-remote", Sub::Some, "url", Role::Url,
     "`git svn dcommit` commits to this Subversion repository, whose hooks a local "
     "(`file://`) one runs"},
    {"svn-remote", Sub::Some, "pushurl", Role::Url,
     "`git svn dcommit` commits to this Subversion repository, whose hooks a local "
     "(`file://`) one runs"},
    {"submodule", Sub::Some, "url", Role::Url,
     "`git submodule update` clones and fetches from this repository"},
    {"branch", Sub::Some, "remote", Role::Remote,
     "`git fetch`, `git pull` and `git push` on that branch connect to this remote, or, when "
     "no remote with a url has this name, to the URL or path it is"},
    {"branch", Sub::Some, "pushremote", Role::Remote,
     "`git push` on that branch connects to this remote, or to the URL or path it is"},
    {"remote", Sub::None, "pushdefault", Role::Remote,
     "`git push` connects to this remote, or to the URL or path it is"},
    // In any subsection too: `[remotes "a"] b = …` is the group `a.b` (fetch.c compares the
    // key after `remotes.`; red team A16-7).
    {"remotes", Sub::Any, "", Role::RemoteGroup,
     "`git fetch <group>` and `git remote update` connect to each remote, URL or path listed"},
    // git reads them from the system and global config only (trace2/tr2_cfg.c).
    {"trace2", Sub::None, "*target", Role::TraceTarget,
     "git appends its trace to this file, or to files in this directory, or to this socket"},
    {"maintenance", Sub::None, "repo", Role::ScheduledRepository,
     "the scheduled `git maintenance` (`git for-each-repo`, which systemd's timer, cron or "
     "launchd runs hourly) runs git in this directory, in the repository it finds there: "
     "its config's commands, its remotes' programs, its hooks"},
    {"url", Sub::Some, "insteadof", Role::UrlRewrite,
     "git replaces URLs that start with the value by the subsection"},
    {"url", Sub::Some, "pushinsteadof", Role::UrlRewrite,
     "`git push` replaces URLs that start with the value by the subsection"},
    {"remote", Sub::Some, "uploadpack", Role::Command,
     "`git fetch` runs it, with the shell, on a local or ssh remote"},
    {"remote", Sub::Some, "receivepack", Role::Command,
     "`git push` runs it, with the shell, on a local or ssh remote"},
    {"pager", Sub::None, "", Role::Command, "git runs it with the shell as that command's pager"},
    {"difftool", Sub::Some, "path", Role::Command, "`git difftool` runs it"},
    {"difftool", Sub::Some, "cmd", Role::Command, "`git difftool` runs it with the shell"},
    {"mergetool", Sub::Some, "path", Role::Command, "`git mergetool` runs it"},
    {"mergetool", Sub::Some, "cmd", Role::Command, "`git mergetool` runs it with the shell"},
    {"browser", Sub::Some, "path", Role::Command, "`git web--browse` runs it"},
    {"browser", Sub::Some, "cmd", Role::Command, "`git web--browse` runs it with the shell"},
    {"man", Sub::Some, "path", Role::Command, "`git help` runs it"},
    {"man", Sub::Some, "cmd", Role::Command, "`git help` runs it with the shell"},
    {"guitool", Sub::Some, "cmd", Role::Command, "`git gui` runs it with the shell"},
    // The programs other tools that git runs take from git's config (review R25-6).
    // git-lfs's custom transfer agent, `lfs.customtransfer.<name>.path`, run by git-lfs (the
    // filter git runs) from the directory git runs in; its `lfs.extension.<name>.clean` and
    // `.smudge` are read below by name.
    {"lfs", Sub::Some, "path", Role::Command,
     "git-lfs runs it as a custom transfer agent, from the directory git runs in"},
    // git-secrets, installed as hooks, runs each of its providers with the shell.
    {"secrets", Sub::None, "providers", Role::Command,
     "git-secrets runs it with the shell from its hooks"},
    // git-svn's `--authors-prog` as config (`svn.authorsProg`, `svn-remote.<r>.authorsProg`).
    {"", Sub::Any, "authorsprog", Role::Command,
     "`git svn fetch` runs it for each Subversion author"},
    // By name, in any section and subsection: core.sshCommand, core.alternateRefsCommand,
    // hook.<h>.command, trailer.<t>.command|cmd, gpg.ssh.defaultKeyCommand,
    // diff.<d>.command, sendemail[.<id>].toCmd|ccCmd|headerCmd|sendmailCmd.
    {"", Sub::Any, "*command", Role::Command, "git runs it with the shell"},
    {"", Sub::Any, "*cmd", Role::Command, "git runs it with the shell"},
    {"", Sub::Any, "editor", Role::Command,
     "core.editor, sequence.editor: git runs it with the shell to edit a message"},
    {"", Sub::Any, "pager", Role::Command, "core.pager: git runs it with the shell"},
    {"", Sub::Any, "askpass", Role::Command, "core.askPass: git runs it for credentials"},
    {"", Sub::Any, "gitproxy", Role::Command, "core.gitProxy: git runs it for git:// remotes"},
    {"", Sub::Any, "fsmonitor", Role::Command,
     "core.fsmonitor: `git status` runs it as a hook (a path, not a boolean)"},
    {"", Sub::Any, "external", Role::Command, "diff.external: `git diff` runs it"},
    {"", Sub::Any, "clean", Role::Command, "filter.<d>.clean: git runs it with the shell"},
    {"", Sub::Any, "smudge", Role::Command, "filter.<d>.smudge: git runs it with the shell"},
    {"", Sub::Any, "process", Role::Command,
     "filter.<d>.process: git runs it with the shell as a long-running filter"},
    {"", Sub::Any, "driver", Role::Command, "merge.<d>.driver: git runs it with the shell"},
    {"", Sub::Any, "textconv", Role::Command, "diff.<d>.textconv: git runs it with the shell"},
    {"", Sub::Any, "helper", Role::Command,
     "credential[.<url>].helper: git runs it (a path or '!' command)"},
    {"", Sub::Any, "program", Role::Command, "gpg[.<format>].program: git runs it to sign"},
    {"", Sub::Any, "tunnel", Role::Command, "imap.tunnel: `git imap-send` runs it"},
    {"", Sub::Any, "browser", Role::Command, "web.browser, instaweb.browser: git runs it"},
    {"", Sub::Any, "viewer", Role::Command, "man.viewer: `git help` runs it"},
    {"", Sub::Any, "httpd", Role::Command, "instaweb.httpd: `git instaweb` runs it"},
    {"", Sub::Any, "uploadpack", Role::Command, "git runs it to serve a fetch"},
    {"", Sub::Any, "receivepack", Role::Command, "git runs it to receive a push"},
    {"", Sub::Any, "packobjectshook", Role::Command,
     "uploadpack.packObjectsHook: upload-pack runs it"},
    {"", Sub::Any, "smtpserver", Role::Command, "sendemail.smtpServer: a path is run as sendmail"},
    {"", Sub::Any, "difffilter", Role::Command,
     "interactive.diffFilter: `git add -p` runs it with the shell"},
};

bool name_matches(std::string_view pattern, std::string_view name) {
  if (pattern.empty()) return true;
  if (pattern.front() != '*') return pattern == name;
  pattern.remove_prefix(1);
  return name.size() >= pattern.size() && name.substr(name.size() - pattern.size()) == pattern;
}

}  // namespace

GitConfigKey git_config_key(const GitConfigEntry& e) {
  const std::string section = e.section(), name = e.name();
  const bool has_sub = e.subsection().has_value();
  const bool bang = e.value && !e.value->empty() && e.value->front() == '!';
  if (section == "alias" && !has_sub)
    return bang ? GitConfigKey{Role::Command, "the alias runs it with the shell"}
                : GitConfigKey{Role::GitCommand,
                               "the alias runs git with these arguments, whose options may run "
                               "programs"};
  if (section == "submodule" && has_sub && name == "update")
    return bang ? GitConfigKey{Role::Command,
                               "`git submodule update` runs it with the shell in the "
                               "submodule's directory",
                               true}
                : GitConfigKey{};
  for (const Rule& r : kRules) {
    if (!r.section.empty() && r.section != section) continue;
    if ((r.sub == Sub::None && has_sub) || (r.sub == Sub::Some && !has_sub)) continue;
    if (name_matches(r.name, name)) return {r.role, r.why};
  }
  return {};
}

std::optional<std::string> git_trace_path(std::string_view value) {
  if (value.starts_with("af_unix:")) {
    value.remove_prefix(8);
    if (value.starts_with("stream:"))
      value.remove_prefix(7);
    else if (value.starts_with("dgram:"))
      value.remove_prefix(6);
  }
  if (!value.starts_with("/")) return std::nullopt;
  return std::string(value);
}

}  // namespace zpolicy::compiler
