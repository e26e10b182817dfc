// git_arguments (git_config_keys.hpp): a non-'!' alias runs git itself, and some of git's
// options and subcommands run a program given on the command line (red team A14B-4).
#include <algorithm>
#include <cctype>

#include "compiler/resolve/git_config_keys.hpp"

namespace zpolicy::compiler {

namespace {

// git's split_cmdline (alias.c): whitespace separates words, '...' and "..." quote, a
// backslash outside single quotes takes the next character literally; none on an
// unterminated quote or a trailing backslash, which git refuses too.
std::optional<std::vector<std::string>> split_cmdline(std::string_view v) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quoted = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (!quoted && (c == '\'' || c == '"')) {
      quoted = c;
    } else if (c == quoted) {
      quoted = 0;
    } else {
      if (c == '\\' && quoted != '\'') {
        if (++i >= v.size()) return std::nullopt;
        c = v[i];
      }
      cur += c;
    }
  }
  if (quoted) return std::nullopt;
  if (in_word) out.push_back(std::move(cur));
  return out;
}

// An option of a subcommand whose value git hands to a shell (Command) or takes as a
// directory of programs or hooks (Directory). `name` is the long name, `letter` the
// short one (0: none).
struct ProgramOption {
  std::string_view subcommand;
  std::string_view name;
  char letter;
  bool directory;
};

// From each command's documentation (git-<cmd>(1)); fetch-pack, send-pack and ls-remote
// take `--exec` as the old name of `--upload-pack`/`--receive-pack`.
constexpr ProgramOption kOptions[] = {
    {"difftool", "extcmd", 'x', false},
    {"rebase", "exec", 'x', false},
    {"fetch", "upload-pack", 0, false},
    {"pull", "upload-pack", 0, false},
    {"clone", "upload-pack", 'u', false},
    {"clone", "template", 0, true},
    {"init", "template", 0, true},
    {"ls-remote", "upload-pack", 'u', false},
    {"ls-remote", "exec", 0, false},
    {"fetch-pack", "upload-pack", 0, false},
    {"fetch-pack", "exec", 0, false},
    {"push", "receive-pack", 0, false},
    {"push", "exec", 0, false},
    {"send-pack", "receive-pack", 0, false},
    {"send-pack", "exec", 0, false},
    {"archive", "exec", 0, false},
    {"grep", "open-files-in-pager", 'O', false},
    {"send-email", "smtp-server", 0, false},
    {"send-email", "to-cmd", 0, false},
    {"send-email", "cc-cmd", 0, false},
    {"send-email", "header-cmd", 0, false},
    {"send-email", "sendmail-cmd", 0, false},
    {"filter-branch", "setup", 0, false},
    {"filter-branch", "env-filter", 0, false},
    {"filter-branch", "tree-filter", 0, false},
    {"filter-branch", "index-filter", 0, false},
    {"filter-branch", "parent-filter", 0, false},
    {"filter-branch", "msg-filter", 0, false},
    {"filter-branch", "commit-filter", 0, false},
    {"filter-branch", "tag-name-filter", 0, false},
    {"instaweb", "httpd", 'd', false},
    {"instaweb", "browser", 'b', false},
    {"web--browse", "browser", 'b', false},
    {"web--browse", "cmd", 'c', false},
};

