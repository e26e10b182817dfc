#include "compiler/resolve/git_config_targets.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "compiler/resolve/git_command_words.hpp"
#include "compiler/resolve/git_config.hpp"
#include "compiler/resolve/git_config_keys.hpp"
#include "compiler/resolve/gitdir.hpp"

namespace zpolicy::compiler {

namespace {

struct Located {
  GitConfigEntry entry;
  std::string file;  // canonical
  // For a key a non-'!' alias sets with `-c`: "alias.x's -c", said in refusals.
  std::string via = {};
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
       const GitRefusal& refuse)
      : src_(src), home_(home), canonical_(canonical), refuse_(refuse) {}

  std::vector<GitConfigTarget> run() {
    for (const auto& f : src_.files) read(f, {f, 0, 0}, 0);
    std::vector<std::string> tops = src_.tops;
    for (const auto& e : entries_)
      if (git_config_role(e.entry) == GitConfigRole::WorkTree)
        if (auto p = path_value(e, src_.gitdir)) tops.push_back(*p);
    // By index and by copy: an include an alias's `-c` names appends to the entries.
    for (size_t i = 0; i < entries_.size(); ++i) {
      const Located e = entries_[i];
      use(e, tops, 0);
    }
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
    switch (git_config_role(e.entry)) {
      case GitConfigRole::HooksDir:
        for (const auto& top : tops)
          if (auto p = path_value(e, top)) target(*p, e, true);
        break;
      case GitConfigRole::Command:
        if (e.entry.value) command(e, "", *e.entry.value, tops, false);
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
      case GitConfigRole::Include:
        // Set by an alias's `-c`: git reads it only by an absolute path ("relative config
        // includes must come from files"); the files' own are read by read().
        if (!e.via.empty() && e.entry.value && !e.entry.value->empty() &&
            ((*e.entry.value)[0] == '/' || (*e.entry.value)[0] == '~'))
          if (auto p = path_value(e, "/")) read(*p, loc(e), 1);
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

  void refuse(const Located& e, const std::string& value, const std::string& why) {
    refuse_(loc(e), where(e) + " = '" + value + "' " + why);
  }

  // An alias without '!': git runs git with its words (red team A14B-4).
  void git_command(const Located& e, const std::vector<std::string>& tops, int depth) {
    if (e.entry.value) git_command_line(e, *e.entry.value, tops, depth);
  }

  // `line` as git's own command line, given by `e` (an alias's value, or the arguments of
  // a `git` its shell command runs).
  void git_command_line(const Located& e, const std::string& line,
                        const std::vector<std::string>& tops, int depth) {
    const std::string& v = *e.entry.value;
    const GitArguments a = git_arguments(line);
    if (a.unreadable) return refuse(e, v, "is a git command zpolicy cannot follow: " + *a.unreadable);
    if (!a.config.empty() && depth >= 3)
      return refuse(e, v, "sets an alias that sets config in turn, more than 3 deep");
    for (const auto& [var, value] : a.config)
      use({GitConfigEntry{var, value, e.entry.line}, e.file, e.entry.var + "'s -c"}, tops,
          depth + 1);
    for (const auto& c : a.commands) command(e, c.option, c.text, tops, c.in_submodules);
    for (const auto& d : a.directories) directory(e, d, tops, false);
    for (const auto& d : a.templates) directory(e, d, tops, true);
    // A name that is no configured remote is a URL or a path to git (remote.c's
    // remote_get): read as a remote's URL is (red team A15B-2). A remote only the global
    // config defines is not seen here, so its name is protected as a path too: more, never
    // less.
    for (const auto& r : a.repositories)
      if (!configured_remote(r)) url(e, r, tops, false);
  }

  bool configured_remote(const std::string& name) const {
    const std::string prefix = "remote." + name + ".";
    return std::any_of(entries_.begin(), entries_.end(), [&](const Located& l) {
      return l.entry.var.rfind(prefix, 0) == 0 && l.entry.var.find('.', prefix.size()) == std::string::npos;
    });
  }

  // A directory of programs (`--exec-path`) or templates (`--template`, whose `hooks` git
  // copies into the git directory), relative to where git runs.
  void directory(const Located& e, const std::string& d, const std::vector<std::string>& tops,
                 bool templates) {
    std::string why;
    const auto p = interpolated(d, home_, why);
    if (!p || p->empty()) return refuse(e, *e.entry.value, "names the directory '" + d + "': " + why);
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
           bool rewrite) {
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
    for (const auto& top : tops) {
      const std::string lexical = (*p)[0] == '/' ? *p : top + "/" + *p;
      if (rewrite) {
        // The repository is the base and more: its path is not canonicalized, only compared.
        targets_.push_back({lexical, loc(e), false, false, true, true, where(e)});
      } else if (auto c = canonical_(lexical, loc(e), where(e))) {
        targets_.push_back({*c, loc(e), false, false, true, false, where(e)});
      }
      if ((*p)[0] == '/') break;
    }
  }

  // The file `lexical`, named at `at`, and the files it includes.
  void read(const std::string& lexical, const ir::SourceLoc& at, int depth) {
    const auto path = canonical_(lexical, at, "git config file");
    if (!path) return;
    targets_.push_back({*path, at, false, false, false, false, {}});
    const GitConfigFile file = read_git_config_file(*path);
    using Status = GitConfigFile::Status;
    switch (file.status) {
      case Status::Missing:  // git skips a missing config file or include
        return;
      case Status::Other:
        refuse_(at, "git reads '" + *path + "' as config, and it is not a regular file");
        return;
      case Status::Unreadable:
        refuse_(at, "git reads '" + *path + "' as config, and zpolicy cannot read it");
        return;
      case Status::TooLarge:
        refuse_(at, "git reads '" + *path + "' as config, and it is larger than " +
                        std::to_string(kGitConfigMaxBytes) + " bytes");
        return;
      case Status::Read:
        break;
    }
    // As git counts: an include that exists, nested more than the limit deep.
    if (depth > kGitIncludeMaxDepth) {
      refuse_(at, "git config includes nest deeper than " + std::to_string(kGitIncludeMaxDepth) +
                      " files (git's own limit), at '" + *path + "'");
      return;
    }
    const GitConfig cfg = parse_git_config(file.text);
    for (const auto& e : cfg.entries) {
      const Located located{e, *path};
      entries_.push_back(located);
      if (git_config_role(e) != GitConfigRole::Include) continue;
      if (auto p = path_value(located, directory_of(*path))) read(*p, loc(located), depth + 1);
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
    for (const auto& g : words.git_commands) git_command_line(e, g, tops, 0);
    for (const auto& s : words.scripts)
      if (auto c = canonical_(s[0] == '~' ? home_ + s.substr(1) : s, loc(e), where(e)))
        targets_.push_back({*c, loc(e), false, true, false, false, where(e)});
    for (const auto& w : words.words) {
      if (in_submodules && w[0] != '/' && w[0] != '~')
        return refuse(e, value, as + "runs '" + w + "' in each submodule's directory, " +
                                    "which zpolicy does not enumerate: name it by an absolute path");
      command_file(w, e, tops, 0);
    }
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

  const GitConfigSources& src_;
  const std::string& home_;
  const GitCanonical& canonical_;
  const GitRefusal& refuse_;
  std::vector<Located> entries_;
  std::vector<GitConfigTarget> targets_;
};

}  // namespace

std::vector<GitConfigTarget> git_config_targets(const GitConfigSources& src,
                                                const std::string& home,
                                                const GitCanonical& canonical,
                                                const GitRefusal& refuse) {
  return Walk(src, home, canonical, refuse).run();
}

}  // namespace zpolicy::compiler
