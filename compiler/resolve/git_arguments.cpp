// git_arguments (git_config_keys.hpp): a non-'!' alias runs git itself, and some of git's
// options and subcommands run a program given on the command line (red team A14B-4).
#include <algorithm>
#include <cctype>

#include "compiler/resolve/git_config_keys.hpp"
#include "compiler/resolve/git_options.hpp"

namespace zpolicy::compiler {

namespace {

using namespace git_options;

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

// `o` is one of `names`, alone or with a glued `=VALUE`.
bool one_of_options(const std::string& o, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (o == n || (n.size() > 2 && o.size() > n.size() && o.rfind(n, 0) == 0 && o[n.size()] == '='))
      return true;
  return false;
}

// Subcommands that connect to a repository named on their command line.
bool connects(std::string_view sub) {
  for (std::string_view s : {"push", "fetch", "pull", "ls-remote", "clone", "fetch-pack",
                             "send-pack", "receive-pack", "archive", "remote", "request-pull",
                             "subtree"})
    if (s == sub) return true;
  return false;
}

class GitArgumentReader {
 public:
  GitArgumentReader(GitArguments& out, const std::vector<GitWordOrigin>& origins,
                    bool more_arguments)
      : out_(out), origins_(origins), more_arguments_(more_arguments) {}

  void read(const std::vector<std::string>& w) {
    size_t i = global_options(w);
    if (i >= w.size()) return;
    const std::string& sub = w[i];
    out_.subcommand = {sub, std::vector<std::string>(w.begin() + static_cast<std::ptrdiff_t>(i) + 1, w.end()), false};
    for (size_t k = i + 1; k < w.size(); ++k)
      out_.subcommand->expanded = out_.subcommand->expanded || origin(k) != GitWordOrigin::Literal;
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
      // `submodule add REPOSITORY [PATH]` clones REPOSITORY.
      if (j < w.size() && w[j] == "add") return options(kSubmoduleAddTable, w, j + 1);
    }
    if (sub == "config") return config_subcommand(w, i + 1);
    if (more_arguments_ && connects(sub)) {
      fail("it runs `git " + sub + "` behind a program that adds its arguments at run time " +
           "(xargs, find -exec, parallel), so zpolicy cannot see the repository it connects to");
      return;
    }
    if (sub == "remote") return remote_subcommand(w, i + 1);
    if (sub == "fetch-pack") return fetch_pack(w, i + 1);
    if (sub == "request-pull") return request_pull(w, i + 1);
    if (const Table* t = table_of(sub)) options(*t, w, i + 1);
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
      } else if (o == "--bare") {
        // The directory git runs in becomes the git directory (a `!` alias runs at the
        // worktree top, whose HEAD, config and hooks the sandbox can write; red team A16-3).
        if (!out_.unreadable)
          out_.unreadable = "it runs git with --bare, which takes the directory it runs in for "
                            "the repository, another than the one zpolicy reads";
      } else if (o == "--shallow-file" ||
                 (one_of_options(o, {"--namespace", "--super-prefix", "--attr-source"}) &&
                  o.find('=') == std::string::npos)) {
        ++i;  // its value, not the subcommand (A16-3: `--shallow-file F push pdA`)
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
    bool removes = false;
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
      for (std::string_view r : {"--unset", "--unset-all", "--remove-section", "--rename-section"})
        removes = removes || a == r;
    }
    for (std::string_view verb : {"set", "unset", "remove-section", "rename-section"})
      if (!operands.empty() && operands[0] == verb) {
        removes = removes || verb != "set";
        operands.erase(operands.begin());
      }
    // A remote's url unset, emptied or its section removed or renamed: a later `git push
    // NAME` takes NAME for a path (red team A15C-6).
    if (!operands.empty() && entry_var(operands[0]).rfind("remote.", 0) == 0) {
      const std::string rest = operands[0].substr(7);  // NAME or NAME.KEY
      const size_t dot = rest.rfind('.');
      const std::string name = rest.substr(0, dot);
      const bool url = dot != std::string::npos && entry_var(rest.substr(dot + 1)) == "url";
      if ((removes && (dot == std::string::npos || url)) ||
          (!removes && url && operands.size() >= 2 && operands[1].empty()))
        out_.deconfigured_remotes.push_back(name);
    }
    if (!removes && operands.size() >= 2) config(operands[0] + "=" + operands[1]);
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

  void fail(std::string why) {
    if (!out_.unreadable) out_.unreadable = std::move(why);
  }

  GitWordOrigin origin(size_t word) const {
    return word < origins_.size() ? origins_[word] : GitWordOrigin::Literal;
  }

  // A repository the command connects to, held by word `word` (red team A15C-8): a shell
  // expansion refuses, as in a path; the user's own arguments are theirs.
  void repository(const std::string& text, size_t word) {
    switch (origin(word)) {
      case GitWordOrigin::Literal:
        out_.repositories.push_back(text);
        break;
      case GitWordOrigin::Expansion:
        fail("the repository it connects to ('" + text + "') is a shell expansion, which " +
             "only a shell resolves");
        break;
      case GitWordOrigin::Argument:
        break;
    }
  }

