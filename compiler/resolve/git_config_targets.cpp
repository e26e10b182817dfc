#include "compiler/resolve/git_config_targets.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "compiler/resolve/git_command_words.hpp"
#include "compiler/resolve/git_config.hpp"
#include "compiler/resolve/git_config_keys.hpp"
#include "compiler/resolve/git_index.hpp"
#include "compiler/resolve/gitdir.hpp"

namespace zpolicy::compiler {

namespace {

struct Located {
  GitConfigEntry entry;
  std::string file;  // canonical
  // For a key a non-'!' alias sets with `-c`: "alias.x's -c", said in refusals; for one
  // the caller's environment gives (`file` its variable): "exported".
  std::string via = {};
  // Read through an `includeIf`, whose condition zpolicy does not decide.
  bool conditional = false;
};

std::string directory_of(const std::string& file) {
  return file.substr(0, std::max<size_t>(file.rfind('/'), 1));
}

// A path-valued config value after git's interpolate_path (`~/`, `~`); none, with `why`
// set, for what zpolicy does not expand: `~user` (another user's home, looked up by git
// in the host's password database) and `%(prefix)/` (git's install prefix).
std::optional<std::string> interpolated(const std::string& value, const std::string& home,
                                        std::string& why) {
  if (value.rfind("%(prefix)/", 0) == 0) {
    why = "'%(prefix)/' (git's install prefix) is not expanded by zpolicy";
    return std::nullopt;
  }
  if (value == "~" || value.rfind("~/", 0) == 0) return home + value.substr(1);
  if (!value.empty() && value[0] == '~') {
    why = "'~user/' (another user's home) is not expanded by zpolicy";
    return std::nullopt;
  }
  return value;
}

class Walk {
 public:
  Walk(const GitConfigSources& src, const std::string& home, const GitCanonical& canonical,
       const GitRefusal& refuse, GitConfigReads& all)
      : src_(src), home_(home), canonical_(canonical), refuse_(refuse), all_(all) {}

  std::vector<GitConfigTarget> run() {
    for (size_t i = 0; i < src_.files.size(); ++i)
      read(src_.files[i], {src_.files[i], 0, 0}, 0, false, i < src_.shared);
    // The caller's exported settings, which every git of the caller's shell applies after
    // the files, and in each submodule's directory too, as an alias's `-c` settings: an
    // absolute `include.path` is read, a relative `core.hooksPath` resolves against each
    // top. Only judged by ZP003 from the working directory before, `GIT_CONFIG_PARAMETERS`'s
    // `include.path` of a host file saying `core.hooksPath = .husky` and including
    // `WS/local.gitconfig` left both to the command, and the host's `git commit` and `git
    // status` in that shell ran its hook and its `core.fsmonitor` (red team A29C-1).
    for (const auto& s : src_.environment) {
      by_var_[s.entry.var].push_back(entries_.size());
      if (git_config_role(s.entry) == GitConfigRole::UrlRewrite)
        rewrites_.push_back(entries_.size());
      entries_.push_back({s.entry, s.variable, "exported"});
    }
    if (src_.scheduled) {
      // And what they name by an absolute path, which git takes for every repository, one
      // elsewhere too (red team A25-5: `core.hooksPath = WS/hooks` in `~/.gitconfig`, read
      // only along with a git directory, left `hooks/pre-commit` to a command in a workspace
      // without repositories, and the host's `git commit` in another repository ran it).
      // Relative ones resolve against the repositories' tops, read with each git directory,
      // and against `tops`, the top of any repository (an exported `$GIT_WORK_TREE`).
      for (size_t i = 0; i < entries_.size(); ++i) {
        const Located e = entries_[i];
        if (git_config_role(e.entry) == GitConfigRole::ScheduledRepository && e.entry.value)
          scheduled_repository(e, *e.entry.value);
        else
          use(e, src_.tops, 0);
      }
      return std::move(targets_);
    }
    std::vector<std::string> tops = src_.tops;
    for (const auto& e : entries_)
      if (git_config_role(e.entry) == GitConfigRole::WorkTree)
        if (auto p = path_value(e, src_.gitdir)) tops.push_back(*p);
    // By index and by copy: an include an alias's `-c` names appends to the entries.
    for (size_t i = 0; i < entries_.size(); ++i) {
      const Located e = entries_[i];
      use(e, tops, 0);
    }
    legacy_remotes(tops);
    submodules(tops);
    // A name that is no remote with a url is a URL or a path to git (remote.c's
    // remote_get): read as a remote's URL is (red team A15B-2, A15C-1). Decided once every
    // name a command takes away from the configuration is known.
    for (const auto& [e, name] : remote_names_)
      if (!configured_remote(name)) url(e, name, tops, false);
    return std::move(targets_);
  }

 private:
  static ir::SourceLoc loc(const Located& e) { return {e.file, e.entry.line, 1}; }

  static std::string where(const Located& e) {
    return "git config '" + e.file + "' line " + std::to_string(e.entry.line) + ": " +
           (e.via.empty() ? "" : e.via + " ") + e.entry.var;
  }

