#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/resolve/git_config.hpp"

namespace zpolicy::compiler {

// What a config variable names that the host's next git command runs, reads as config,
// or connects to (git-config(1); the table in git_config_keys.cpp gives each key's
// reason). HooksDir: a directory whose hooks git runs. Command: a value git hands to a shell
// or executes. GitCommand: an alias without '!', which runs git with those arguments
// (git_arguments). Url: a repository git fetches from or pushes to (git_url); UrlRewrite:
// `url.<base>.insteadOf`, whose subsection is the URL that replaces the value. Remote: the
// remote a plain `git push`/`fetch`/`pull` uses (`branch.<b>.remote`, `branch.<b>.pushRemote`,
// `remote.pushDefault`); a value that names no remote with a url is a URL or a path to git
// (remote.c's remote_get, red team A15C-1). RemoteGroup: `remotes.<group>`, a list of such
// values that `git fetch <group>` and `git remote update` fetch from. ScheduledRepository:
// `maintenance.repo`, a directory git's scheduled maintenance runs git in (`git
// for-each-repo`: `git -C <dir> maintenance run`), in the repository git's discovery finds
// from it. TraceTarget: `trace2.normalTarget`, `perfTarget`, `eventTarget`, a file (or a
// directory of files, or a socket) git writes its traces to (git_trace_path).
enum class GitConfigRole {
  None,
  HooksDir,
  Include,
  WorkTree,
  Command,
  GitCommand,
  Url,
  UrlRewrite,
  Remote,
  RemoteGroup,
  ScheduledRepository,
  TraceTarget
};
struct GitConfigKey {
  GitConfigRole role = GitConfigRole::None;
  std::string_view why;  // what git does with the value, for refusals
  // A Command git runs in a submodule's directory rather than at a top
  // (`submodule.<name>.update = !cmd`: submodule--helper's run_update_command sets the
  // child's directory to the submodule's path, which the worktree's `.gitmodules` maps the
  // name to): its relative words resolve there, as `submodule foreach`'s do (red team R25-1).
  bool in_submodules = false;
};
GitConfigKey git_config_key(const GitConfigEntry& e);
inline GitConfigRole git_config_role(const GitConfigEntry& e) { return git_config_key(e).role; }

// A non-'!' alias's value read as git reads it (git_arguments.cpp): split as git's
// split_cmdline splits it (quotes and backslashes, no shell), the global options an alias
// may carry, then the subcommand's options that run a program. `config`: each `-c
// key[=value]` (git applies it to the command the alias runs); `commands`: each value git
// hands to a shell (`difftool -x`/`--extcmd`, `rebase -x`/`--exec`, `--upload-pack`,
// `--receive-pack`, `bisect run`, `submodule foreach`, filter-branch's filters, …), with
// `in_submodules` when git runs it in each submodule's directory; `directories`: a
// directory git takes programs from (`--exec-path=`); `templates`: one whose hooks
// `git init`/`git clone` copy into a git directory (`--template=`).
// `repositories`: what each subcommand that connects takes for its repository (a remote's
// name or a URL/path; red team A15B-2, A15C-2..5), read by one option matcher as git's
// parse-options reads the subcommand's options (git_arguments.cpp); `remote add NAME URL`
// and `remote set-url NAME URL` are read as `-c remote.NAME.url=URL` (A15C-7), and the
// names `remote rename`/`remove` or `config --unset`/`--remove-section` take away from the
// configuration in `deconfigured_remotes` (a later `git push NAME` takes NAME for a path).
// `unreadable` says why zpolicy will not read the value (a bad quote, `--config-env`
// setting a key that runs or names something, from the host's environment, an option of a
// subcommand that connects which zpolicy does not know or which abbreviates more than one,
// a repository operand that only a shell expands, A15C-8).
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
  // The repository a subcommand connects to, as written: the first operand of push, fetch,
  // pull, ls-remote, clone, fetch-pack and send-pack (every operand of `fetch --multiple`
  // and `remote update`, `remote show`/`prune`'s), push's `--repo`, archive's `--remote`,
  // request-pull's URL, `submodule add`'s and `subtree add/pull/push`'s repository. git takes one that names no configured remote for a URL or a path
  // (red team A15B-2).
  std::vector<std::string> repositories;
  std::vector<std::string> deconfigured_remotes;
  // The subcommand and the words after it, for the caller to read as another alias's when
  // one has that name (`alias.t = pp pdX` with `alias.pp = push -q`); `expanded`: one of
  // the words is not a literal.
  struct Subcommand {
    std::string name;
    std::vector<std::string> arguments;
    bool expanded = false;
  };
  std::optional<Subcommand> subcommand;
  std::optional<std::string> unreadable;
};
// Where a word of a git command line came from, when a shell gave it (git_command_words):
// a literal, an expansion only the shell knows (`$R`, `${R:-x}`, a glob), or the
// arguments the user gives the alias (`$1`, `"$@"`), which are the user's own words.
enum class GitWordOrigin { Literal, Expansion, Argument };
// `origins`: per word of `value` (none: every word is a literal); `more_arguments`: the
// program before git adds words at run time (`xargs git push`, `find -exec git push {}`).
GitArguments git_arguments(std::string_view value, const std::vector<GitWordOrigin>& origins = {},
                           bool more_arguments = false);

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

// The path a trace target names, for `$GIT_TRACE*` and the `trace2.*Target` keys alike
// (trace.c, trace2/tr2_dst.c): an absolute path, a file or a directory of files git opens
// with O_APPEND|O_CREAT through links, or the socket of `af_unix:[stream:|dgram:]PATH`.
// Any other value is a descriptor, a switch or a list, and names no file.
std::optional<std::string> git_trace_path(std::string_view value);

}  // namespace zpolicy::compiler