  // The subcommand's options by the one matcher, and what they and its operands name.
  void options(const Table& t, const std::vector<std::string>& w, size_t from) {
    const Parsed p = match_options(t, w, from);
    if (p.unreadable) return fail(*p.unreadable);
    bool multiple = false;
    for (const Matched& m : p.options) {
      multiple = multiple || m.option->name == "multiple";
      if (!m.value) continue;
      switch (m.option->means) {
        case Means::Repository:
          repository(*m.value, m.word);
          break;
        case Means::Command:
          out_.commands.push_back({m.as_written, *m.value, false});
          break;
        case Means::Directory:
          out_.templates.push_back(*m.value);
          break;
        case Means::Other:
          break;
      }
    }
    // `fetch --multiple` takes every operand for a remote, a group or a URL; a user's
    // argument (`"$@"`) may be no word at all, so the next operand may be the first.
    if (t.subcommand == "subtree" && p.operands.size() == 3 &&
        (p.operands[0].text == "add" || p.operands[0].text == "pull" || p.operands[0].text == "push"))
      repository(p.operands[1].text, p.operands[1].word);
    if (t.operands == Operands::None) return;
    for (const Operand& o : p.operands) {
      repository(o.text, o.word);
      if (origin(o.word) != GitWordOrigin::Argument && !(multiple && t.subcommand == "fetch"))
        break;
    }
  }

  // `git remote`: `add NAME URL` and `set-url [--push] NAME URL` write a remote's URL for
  // the next git, read as `-c remote.NAME.url=URL` (red team A15C-7); `update`, `show` and
  // `prune` connect to each remote or group named; `rename` and `remove` take a name away.
  void remote_subcommand(const std::vector<std::string>& w, size_t from) {
    size_t i = from;
    while (i < w.size() && (w[i] == "-v" || w[i] == "--verbose")) ++i;
    if (i >= w.size()) return;
    const std::string& verb = w[i];
    static constexpr std::string_view kVerbs[] = {"add",  "set-url", "update", "show",
                                                  "prune", "rename", "remove", "rm"};
    if (std::find(std::begin(kVerbs), std::end(kVerbs), verb) == std::end(kVerbs)) return;
    const Table& t = verb == "add"       ? kRemoteAddTable
                     : verb == "set-url" ? kRemoteSetUrlTable
                                         : kRemoteOtherTable;
    const Parsed p = match_options(t, w, i + 1);
    if (p.unreadable) return fail(*p.unreadable);
    auto flag = [&](std::string_view name) {
      return std::any_of(p.options.begin(), p.options.end(),
                         [&](const Matched& m) { return m.option->name == name; });
    };
    const auto& ops = p.operands;
    auto name_of = [&](size_t k) -> std::optional<std::string> {
      if (k >= ops.size() || origin(ops[k].word) == GitWordOrigin::Argument) return std::nullopt;
      if (origin(ops[k].word) == GitWordOrigin::Expansion) {
        fail("the remote it names ('" + ops[k].text + "') is a shell expansion");
        return std::nullopt;
      }
      return ops[k].text;
    };
    if (verb == "add" || verb == "set-url") {
      const auto name = name_of(0);
      if (!name || ops.size() < 2) return;
      if (verb == "set-url" && flag("delete")) {
        out_.deconfigured_remotes.push_back(*name);
        return;
      }
      const std::string key = "remote." + *name + (flag("push") ? ".pushurl" : ".url");
      switch (origin(ops[1].word)) {
        case GitWordOrigin::Literal:
          out_.config.push_back({key, ops[1].text});
          break;
        case GitWordOrigin::Expansion:
          return fail("the URL it gives " + key + " ('" + ops[1].text + "') is a shell expansion");
        case GitWordOrigin::Argument:
          break;  // the user's own URL
      }
    } else if (verb == "update" || verb == "show" || verb == "prune") {
      for (const Operand& o : ops) repository(o.text, o.word);
    } else if (verb == "rename" || verb == "remove" || verb == "rm") {
      if (const auto name = name_of(0)) out_.deconfigured_remotes.push_back(*name);
    }
  }

  // fetch-pack reads its own options, glued only (`--upload-pack=X`, `--exec=X`), and
  // takes the first other word for the repository.
  void fetch_pack(const std::vector<std::string>& w, size_t from) {
    for (size_t i = from; i < w.size(); ++i) {
      const std::string& a = w[i];
      if (a.rfind('-', 0) != 0) return repository(a, i);
      for (std::string_view o : {"--upload-pack=", "--exec="})
        if (a.rfind(o, 0) == 0)
          out_.commands.push_back({std::string(o.substr(0, o.size() - 1)), a.substr(o.size()), false});
    }
  }

  // `git request-pull [-p] START URL [END]` lists URL's refs (ls-remote).
  void request_pull(const std::vector<std::string>& w, size_t from) {
    std::vector<size_t> operands;
    for (size_t i = from; i < w.size(); ++i)
      if (w[i].rfind('-', 0) != 0 || w[i] == "-") operands.push_back(i);
    if (operands.size() >= 2) repository(w[operands[1]], operands[1]);
  }

  GitArguments& out_;
  const std::vector<GitWordOrigin>& origins_;
  const bool more_arguments_;
};

}  // namespace

GitArguments git_arguments(std::string_view value, const std::vector<GitWordOrigin>& origins,
                           bool more_arguments) {
  GitArguments out;
  const auto words = split_cmdline(value);
  if (!words) {
    out.unreadable = "git cannot split it (an unterminated quote or a trailing backslash)";
    return out;
  }
  GitArgumentReader(out, origins, more_arguments).read(*words);
  return out;
}

}  // namespace zpolicy::compiler