  // What entry `e` names, by its role; `depth` counts `-c` settings of aliases set by
  // `-c` in turn.
  void use(const Located& e, const std::vector<std::string>& tops, int depth) {
    // Every remote a section names is one `git fetch --all` and `git maintenance`'s
    // prefetch fetch from: one with no url is its name taken for a path (A15C-6).
    if (e.entry.section() == "remote" && e.entry.subsection())
      remote_names_.push_back({e, *e.entry.subsection()});
    const GitConfigKey key = git_config_key(e.entry);
    switch (key.role) {
      case GitConfigRole::HooksDir:
        if (e.entry.value && relative_where_started(e, *e.entry.value, "")) break;
        if (e.entry.value && relative_in_submodules(e, *e.entry.value)) break;
        for (const auto& top : tops)
          if (auto p = path_value(e, top)) target(*p, e, true);
        // Without a top (GitConfigSources::scheduled), an absolute one still names itself.
        if (tops.empty() && e.entry.value && !e.entry.value->empty() &&
            ((*e.entry.value)[0] == '/' || (*e.entry.value)[0] == '~'))
          if (auto p = path_value(e, "/")) target(*p, e, true);
        break;
      case GitConfigRole::Command:
        // A `-c` setting runs in each submodule's directory too (relative_in_submodules).
        if (e.entry.value)
          command(e, "", *e.entry.value, tops,
                  key.in_submodules || (!e.via.empty() && records_submodules()));
        break;
      case GitConfigRole::GitCommand:
        git_command(e, tops, depth);
        break;
      case GitConfigRole::Url:
        if (e.entry.value) url(e, *e.entry.value, tops, false);
        break;
      case GitConfigRole::UrlRewrite:
        url(e, e.entry.subsection().value_or(""), tops, true);
        break;
      case GitConfigRole::Remote:
        if (e.entry.value) remote_names_.push_back({e, *e.entry.value});
        break;
      case GitConfigRole::RemoteGroup:
        if (e.entry.value)
          for (const auto& name : blank_separated(*e.entry.value)) remote_names_.push_back({e, name});
        break;
      case GitConfigRole::TraceTarget:
        // An absolute path only; git takes no other for a file (git_trace_path).
        if (e.entry.value)
          if (auto p = git_trace_path(*e.entry.value)) target(*p, e);
        break;
      case GitConfigRole::ScheduledRepository:
        // Read once, from the files the scheduler's git reads (GitConfigSources::scheduled).
        break;
      case GitConfigRole::Include:
        // Set by an alias's `-c` or the caller's environment: git reads it only by an
        // absolute path ("relative config includes must come from files"); the files' own
        // are read by read().
        if (!e.via.empty() && e.entry.value && !e.entry.value->empty() &&
            ((*e.entry.value)[0] == '/' || (*e.entry.value)[0] == '~'))
          if (auto p = path_value(e, "/")) read(*p, loc(e), 1, e.entry.section() == "includeif");
        break;
      case GitConfigRole::WorkTree:
      case GitConfigRole::None:
        break;
    }
  }

  void target(const std::string& lexical, const Located& e, bool hooks = false) {
    if (auto c = canonical_(lexical, loc(e), where(e)))
      targets_.push_back({*c, loc(e), hooks, false, false, false, where(e)});
  }

  // A directory git's scheduled maintenance runs git in (`maintenance.repo`, which `git
  // maintenance register` and `start` add to the global config): `git for-each-repo` runs
  // `git -C <dir> maintenance run` there, whose git finds its repository by discovery and
  // runs what its config names (a remote's `uploadpack`, `core.sshCommand`, the hooks of the
  // refs it updates). With `maintenance.repo = WS/old`, a repository since removed, the
  // command made `old` a repository with `remote.origin.uploadpack` of its own and
  // `maintenance.prefetch` enabled, and the host's next scheduled maintenance ran it (red
  // team A25-1). A relative one is taken against the home, where systemd's user units and
  // cron start the scheduler; `~/` expanded as newer gits do (2.39 takes the value as it
  // is: against the home, a directory named `~`, which only a home in a writable root
  // could hold, and ZP003 refuses that).
  void scheduled_repository(const Located& e, const std::string& value) {
    std::string why;
    const auto p = interpolated(value, home_, why);
    if (!p) return refuse(e, value, why);
    if (p->empty()) return;  // git -C "" stays where it is: the scheduler's directory
    if ((*p)[0] != '/' && (home_.empty() || home_[0] != '/'))
      return refuse(e, value,
                    "names a directory relative to where the scheduler runs git, "
                    "and the home it starts in is not known");
    const std::string lexical = (*p)[0] == '/' ? *p : home_ + "/" + *p;
    if (auto c = canonical_(lexical, loc(e), where(e)))
      targets_.push_back({*c, loc(e), false, false, true, false, where(e), {}, lexical, true});
  }

  void refuse(const Located& e, const std::string& value, const std::string& why) {
    refuse_(loc(e), where(e) + " = '" + value + "' " + why);
  }