// The options of the subcommands that connect to a repository that take a value in the
// next word (git-<cmd>(1); an option with an optional value takes only a glued one), so
// that the word is not taken for the repository operand. `repository`: the option's value
// is the repository itself.
struct ValueOption {
  std::string_view subcommand;
  std::string_view name;  // "-o" or "--push-option"
  bool repository = false;
};
constexpr ValueOption kValueOptions[] = {
    {"push", "--repo", true},       {"push", "-o"},
    {"push", "--push-option"},      {"push", "--receive-pack"},
    {"push", "--exec"},             {"archive", "--remote", true},
    {"archive", "--exec"},          {"archive", "-o"},
    {"archive", "--output"},        {"archive", "--prefix"},
    {"archive", "--format"},        {"archive", "--add-file"},
    {"archive", "--add-virtual-file"}, {"archive", "--mtime"},
    {"ls-remote", "--upload-pack"}, {"ls-remote", "--exec"},
    {"ls-remote", "-o"},            {"ls-remote", "--server-option"},
    {"ls-remote", "--sort"},        {"fetch-pack", "--upload-pack"},
    {"fetch-pack", "--exec"},       {"fetch-pack", "--depth"},
    {"fetch-pack", "--shallow-since"}, {"fetch-pack", "--shallow-exclude"},
    {"send-pack", "--receive-pack"}, {"send-pack", "--exec"},
};
// fetch, pull and clone share the fetching options; pull adds merge's, clone its own.
constexpr std::string_view kFetchValueOptions[] = {
    "--depth", "--deepen", "--shallow-since", "--shallow-exclude", "-j", "--jobs",
    "--upload-pack", "-o", "--server-option", "--negotiation-tip", "--refmap", "--filter",
    "--recurse-submodules-default", "--submodule-prefix"};
constexpr std::string_view kPullValueOptions[] = {"-s", "--strategy", "-X", "--strategy-option",
                                                  "--cleanup"};
constexpr std::string_view kCloneValueOptions[] = {
    "-o", "--origin", "-b", "--branch", "-u", "--reference", "--reference-if-able", "-c",
    "--config", "--template", "--separate-git-dir", "--bundle-uri", "--ref-format",
    "--revision"};

bool connects(std::string_view sub) {
  for (std::string_view s : {"push", "fetch", "pull", "ls-remote", "clone", "fetch-pack",
                             "send-pack", "archive"})
    if (s == sub) return true;
  return false;
}

// Whether `name` (an option as written, without a glued value) takes the next word as its
// value in `sub`, and whether that value is the repository.
std::pair<bool, bool> takes_value(std::string_view sub, std::string_view name) {
  for (const ValueOption& o : kValueOptions)
    if (o.subcommand == sub && o.name == name) return {true, o.repository};
  auto in = [&](const auto& list) {
    return std::find(std::begin(list), std::end(list), name) != std::end(list);
  };
  if ((sub == "fetch" || sub == "pull" || sub == "clone") && in(kFetchValueOptions))
    return {true, false};
  if (sub == "pull" && in(kPullValueOptions)) return {true, false};
  if (sub == "clone" && in(kCloneValueOptions)) return {true, false};
  return {false, false};
}

// Options whose value is optional: only a glued value (`-Oless`, `--open-files-in-pager=x`)
// is theirs.
bool optional_value(std::string_view name) { return name == "open-files-in-pager"; }

// `o` is one of `names`, alone or with a glued `=VALUE`.
bool one_of_options(const std::string& o, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (o == n || (n.size() > 2 && o.size() > n.size() && o.rfind(n, 0) == 0 && o[n.size()] == '='))
      return true;
  return false;
}

class Reader {
 public:
  explicit Reader(GitArguments& out) : out_(out) {}

  void read(const std::vector<std::string>& w) {
    size_t i = global_options(w);
    if (i >= w.size()) return;
    const std::string& sub = w[i];
    if (sub == "bisect" && i + 1 < w.size() && w[i + 1] == "run")
      return rest_is_command(w, i + 2, "bisect run", false);
    if (sub == "submodule") {
      size_t j = i + 1;
      while (j < w.size() && w[j].rfind('-', 0) == 0) ++j;  // --quiet
      if (j < w.size() && w[j] == "foreach") {
        ++j;
        while (j < w.size() && w[j].rfind("--", 0) == 0 && w[j] != "--") ++j;  // --recursive
        if (j < w.size() && w[j] == "--") ++j;
        return rest_is_command(w, j, "submodule foreach", true);
      }
    }
    if (sub == "config") return config_subcommand(w, i + 1);
    if (connects(sub)) repository_operand(sub, w, i + 1);
    subcommand_options(sub, w, i + 1);
  }

