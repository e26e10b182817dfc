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
    for (const auto& e : entries_) {
      switch (git_config_role(e.entry)) {
        case GitConfigRole::HooksDir:
          for (const auto& top : tops)
            if (auto p = path_value(e, top)) target(*p, loc(e), true);
          break;
        case GitConfigRole::Command:
          command(e, tops);
          break;
        case GitConfigRole::Include:
        case GitConfigRole::WorkTree:
        case GitConfigRole::None:
          break;
      }
    }
    return std::move(targets_);
  }

 private:
  static ir::SourceLoc loc(const Located& e) { return {e.file, e.entry.line, 1}; }

  void target(const std::string& lexical, const ir::SourceLoc& at, bool hooks = false) {
    if (auto c = canonical_(lexical, at)) targets_.push_back({*c, at, hooks, false, {}});
  }

  // The file `lexical`, named at `at`, and the files it includes.
  void read(const std::string& lexical, const ir::SourceLoc& at, int depth) {
    const auto path = canonical_(lexical, at);
    if (!path) return;
    targets_.push_back({*path, at, false, false, {}});
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
    const std::string where =
        "git config '" + e.file + "' line " + std::to_string(e.entry.line) + ": " + e.entry.var;
    if (!e.entry.value || e.entry.value->empty()) {
      refuse_(loc(e), where + " has no path, which git does not accept");
      return std::nullopt;
    }
    std::string why;
    auto p = interpolated(*e.entry.value, home_, why);
    if (!p) {
      refuse_(loc(e), where + " = '" + *e.entry.value + "': " + why);
      return std::nullopt;
    }
    if ((*p)[0] != '/') p = base + "/" + *p;
    return p;
  }

  void command(const Located& e, const std::vector<std::string>& tops) {
    if (!e.entry.value) return;  // a boolean (`[pager] log`): no command
    const CommandPaths words = paths_in_command(*e.entry.value);
    if (words.unreadable) {
      refuse_(loc(e), "git config '" + e.file + "' line " + std::to_string(e.entry.line) + ": " +
                          e.entry.var + " = '" + *e.entry.value +
                          "' is a command zpolicy cannot follow: " + *words.unreadable);
      return;
    }
    for (const auto& s : words.scripts)
      if (auto c = canonical_(s[0] == '~' ? home_ + s.substr(1) : s, loc(e)))
        targets_.push_back({*c, loc(e), false, true, e.entry.var});
    for (const auto& w : words.words) command_file(w, e, tops, 0);
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
    const auto c = canonical_(word[0] == '~' ? home_ + word.substr(1) : word, loc(e));
    if (!c) return;
    const auto line = depth < 4 ? first_line_of(*c) : std::nullopt;
    const auto shebang = line ? shebang_of(*line) : std::nullopt;
    targets_.push_back({*c, loc(e), false, shebang && shebang->loads_code_by_name, e.entry.var});
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