  // Whether `word`, which `e` names (`as`: in which of its parts), is relative to the
  // directory git runs it in and git stays in the directory it was started in
  // (src_.stays_where_started): that is any directory below a top, a writable root's too,
  // so no path protected for the run is the one it names there; refused, once per entry
  // (red team A23C-3: `core.hooksPath = hooks` named `app/hooks` for the host's `git
  // update-ref` run in `app`).
  bool relative_where_started(const Located& e, const std::string& word, const std::string& as) {
    if (src_.stays_where_started.empty() || word.empty() || word[0] == '/' || word[0] == '~')
      return false;
    if (started_refused_.insert({e.file, e.entry.line, e.entry.var}).second)
      refuse(e, e.entry.value.value_or(""),
             as + "names '" + word + "' relative to the directory git runs it in, and git " +
                 "stays in the directory it is started in instead of going to the worktree " +
                 "top, by " + src_.stays_where_started + ": that may be any directory below '" +
                 src_.tops.front() + "', one the sandbox writes included; name it by an " +
                 "absolute path");
    return true;
  }

  // Whether `word`, which a `-c` setting of git's command line names (`e.via`: an alias's,
  // or a git command's in an alias's shell command), is relative in a repository with
  // submodules: git keeps `-c` settings for the git it runs in each submodule's directory
  // (GIT_CONFIG_PARAMETERS survives prepare_other_repo_env), and in theirs, where it takes a
  // relative hooks directory, as it takes a command's relative words (command():
  // `in_submodules`). Refused, as zpolicy does not follow submodules of submodules from
  // here (red team A26-3: `alias.st = -c core.fsmonitor=tools/fsm.sh status` was resolved
  // at the tops only, and the host's `git st` ran `lib/tools/fsm.sh`, the command's, in the
  // populated submodule `lib`). Without one, no git runs there: the sandbox cannot add a
  // gitlink to the protected index.
  bool relative_in_submodules(const Located& e, const std::string& word) {
    if (e.via.empty() || word.empty() || word[0] == '/' || word[0] == '~' || !records_submodules())
      return false;
    refuse(e, word,
           "names '" + word + "' relative to the directory git runs in, and git keeps " + e.via +
               " settings for the git it runs in each submodule's directory of this " +
               "repository's, and in theirs: name it by an absolute path");
    return true;
  }

  // An alias without '!': git runs git with its words (red team A14B-4).
  void git_command(const Located& e, const std::vector<std::string>& tops, int depth) {
    if (e.entry.value) git_command_line(e, *e.entry.value, tops, depth);
  }

  // `line` as git's own command line, given by `e` (an alias's value, or the arguments of
  // a `git` its shell command runs, `shell` saying where its words came from);
  // `in_submodules`: git runs it in each submodule's directory.
  void git_command_line(const Located& e, const std::string& line,
                        const std::vector<std::string>& tops, int depth,
                        const CommandPaths::GitCommand* shell = nullptr,
                        bool in_submodules = false) {
    const std::string& v = *e.entry.value;
    const GitArguments a = shell ? git_arguments(line, shell->origins, shell->more_arguments)
                                 : git_arguments(line);
    if (a.unreadable) return refuse(e, v, "is a git command zpolicy cannot follow: " + *a.unreadable);
    // What it names resolves against each submodule's directory, which zpolicy does not
    // enumerate (red team A15C-10: `submodule foreach git push pdQ`).
    if (in_submodules && (!a.repositories.empty() || !a.config.empty() || !a.commands.empty() ||
                          !a.directories.empty() || !a.templates.empty()))
      return refuse(e, v,
                    "runs git in each submodule's directory with a repository, a -c setting or "
                    "a program named on its command line, which resolve there, and zpolicy "
                    "does not enumerate submodules");
    deconfigured_.insert(a.deconfigured_remotes.begin(), a.deconfigured_remotes.end());
    if (!a.config.empty() && depth >= 3)
      return refuse(e, v, "sets an alias that sets config in turn, more than 3 deep");
    for (const auto& [var, value] : a.config)
      use({GitConfigEntry{var, value, e.entry.line}, e.file, e.entry.var + "'s -c"}, tops,
          depth + 1);
    for (const auto& c : a.commands) command(e, c.option, c.text, tops, c.in_submodules);
    for (const auto& d : a.directories) directory(e, d, tops, false);
    for (const auto& d : a.templates) directory(e, d, tops, true);
    for (const auto& r : a.repositories) remote_names_.push_back({e, r});
    if (a.subcommand) alias_of_subcommand(e, *a.subcommand, tops, depth);
  }

  // git runs an alias named as the subcommand with the words after it (no builtin has an
  // alias's name; reading one git would not run is only more): a non-'!' one is read with
  // them as one command line; a '!' one as its shell command with the words appended, as
  // git's `sh -c 'CMD "$@"'` runs it, but refused when the command reads them by position
  // (`"$1"`, `"$@"` inside a function), which are otherwise read as the user's own words.
  void alias_of_subcommand(const Located& e, const GitArguments::Subcommand& sub,
                           const std::vector<std::string>& tops, int depth) {
    std::string lower = sub.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string key = "alias." + lower;
    for (size_t k = 0; by_var_.count(key) && k < by_var_.at(key).size(); ++k) {
      const Located alias = entries_[by_var_.at(key)[k]];
      if (alias.entry.value) alias_with_words(e, *alias.entry.value, sub, tops, depth);
    }
  }