 private:
  // git's handle_options as an alias may use them; the index of the subcommand.
  size_t global_options(const std::vector<std::string>& w) {
    size_t i = 0;
    for (; i < w.size() && w[i].rfind('-', 0) == 0; ++i) {
      const std::string& o = w[i];
      if (o == "-c" && i + 1 < w.size()) {
        config(w[++i]);
      } else if (o == "--config-env" || o.rfind("--config-env=", 0) == 0) {
        const std::string spec = o == "--config-env" ? (i + 1 < w.size() ? w[++i] : "") : o.substr(13);
        const std::string key = spec.substr(0, spec.find('='));
        GitConfigEntry e{entry_var(key), std::string("x"), 0};
        if (git_config_role(e) != GitConfigRole::None && !out_.unreadable)
          out_.unreadable = "it sets " + key + " from the host's environment (--config-env), "
                            "which zpolicy does not read";
      } else if (o.rfind("--exec-path=", 0) == 0) {
        out_.directories.push_back(o.substr(12));
      } else if (one_of_options(o, {"-C", "--git-dir", "--work-tree"})) {
        // Another repository's configuration and hooks, or relative names resolved from
        // another directory: what the value's -c keys name is not what zpolicy reads. The
        // word after `-C` was taken for the subcommand, and the -c after it never read
        // (red team A15B-1: `!git -C . -c core.hooksPath=hk commit`).
        const size_t eq = o.find('=');
        const std::string dir = eq != std::string::npos ? o.substr(eq + 1)
                                : i + 1 < w.size()      ? w[++i]
                                                        : "";
        if (o != "-C" || (dir != "." && !dir.empty())) {
          if (!out_.unreadable)
            out_.unreadable = "it runs git with " + o.substr(0, eq) + " " + dir +
                              ", another repository or directory than the one zpolicy reads";
        }
      } else if (one_of_options(o, {"--namespace", "--super-prefix", "--attr-source"}) &&
                 o.find('=') == std::string::npos) {
        ++i;  // its value, not the subcommand
      }
    }
    return i;
  }

  // `key[=value]` as git_config_push_parameter takes it: section and name lowercased, a
  // subsection (between the first and the last '.') kept.
  static std::string entry_var(const std::string& key) {
    std::string var = key;
    const size_t first = var.find('.'), last = var.rfind('.');
    for (size_t k = 0; k < var.size(); ++k)
      if (k <= first || k > last || first == last) var[k] = static_cast<char>(std::tolower(static_cast<unsigned char>(var[k])));
    return var;
  }

  void config(const std::string& spec) {
    const size_t eq = spec.find('=');
    std::optional<std::string> value;
    if (eq != std::string::npos) value = spec.substr(eq + 1);
    out_.config.push_back({entry_var(spec.substr(0, eq)), value});
  }

  // `git config KEY VALUE` (with --add, --replace-all, --global, …) and `git config set KEY
  // VALUE` write a key that the same command value's later `git` reads (red team A15B-1:
  // `!git config core.hooksPath hk && git commit`): read as `-c KEY=VALUE`. Any other
  // form (a get, an unset) at worst protects a value pattern as well.
  void config_subcommand(const std::vector<std::string>& w, size_t from) {
    std::vector<std::string> operands;
    for (size_t i = from; i < w.size(); ++i) {
      const std::string& a = w[i];
      if (a == "--") {
        operands.insert(operands.end(), w.begin() + static_cast<std::ptrdiff_t>(i) + 1, w.end());
        break;
      }
      if (a.rfind('-', 0) != 0) {
        operands.push_back(a);
        continue;
      }
      if (a == "-f" || a == "--file" || a == "--blob" || a == "--type" || a == "--default" ||
          a == "--comment" || a == "--value" || a == "-t")
        ++i;  // its value
    }
    if (!operands.empty() && operands[0] == "set") operands.erase(operands.begin());
    if (operands.size() >= 2) config(operands[0] + "=" + operands[1]);
  }