  void alias_with_words(const Located& e, const std::string& value,
                        const GitArguments::Subcommand& sub, const std::vector<std::string>& tops,
                        int depth) {
    const size_t first = value.find_first_not_of(" \t");
    const bool shell = first != std::string::npos && value[first] == '!';
    const std::string& v = *e.entry.value;
    if (sub.expanded) return refuse(e, v, "passes shell expansions to the alias '" + sub.name + "'");
    if (alias_depth_ >= 3) return refuse(e, v, "runs aliases of aliases more than 3 deep");
    struct Deeper {
      int& d;
      explicit Deeper(int& depth) : d(depth) { ++d; }
      ~Deeper() { --d; }
    } deeper(alias_depth_);
    if (shell) {
      if (sub.arguments.empty()) return;  // the alias's own line reads it
      for (size_t k = 0; k + 1 < value.size(); ++k)
        if (value[k] == '$' && std::string_view("0123456789@*{#").find(value[k + 1]) != std::string_view::npos)
          return refuse(e, v, "passes words to the shell alias '" + sub.name +
                                  "', which reads them by position, as zpolicy reads only the "
                                  "user's own");
      std::string line = value.substr(first + 1);
      for (const auto& word : sub.arguments) {
        line += " '";
        for (const char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
        line += "'";
      }
      return command(e, "alias " + sub.name, line, tops, false);
    }
    std::string line = value;
    for (const auto& word : sub.arguments) {
      line += ' ';
      if (word.empty()) line += "''";
      for (const char c : word) (line += '\\') += c;
    }
    git_command_line(e, line, tops, depth);
  }

  // The remotes git still reads from the git directory's `remotes/<name>` (`URL: …` lines)
  // and `branches/<name>` (`URL#branch`) files when the config gives the name no url
  // (remote.c's read_remotes_file, read_branches_file): their URLs are read as
  // `remote.<r>.url` values are, and their names count as configured. Those of the git
  // directory and its common directory, where git reads them, not of the directories of
  // the caller's system and global files. An entry that is a symlink is read through, as
  // git's fopen reads it, and its target protected as every config file (a dangling one
  // refuses: what the sandbox makes there would be read): with the host's
  // `.git/remotes/origin -> ../../.origin`, the command wrote `URL: WS/evil.git` into
  // `.origin` and the host's `git push origin` ran evil.git's post-receive hook (red team
  // A23-2).
  void legacy_remotes(const std::vector<std::string>& tops) {
    std::set<std::string> dirs;
    for (size_t i = src_.shared; i < src_.files.size(); ++i)
      dirs.insert(directory_of(src_.files[i]));
    for (const auto& dir : dirs)
      for (const bool branches : {false, true}) {
        const std::string sub = dir + (branches ? "/branches" : "/remotes");
        // git opens `remotes/<name>` by name, which search permission allows: one that is
        // there and cannot be listed, or whose listing fails part way, hides the files it
        // reads (as `modules`: review 23; list_git_level). Every name but `.` and `..`:
        // git reads `remotes/.x` for `git push .x` as it reads `remotes/origin` (remote.c
        // valid_remote_nick); skipped, the URL of the host's `remotes/.x` naming
        // `WS/evil.git` was left to the command to make, with a hook the host's `git push
        // .x` ran (red team A24-4).
        const GitLevel level = list_git_level(sub);
        if (level.error)
          refuse_({sub, 0, 0},
                  unlistable_git_level(sub, "the legacy remote files in", level.error));
        for (const auto& name : level.names)
          if (stopped_ || !legacy_remote_file(sub, name, branches, tops)) return;
      }
  }

  // One legacy remote file, `sub/name` (`sub` a `remotes` or `branches` directory): protected
  // as a config file, and its URLs read as `remote.<name>.url` values. False when the walk
  // stops (over the bounds of what is read).
  bool legacy_remote_file(const std::string& sub, const std::string& name, bool branches,
                          const std::vector<std::string>& tops) {
    const std::string lexical = sub + "/" + name;
    const ir::SourceLoc named_at{lexical, 0, 0};
    const auto canonical = canonical_(lexical, named_at, "git's legacy remote file");
    if (!canonical) return true;
    const std::string& path = *canonical;
    if (struct stat st; lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      refuse_(named_at, "git reads the legacy remote file '" + lexical +
                            "' through the dangling symlink '" + path +
                            "': what it would find there is unknown");
      return true;
    }
    targets_.push_back({path, named_at, false, false, false, false, {}});
    const GitConfigFile file = read_git_config_file(path);
    if (!readable(file, path, named_at, "a legacy remote file", false)) return true;
    // Counted with the config files: a sandbox's nested repository can hold any number of
    // them (red team R17-7).
    if (over_budget(file.text.size(), {path, 0, 0}, path,
                    "git config files, their includes and the remotes files"))
      return false;
    for (const auto& [line, value] : legacy_remote_urls(file.text, branches)) {
      const Located l{GitConfigEntry{"remote." + name + ".url", value, line}, path};
      url(l, *l.entry.value, tops, false);
      legacy_remotes_.insert(name);
    }
    return true;
  }

  // The URLs a legacy remote file names, with their lines: each `URL: …` line of a
  // `remotes/<name>` file; the first line that is not blank of a `branches/<name>` file, up
  // to its `#branch`.
  static std::vector<std::pair<int, std::string>> legacy_remote_urls(const std::string& text,
                                                                     bool branches) {
    std::vector<std::pair<int, std::string>> urls;
    int line = 0;
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      std::string value = text.substr(at, end - at);
      at = end + 1;
      ++line;
      if (branches) {
        value = value.substr(0, value.find('#'));
      } else if (value.rfind("URL:", 0) == 0) {
        value = value.substr(4);
      } else {
        continue;
      }
      const size_t b = value.find_first_not_of(" \t"), e = value.find_last_not_of(" \t\r");
      if (b == std::string::npos) continue;
      urls.emplace_back(line, value.substr(b, e - b + 1));
      if (branches) break;
    }
    return urls;
  }

  // The submodules the index records (red team A16-6): the host's git enters the
  // repository at `<path>/.git` (`git status` runs `git status` there, with that
  // repository's config and its core.fsmonitor; `git fetch` and `git push
  // --recurse-submodules` fetch and push from it, with its hooks). One not populated at the
  // start has no `.git` the default's `**/.git` could match, and the sandbox could make
  // one: such a submodule's directory is protected as a whole (empty, as git leaves an
  // unpopulated submodule; a placeholder when missing), a populated one's `.git`. Not a
  // placeholder `.git`: `git status` dies on a `.git` directory that is no repository.
  // An index zpolicy cannot read refuses the run.
  // The submodules the git directory's index records, read once; none without a git
  // directory (GitConfigSources::scheduled).
  const GitIndexLinks& index_links() {
    if (index_links_) return *index_links_;
    size_t hash_size = 20;
    for (const Located& l : entries_)
      if (l.entry.var == "extensions.objectformat" && l.entry.value) {
        std::string v = *l.entry.value;
        for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        hash_size = v == "sha256" ? 32 : 20;
      }
    index_links_ = src_.gitdir.empty() ? GitIndexLinks{}
                                       : gitlinks_of_index(src_.gitdir + "/index", hash_size);
    return *index_links_;
  }

  // Whether git may enter a submodule of this repository: its index records one, or cannot
  // be read to say (submodules() refuses that).
  bool records_submodules() {
    const GitIndexLinks& links = index_links();
    return !links.paths.empty() || links.unreadable;
  }

  void submodules(const std::vector<std::string>& tops) {
    const std::string index = src_.gitdir + "/index";
    const ir::SourceLoc at{index, 0, 0};
    const GitIndexLinks& links = index_links();
    if (links.unreadable)
      return refuse_(at, "git enters the submodules the index '" + index + "' records, and " +
                             *links.unreadable + ", so zpolicy cannot tell which they are");
    for (const auto& path : links.paths)
      for (const auto& top : tops) {
        const std::string named_by = "the index '" + index + "': submodule '" + path + "'";
        const std::string dir = top + "/" + path, dot_git = dir + "/.git";
        struct stat st;
        if (lstat(dot_git.c_str(), &st) != 0) {
          if (auto c = canonical_(dir, at, named_by))
            targets_.push_back({*c, at, false, false, false, false, named_by});
        } else if (auto c = canonical_(dot_git, at, named_by)) {
          if (auto worktree = canonical_(dir, at, named_by))
            targets_.push_back({*c, at, false, false, false, false, named_by, *worktree});
        }
      }
  }

  // Whether git takes `name` for a remote with a url (remote.c's valid_remote): its last
  // `remote.<name>.url` in the files read unconditionally is not empty (git 2.46 takes an
  // empty one for a reset), and no command the configs run takes the name away (`remote
  // remove`, `config --unset`). A remote with only other keys (`fetch`, `pushurl`) is not
  // one: git uses its name as the URL (red team A15C-6). One only an `includeIf` defines is
  // not counted, whatever the condition (A15C-9): if it holds, its url is read as a URL
  // anyway, and the name protected as a path is only more. A remote only the global config
  // defines is not seen here, so its name is protected as a path too (A15C-11).
  bool configured_remote(const std::string& name) const {
    if (deconfigured_.count(name)) return false;
    if (legacy_remotes_.count(name)) return true;
    const auto found = by_var_.find("remote." + name + ".url");
    bool has_url = false;
    if (found != by_var_.end())
      for (const size_t i : found->second)
        if (const Located& l = entries_[i]; !l.conditional)
          has_url = l.entry.value && !l.entry.value->empty();
    return has_url;
  }

  static std::vector<std::string> blank_separated(const std::string& value) {
    std::vector<std::string> out;
    std::string cur;
    for (const char c : value + " ") {
      if (c != ' ' && c != '\t' && c != '\n') {
        cur += c;
      } else if (!cur.empty()) {
        out.push_back(std::move(cur));
        cur.clear();
      }
    }
    return out;
  }