  // The repository `sub` connects to (red team A15B-2: `push pushdir HEAD:x` ran the hooks
  // of a bare `pushdir` the sandbox made): its first operand, or push's `--repo` and
  // archive's `--remote` (archive's operands are tree-ishes). An option's value in the
  // next word is skipped by kValueOptions; options and operands may mix (`push pushdir
  // --force`), as git's parse-options lets them.
  void repository_operand(const std::string& sub, const std::vector<std::string>& w,
                          size_t from) {
    bool operand_taken = sub == "archive";
    for (size_t i = from; i < w.size(); ++i) {
      const std::string& a = w[i];
      if (a == "--") {
        if (!operand_taken && i + 1 < w.size()) out_.repositories.push_back(w[i + 1]);
        return;
      }
      if (a.size() > 1 && a[0] == '-') {
        const size_t eq = a.find('=');
        const auto [value, repository] = takes_value(sub, a.substr(0, eq));
        if (eq != std::string::npos) {
          if (repository) out_.repositories.push_back(a.substr(eq + 1));
        } else if (value && i + 1 < w.size()) {
          if (repository) out_.repositories.push_back(w[i + 1]);
          ++i;
        }
        continue;
      }
      if (!operand_taken) out_.repositories.push_back(a);
      operand_taken = true;
    }
  }

  void rest_is_command(const std::vector<std::string>& w, size_t from, const std::string& what,
                       bool in_submodules) {
    // git joins the words with spaces for the shell (bisect: sq-quoted; foreach: as one
    // string when there is one word); quoting each keeps them one word apiece.
    std::string text;
    for (size_t k = from; k < w.size(); ++k) {
      if (!text.empty()) text += ' ';
      text += w.size() - from == 1 ? w[k] : quoted(w[k]);
    }
    if (!text.empty()) out_.commands.push_back({what, text, in_submodules});
  }

  static std::string quoted(const std::string& word) {
    std::string q = "'";
    for (const char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  }

  void take(const ProgramOption& o, const std::string& as_written, const std::string& value) {
    if (o.directory)
      out_.templates.push_back(value);
    else
      out_.commands.push_back({as_written, value, false});
  }

  // The subcommand's options up to `--`. A long option git would take by an unambiguous
  // prefix (`--ext=…` for `--extcmd`) is read as the option it may abbreviate.
  void subcommand_options(const std::string& sub, const std::vector<std::string>& w,
                          size_t from) {
    for (size_t i = from; i < w.size(); ++i) {
      const std::string& a = w[i];
      if (a == "--") return;
      if (a.size() < 2 || a[0] != '-') continue;
      for (const ProgramOption& o : kOptions) {
        if (o.subcommand != sub) continue;
        if (a[1] == '-') {
          const size_t eq = a.find('=');
          const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
          if (name.empty() || o.name.substr(0, name.size()) != name) continue;
          if (eq != std::string::npos)
            take(o, "--" + std::string(o.name), a.substr(eq + 1));
          else if (!optional_value(o.name) && i + 1 < w.size())
            take(o, "--" + std::string(o.name), w[i + 1]);
          continue;
        }
        // A cluster of short options: the letter takes the rest, or the next word.
        const size_t at = o.letter ? a.find(o.letter, 1) : std::string::npos;
        if (at == std::string::npos) continue;
        const std::string as_written = std::string("-") + o.letter;
        if (at + 1 < a.size())
          take(o, as_written, a.substr(at + 1));
        else if (!optional_value(o.name) && i + 1 < w.size())
          take(o, as_written, w[i + 1]);
      }
    }
  }

  GitArguments& out_;
};

}  // namespace

GitArguments git_arguments(std::string_view value) {
  GitArguments out;
  const auto words = split_cmdline(value);
  if (!words) {
    out.unreadable = "git cannot split it (an unterminated quote or a trailing backslash)";
    return out;
  }
  Reader(out).read(*words);
  return out;
}

}  // namespace zpolicy::compiler