  // A directory of programs (`--exec-path`) or templates (`--template`, whose `hooks` git
  // copies into the git directory), relative to where git runs.
  void directory(const Located& e, const std::string& d, const std::vector<std::string>& tops,
                 bool templates) {
    std::string why;
    const auto p = interpolated(d, home_, why);
    if (!p || p->empty()) return refuse(e, *e.entry.value, "names the directory '" + d + "': " + why);
    if (relative_where_started(e, *p, "")) return;
    for (const auto& top : tops) {
      const std::string dir = (*p)[0] == '/' ? *p : top + "/" + *p;
      target(dir, e, !templates);
      if (templates) target(dir + "/hooks", e, true);
      if ((*p)[0] == '/') break;
    }
  }

  // A URL git connects to (red team A14B-4); `rewrite`: the start of one
  // (url.<base>.insteadOf), to which git appends the rest of the URL it rewrites.
  void url(const Located& e, const std::string& text, const std::vector<std::string>& tops,
           bool rewrite, bool rewritten = false) {
    // A base that the rest of a URL turns into a local path or an ext:: command whatever
    // the base says alone: none (`[url ""]`), or the start of `ext::` or `file://` (red
    // team A16-5: `[url ""] insteadOf = zz:` makes `zz:pdB` the path `pdB`).
    constexpr std::string_view kExt = "ext::", kFile = "file://";
    if (rewrite && (text.empty() || (text.size() < kExt.size() && kExt.substr(0, text.size()) == text) ||
                    (text.size() < kFile.size() && kFile.substr(0, text.size()) == text)))
      return refuse(e, text,
                    "rewrites URLs to a base that the rest of each URL makes a local path or "
                    "an ext:: command: zpolicy cannot tell which repository or command");
    // git rewrites a URL by `url.<base>.insteadOf` (and, for a push, `pushInsteadOf`)
    // before it connects (remote.c's alias_url): each rewrite of this URL that a file read
    // names is read too (more than the longest match git takes, never less; red team A16-5).
    if (!rewrite && !rewritten)
      for (size_t k = 0; k < rewrites_.size(); ++k) {
        const Located r = entries_[rewrites_[k]];
        if (!r.entry.value) continue;
        const std::string& from = *r.entry.value;
        if (text.compare(0, from.size(), from) == 0)
          url(e, r.entry.subsection().value_or("") + text.substr(from.size()), tops, false, true);
      }
    const GitUrl u = git_url(text);
    if (u.unreadable) return refuse(e, text, "is a URL zpolicy does not read: " + *u.unreadable);
    if (u.command) {
      if (rewrite)
        return refuse(e, text,
                      "rewrites URLs to an ext:: command, which the rest of each URL extends: "
                      "zpolicy cannot tell what it runs");
      command(e, "ext::", *u.command, tops, false);
    }
    if (!u.path) return;
    std::string why;
    const auto p = interpolated(*u.path, home_, why);
    if (!p) return refuse(e, text, why);
    if (relative_where_started(e, *p, "")) return;
    // Without a top (GitConfigSources::scheduled), an absolute one still names itself.
    const std::vector<std::string> at =
        tops.empty() && (*p)[0] == '/' ? std::vector<std::string>{"/"} : tops;
    for (const auto& top : at) {
      const std::string lexical = (*p)[0] == '/' ? *p : top + "/" + *p;
      if (rewrite) {
        // The repository is the base and more: its path is not canonicalized, only compared.
        targets_.push_back({lexical, loc(e), false, false, true, true, where(e)});
      } else if (auto c = canonical_(lexical, loc(e), where(e))) {
        targets_.push_back({*c, loc(e), false, false, true, false, where(e), {}, lexical});
      }
      if ((*p)[0] == '/') break;
    }
  }

  // Whether `file` (at `path`, named at `at`, read by git as `as`) was read; when it was
  // not, the run is refused unless git skips it too. One rule for config files and the
  // legacy remote files (red team review 23: an unreadable, oversized or odd remotes file
  // was taken for none, and the URL git reads from it went unprotected).
  bool readable(const GitConfigFile& file, const std::string& path, const ir::SourceLoc& at,
                const std::string& as, bool shared) {
    using Status = GitConfigFile::Status;
    switch (file.status) {
      case Status::Missing:  // git skips a missing config file or include
        return false;
      // git reads nothing from a directory: a config file that is one makes every git
      // command die, a legacy remote file names no URL. It is protected as a target, so
      // the sandbox cannot make it a file. A run's placeholder for a missing config file
      // is one: a second run in the workspace meanwhile was refused (red team attack 24b).
      case Status::Directory:
        return false;
      case Status::Other:
        refuse_(at, "git reads '" + path + "' as " + as + ", and it is not a regular file");
        return false;
      case Status::Denied:
        // The caller's system and global files: git, run by the caller, skips one it may
        // not read with a warning, and the sandbox, with the caller's rights or fewer,
        // cannot change it. A caller whose $HOME is another user's (`setpriv`, `runuser`
        // keep it) had every run refused (red team A18-3). Not a file of a git directory:
        // git run by its owner reads it.
        if (shared) return false;
        [[fallthrough]];
      case Status::Unreadable:
        refuse_(at, "git reads '" + path + "' as " + as + ", and zpolicy cannot read it");
        return false;
      case Status::TooLarge:
        refuse_(at, "git reads '" + path + "' as " + as + ", and it is larger than " +
                        std::to_string(kGitConfigMaxBytes) + " bytes");
        return false;
      case Status::Read:
        break;
    }
    return true;
  }

  // The file `lexical`, named at `at`, and the files it includes.
  // `shared`: one of the caller's system and global files (GitConfigReads::shared).
  void read(const std::string& lexical, const ir::SourceLoc& at, int depth, bool conditional,
            bool shared = false) {
    if (stopped_) return;
    const auto path = canonical_(lexical, at, "git config file");
    if (!path) return;
    targets_.push_back({*path, at, false, false, false, false, {}});
    SharedGitConfig own;
    SharedGitConfig* got = &own;
    bool first = true;
    if (shared) {
      auto [it, inserted] = all_.shared.try_emplace(*path);
      got = &it->second;
      first = inserted;
    }
    if (first) got->file = read_git_config_file(*path);
    const GitConfigFile& file = got->file;
    if (!readable(file, *path, at, "config", shared)) return;
    // As git counts: an include that exists, nested more than the limit deep.
    // git dies at the first include nested too deep; the other includes it would have read
    // are not read either. Without that stop, eight lines `[include] path = config` (a
    // file including itself eight times) made 8^10 reads: more than 60 s and 2.6 GB (red
    // team R17-7). Includes that fan out but stay shallow (A includes B eight times, B
    // includes C eight times ...) are bounded by the reads and bytes of kGitConfigMaxReads
    // and kGitConfigMaxTotalBytes in all.
    if (depth > kGitIncludeMaxDepth) {
      refuse_(at, "git config includes nest deeper than " + std::to_string(kGitIncludeMaxDepth) +
                      " files (git's own limit), at '" + *path + "'");
      stopped_ = true;
      return;
    }
    if (over_budget(file.text.size(), at, *path, "git config files and their includes", first))
      return;
    if (!got->ready) {
      got->parsed = parse_git_config(file.text);
      got->ready = true;
    }
    const GitConfig& cfg = got->parsed;
    for (const auto& e : cfg.entries) {
      const Located located{e, *path, {}, conditional};
      by_var_[e.var].push_back(entries_.size());
      if (git_config_role(e) == GitConfigRole::UrlRewrite) rewrites_.push_back(entries_.size());
      entries_.push_back(located);
      if (git_config_role(e) != GitConfigRole::Include) continue;
      // Relative to the directory of the file as git named it (config.c handle_path_include
      // joins it to the including file's path as opened), not of its canonical form: with
      // the host's `~/.gitconfig -> dotfiles/gitconfig` (a dotfiles manager's link) saying
      // `include.path = .gitconfig.local`, git read `~/.gitconfig.local` and zpolicy
      // `~/dotfiles/.gitconfig.local`; the `core.hooksPath` naming the workspace's `hooks`
      // there went unprotected, and the host's `git commit` ran the command's pre-commit
      // hook (red team A24D-4).
      if (auto p = path_value(located, directory_of(lexical)))
        read(*p, loc(located), depth + 1, conditional || e.section() == "includeif");
    }
    if (cfg.error)
      refuse_({*path, cfg.error->line, 1}, "git config '" + *path + "' line " +
                                               std::to_string(cfg.error->line) + ": " +
                                               cfg.error->what + ", which zpolicy cannot read");
  }

  // A path-valued entry made absolute against `base`; none once refused.
  std::optional<std::string> path_value(const Located& e, const std::string& base) {
    if (!e.entry.value || e.entry.value->empty()) {
      refuse_(loc(e), where(e) + " has no path, which git does not accept");
      return std::nullopt;
    }
    std::string why;
    auto p = interpolated(*e.entry.value, home_, why);
    if (!p) {
      refuse_(loc(e), where(e) + " = '" + *e.entry.value + "': " + why);
      return std::nullopt;
    }
    if ((*p)[0] != '/') p = base + "/" + *p;
    return p;
  }

  // A shell command `text` that `e` gives git (`option`: the alias's option that holds
  // it); `in_submodules`: git runs it in each submodule's directory, which zpolicy does not
  // enumerate, so a relative path refuses.
  void command(const Located& e, const std::string& option, const std::string& text,
               const std::vector<std::string>& tops, bool in_submodules) {
    const std::string& value = *e.entry.value;
    const std::string as = option.empty() ? "" : "(its " + option + " '" + text + "') ";
    const CommandPaths words = paths_in_command(text);
    if (words.unreadable)
      return refuse(e, value, as + "is a command zpolicy cannot follow: " + *words.unreadable);
    for (const auto& g : words.git_commands) git_command_line(e, g.line, tops, 0, &g, in_submodules);
    for (const auto& s : words.scripts)
      if (auto c = canonical_(s[0] == '~' ? home_ + s.substr(1) : s, loc(e), where(e)))
        targets_.push_back({*c, loc(e), false, true, false, false, where(e)});
    for (const auto& w : words.words) {
      if (in_submodules && w[0] != '/' && w[0] != '~')
        return refuse(e, value,
                      as + "runs '" + w + "' in a submodule's directory, which " +
                          "zpolicy does not enumerate (the worktree's `.gitmodules`, " +
                          "which the sandbox may write, maps a submodule's name to " +
                          "it): name it by an absolute path");
      if (relative_where_started(e, w, as)) return;
      command_file(w, e, tops, 0);
    }
    // Not refused where git stays where it was started: a word without a '/' is any
    // argument (`!git log -1 HEAD`), taken for a file only where one exists at a top
    // (docs/protected-paths.md, Limits).
    for (const auto& w : words.bare)
      for (const auto& top : tops) {
        const std::string p = top + "/" + w;
        if (struct stat st; lstat(p.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
          command_file(p, e, tops, 0);
      }
  }

  // A file a command names (relative: against each top), and the interpreter its `#!` line
  // names, as the kernel follows them (at most 4 deep; relative against the directory git
  // runs the command in, the top). One whose interpreter loads code next to it or from the
  // working directory is a script (red team A15-G4).
  void command_file(const std::string& word, const Located& e,
                    const std::vector<std::string>& tops, int depth) {
    if (word[0] != '/' && word[0] != '~') {
      if (relative_where_started(e, word, "")) return;
      for (const auto& top : tops) command_file(top + "/" + word, e, tops, depth);
      return;
    }
    const auto c = canonical_(word[0] == '~' ? home_ + word.substr(1) : word, loc(e), where(e));
    if (!c) return;
    const auto line = depth < 4 ? first_line_of(*c) : std::nullopt;
    const auto shebang = line ? shebang_of(*line) : std::nullopt;
    targets_.push_back(
        {*c, loc(e), false, shebang && shebang->loads_code_by_name, false, false, where(e)});
    if (shebang && !shebang->interpreter.empty())
      command_file(shebang->interpreter, e, tops, depth + 1);
  }

  // Counts one more file of `size` bytes read, this git directory's and, `in_all`, every
  // one's; past either bound, refuses at `at` and stops reading.
  bool over_budget(size_t size, const ir::SourceLoc& at, const std::string& path,
                   const std::string& what, bool in_all = true) {
    bytes_ += size;
    if (in_all) {
      all_.bytes += size;
      ++all_.reads;
    } else {
      all_.shared_bytes += size;
    }
    if (++reads_ > kGitConfigMaxReads || bytes_ > kGitConfigMaxTotalBytes)
      refuse_(at, what + " come to more than " + std::to_string(kGitConfigMaxReads) +
                      " files or " + std::to_string(kGitConfigMaxTotalBytes) + " bytes read, at '" +
                      path + "', more than zpolicy reads");
    else if (all_.reads > kGitConfigMaxReadsInAll || all_.bytes > kGitConfigMaxBytesInAll)
      refuse_(at, "the git directories the run protects have config files that come to more "
                  "than " +
                      std::to_string(kGitConfigMaxReadsInAll) + " files or " +
                      std::to_string(kGitConfigMaxBytesInAll) +
                      " bytes read in all, at '" + path + "', more than zpolicy reads");
    else if (all_.shared_bytes > kGitConfigMaxSharedBytesInAll)
      refuse_(at, "the caller's git config '" + path + "' (" + std::to_string(size) +
                      " bytes) applies to each of the run's git directories, and they are "
                      "too many for one that size: more than " +
                      std::to_string(kGitConfigMaxSharedBytesInAll) +
                      " bytes in all, more than zpolicy reads (a smaller global config, or "
                      "fewer repositories in the writable roots)");
    else
      return false;
    stopped_ = true;
    return true;
  }

  const GitConfigSources& src_;
  const std::string& home_;
  const GitCanonical& canonical_;
  const GitRefusal& refuse_;
  GitConfigReads& all_;
  std::vector<Located> entries_;
  // Indexes into entries_, kept as it grows: the entries of each key, and the URL rewrites.
  // Looked up per URL and per alias they make a config linear, not quadratic (red team
  // R17-7: 15 000 remotes, 0.7 MB, took 25 s when each URL scanned every entry).
  std::map<std::string, std::vector<size_t>> by_var_;
  std::vector<size_t> rewrites_;
  size_t reads_ = 0, bytes_ = 0;
  bool stopped_ = false;  // an include nested too deep, or too much read: no more is read
  std::vector<GitConfigTarget> targets_;
  // Each name a key or a git command takes for a remote, or else a URL.
  std::vector<std::pair<Located, std::string>> remote_names_;
  std::set<std::string> deconfigured_;
  std::set<std::string> legacy_remotes_;
  int alias_depth_ = 0;  // aliases run as another alias's subcommand, nested
  // The entries relative_where_started refused, by file, line and key.
  std::set<std::tuple<std::string, int, std::string>> started_refused_;
  std::optional<GitIndexLinks> index_links_;
};

}  // namespace

std::vector<GitConfigTarget> git_config_targets(const GitConfigSources& src,
                                                const std::string& home,
                                                const GitCanonical& canonical,
                                                const GitRefusal& refuse,
                                                GitConfigReads& all) {
  return Walk(src, home, canonical, refuse, all).run();
}

}  // namespace zpolicy::compiler
