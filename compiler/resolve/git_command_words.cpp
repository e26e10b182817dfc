// paths_in_command (git_command_words.hpp): a command value read as `sh -c` reads it, as
// far as zpolicy can follow it without running a shell, and refused past that (red team
// A14B-3, A14B-2, A15-G1, A15-G2).
#include "compiler/resolve/git_command_words.hpp"

#include <algorithm>

namespace zpolicy::compiler {

namespace {

// One word after POSIX quote removal, or an operator.
struct Token {
  bool op = false;
  std::string text;
  bool dollar = false;  // an unquoted or double-quoted '$': a parameter expansion
  bool glob = false;    // an unquoted '*', '?' or '['
};

// What a value cannot be read as, once said; none while it can.
using Why = std::optional<std::string>;

// The tokens of `value` as the shell splits them (quotes, backslashes, operators, a
// comment), or why zpolicy will not: a command substitution or an unterminated quote.
Why tokenize(std::string_view v, std::vector<Token>& out) {
  static constexpr std::string_view kOps = ";&|<>()";
  Token cur;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) out.push_back(std::move(cur));
    cur = {};
    in_word = false;
  };
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == ' ' || c == '\t') {
      end_word();
    } else if (c == '\n' || kOps.find(c) != std::string_view::npos) {
      end_word();
      std::string op(1, c == '\n' ? ';' : c);
      if (i + 1 < v.size() && kOps.find(v[i + 1]) != std::string_view::npos && v[i + 1] != '(' &&
          v[i + 1] != ')')
        op += v[++i];
      out.push_back({true, op});
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == '`') {
      return std::string("it holds a command substitution (`...`)");
    } else if (c == '$' && i + 1 < v.size() && v[i + 1] == '(') {
      return std::string("it holds a command substitution ('$(')");
    } else if (c == '\\') {
      in_word = true;
      if (++i < v.size() && v[i] != '\n') cur.text += v[i];
    } else if (c == '\'') {
      in_word = true;
      const size_t close = v.find('\'', i + 1);
      if (close == std::string_view::npos) return std::string("it has an unterminated quote");
      cur.text += v.substr(i + 1, close - i - 1);
      i = close;
    } else if (c == '"') {
      in_word = true;
      for (++i;; ++i) {
        if (i >= v.size()) return std::string("it has an unterminated quote");
        if (v[i] == '"') break;
        if (v[i] == '`' || (v[i] == '$' && i + 1 < v.size() && v[i + 1] == '('))
          return std::string("it holds a command substitution");
        if (v[i] == '$') cur.dollar = true;
        if (v[i] == '\\' && i + 1 < v.size() &&
            std::string_view("$`\"\\\n").find(v[i + 1]) != std::string_view::npos) {
          if (v[++i] != '\n') cur.text += v[i];
          continue;
        }
        cur.text += v[i];
      }
    } else {
      in_word = true;
      if (c == '$') cur.dollar = true;
      if (c == '*' || c == '?' || c == '[') cur.glob = true;
      cur.text += c;
    }
  }
  end_word();
  return std::nullopt;
}

bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

std::string basename_of(const std::string& word) { return word.substr(word.rfind('/') + 1); }

bool digits_and_dots(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

enum class Interpreter { None, Shell, Other };

// Programs that load code by name relative to where they run: a script argument, a
// module or include option, or (python, node) code that imports from the working
// directory.
Interpreter interpreter(const std::string& program) {
  const std::string b = basename_of(program);
  if (one_of(b, {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"}))
    return Interpreter::Shell;
  for (std::string_view stem :
       {"python", "pypy", "perl", "ruby", "node", "nodejs", "php", "lua", "luajit", "tclsh", "wish",
        "Rscript", "deno", "bun", "jruby", "irb"})
    if (b.rfind(stem, 0) == 0 && digits_and_dots(std::string_view(b).substr(stem.size())))
      return Interpreter::Other;
  return Interpreter::None;
}

// Programs that run the project found where they run: its makefiles, package.json,
// Gemfile, pyproject.toml or Cargo.toml, and whatever those include or name. In a worktree
// the sandbox can write, what they run is the sandbox's (red team A15-G2: a bare `make`
// reads the top's Makefile, and that file's `include`s).
bool project_runner(const std::string& program) {
  return one_of(basename_of(program),
                {"make",     "gmake", "bmake",  "pmake", "remake", "npm",    "npx",   "pnpm",
                 "pnpx",     "yarn",  "bunx",   "corepack", "bundle", "bundler", "rake", "poetry",
                 "pipenv",   "uv",    "uvx",    "pdm",   "hatch",  "tox",    "nox",   "cargo",
                 "just",     "task",  "mvn",    "gradle", "composer", "ant",  "invoke", "scons"});
}

// The options by which a program reads a file as code, or as config that can run code (a
// sed script's `e` command, awk's system(), a vimrc's `:!`, ssh's ProxyCommand). Their
// operand names a file with or without a '/' (red team A15-G2: `sed -f strip.sed`).
struct FileOptions {
  std::vector<std::string_view> programs;
  std::string_view letters;                  // `-f FILE`, `-fFILE`, `-nf FILE`
  std::vector<std::string_view> long_names;  // `--file FILE`, `--file=FILE`, `--fi FILE`
};

const FileOptions* file_options(const std::string& program) {
  static const std::vector<FileOptions> kTable = {
      {{"jq", "gojq", "jaq"}, "fL", {"--from-file"}},
      {{"vim", "vi", "nvim", "gvim", "view", "vimdiff", "ex", "rvim"}, "uUSs", {}},
      {{"emacs", "emacsclient"}, "l", {"--load", "--script"}},
      {{"ssh", "scp", "sftp"}, "F", {}},
      {{"xargs"}, "a", {"--arg-file"}},
      {{"gdb"}, "x", {"--command", "--init-command"}},
  };
  const std::string b = basename_of(program);
  for (const auto& f : kTable)
    if (std::find(f.programs.begin(), f.programs.end(), b) != f.programs.end()) return &f;
  return nullptr;
}

// sed and awk: their program files are scripts (program_files).
bool sed_or_awk(const std::string& program) {
  return one_of(basename_of(program), {"sed", "gsed", "awk", "gawk", "mawk", "nawk"});
}

// A program whose name, anywhere in a command, is read as the program from there on: what
// an unknown program before it (a wrapper such as `timeout 10`) may run (red team A15-G1).
bool runs_code_by_name(const std::string& word) {
  return interpreter(word) != Interpreter::None || project_runner(word) || sed_or_awk(word) ||
         file_options(word) || basename_of(word) == "env";
}

// The subcommand a program runs as git: "" for `git` itself, `push` for `git-push` (git
// puts its exec-path, which holds the dashed programs, first on the PATH of a `!` alias's
// shell; red team A16-2); none for any other program.
std::optional<std::string> git_program(const std::string& word) {
  const std::string b = basename_of(word);
  if (b == "git") return std::string();
  if (b.size() > 4 && b.rfind("git-", 0) == 0) return b.substr(4);
  return std::nullopt;
}

bool has_blank(std::string_view s) { return s.find_first_of(" \t\n") != std::string_view::npos; }

// An assignment prefix that changes where a program loads code from.
bool loader_variable(std::string_view name) {
  auto ends = [&](std::string_view s) {
    return name.size() >= s.size() && name.substr(name.size() - s.size()) == s;
  };
  for (std::string_view p : {"LD_", "PYTHON", "PERL", "RUBY", "NODE_", "GEM_", "BUNDLE_", "LUA_"})
    if (name.rfind(p, 0) == 0) return true;
  return ends("PATH") || ends("LIB") || one_of(name, {"BASH_ENV", "ENV", "ZDOTDIR"});
}

// An assignment prefix that changes the configuration a git command reads, which names
// programs and hook directories zpolicy would then not have read (red team A15B-1:
// `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=hk git commit`,
// `HOME=. git commit` with a .gitconfig the sandbox writes at the top).
bool config_variable(std::string_view name) {
  return name.rfind("GIT_CONFIG", 0) == 0 ||
         one_of(name, {"GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE", "HOME", "XDG_CONFIG_HOME"});
}

bool assignment(const std::string& word, std::string* name = nullptr) {
  const size_t eq = word.find('=');
  if (eq == 0 || eq == std::string::npos) return false;
  for (size_t i = 0; i < eq; ++i) {
    const char c = word[i];
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
          (i > 0 && c >= '0' && c <= '9')))
      return false;
  }
  if (name) *name = word.substr(0, eq);
  return true;
}

class CommandWordReader {
 public:
  explicit CommandWordReader(CommandPaths& out) : out_(out) {}

  void read(std::string_view value, int depth) {
    if (out_.unreadable) return;
    if (depth > 3) return refuse("it nests `sh -c` more than 3 deep");
    std::vector<Token> tokens;
    if (auto why = tokenize(value, tokens)) return refuse(*why);
    for (const auto& t : tokens)
      if (t.op) {
        compound_ = true;
        if (t.text[0] == '<') return refuse("it redirects input ('" + t.text + "') from a file");
      }
    positional_set_ = positional_set_ || sets_positional_parameters(tokens);
    // Each simple command, then the words no program takes as code.
    std::vector<bool> code(tokens.size(), false);
    std::vector<bool> program(tokens.size(), false);
    size_t start = 0;
    for (size_t i = 0; i <= tokens.size() && !out_.unreadable; ++i)
      if (i == tokens.size() || tokens[i].op) {
        simple_command(tokens, start, i, code, program, depth);
        start = i + 1;
      }
    for (size_t i = 0; i < tokens.size() && !out_.unreadable; ++i) {
      if (tokens[i].op || code[i]) continue;
      path_pieces(tokens[i], !program[i]);
      if (has_blank(tokens[i].text)) blank_word(tokens[i].text, depth);
    }
  }

  // After the whole value, `sh -c` strings and their arguments included.
  void refuse_compound_with_paths() {
    if (compound_ && !out_.words.empty())
      refuse(
          "it combines commands with the shell's operators (';', '&&', '|', '()', "
          "redirections) and names '" +
          out_.words.front() +
          "': zpolicy does not follow what a compound command does with a path");
  }

 private:
  void refuse(std::string why) {
    if (!out_.unreadable) out_.unreadable = std::move(why);
  }

  // Whether the command gives the shell's positional parameters words of its own, so that
  // `$1` and `"$@"` are not (only) what the user types after the alias (red team A16-1:
  // `f() { git push "$1"; }; f pdA`, `sh -c 'git push "$1"' sh pdA`, `set -- pdA`): a
  // function it defines called with a word, `set` with an operand, or a shell's `-c`
  // string given words past its `$0`. A word that is itself positional (`f "$@"`) passes
  // the user's words on. Any of these anywhere makes every positional parameter of the
  // value the shell's.
  static bool sets_positional_parameters(const std::vector<Token>& t) {
    std::vector<std::string> functions;
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      if (!t[i].op && t[i].text == "function" && !t[i + 1].op)  // bash's `function f {`
        functions.push_back(t[i + 1].text);
      if (i + 2 < t.size() && !t[i].op && t[i + 1].op && t[i + 1].text == "(" && t[i + 2].op &&
          t[i + 2].text == ")")
        functions.push_back(t[i].text);
    }
    auto own = [](const Token& w) { return !w.op && (!w.dollar || !positional(w.text)); };
    size_t start = 0;
    for (size_t i = 0; i <= t.size(); ++i) {
      if (i < t.size() && !t[i].op) continue;
      size_t p = start;
      while (p < i && (assignment(t[p].text) ||
                       one_of(t[p].text, {"{", "}", "!", "if", "then", "else", "elif", "do",
                                          "while", "until", "time", "exec", "command", "nohup"})))
        ++p;
      start = i + 1;
      if (p >= i) continue;
      const std::string& program = t[p].text;
      if (program == "set") {
        for (size_t k = p + 1; k < i; ++k) {
          const std::string& a = t[k].text;
          if (a == "--" || a.empty() || (a[0] != '-' && a[0] != '+')) return true;
          if (a.find('o') != std::string::npos) ++k;  // `set -o pipefail`, `-euo pipefail`
        }
      } else if (std::find(functions.begin(), functions.end(), program) != functions.end()) {
        for (size_t k = p + 1; k < i; ++k)
          if (own(t[k])) return true;
      } else if (interpreter(program) == Interpreter::Shell) {
        for (size_t k = p + 1; k < i; ++k)
          if (t[k].text.rfind('-', 0) == 0 && t[k].text.find('c') != std::string::npos &&
              t[k].text.rfind("--", 0) != 0) {
            for (size_t a = k + 3; a < i; ++a)  // past the string and its $0
              if (own(t[a])) return true;
            break;
          }
      }
    }
    return false;
  }

  // `$1`..`$9`, `$@`, `$*`, `${1}`..`${9}`: the shell's positional parameters.
  static bool positional(const std::string& s) {
    return (s.size() == 2 && s[0] == '$' && std::string_view("123456789@*").find(s[1]) != std::string_view::npos) ||
           (s.size() == 4 && s.rfind("${", 0) == 0 && s[3] == '}' && s[2] >= '1' && s[2] <= '9');
  }

  // A word holding a blank may be a command a program hands to a shell (`su -c`, `watch`,
  // `sg`, `PAGER='python3 -m x' git log`; red team A15-G1). One that names a program
  // runs_code_by_name knows, or git (its -c read as git's, A15B-1), is read as a command,
  // and refused if that cannot be followed;
  // any other (`--format=%h %s`, `%C(auto)%d`) is split at blanks and the shell's
  // operators and quotes, and its pieces read as words, as well as the whole word (a path
  // may hold a blank: `'my tools'/x`).
  void blank_word(const std::string& text, int depth) {
    std::vector<Token> pieces;
    Token cur;
    // Where the first piece that names such a program starts, also after a '='
    // (`core.pager=python3 -m x`, what `git -c` sets).
    std::optional<size_t> program_at;
    for (size_t i = 0; i <= text.size(); ++i) {
      const char c = i < text.size() ? text[i] : ' ';
      if (std::string_view(" \t\n;&|<>()'\"`{}").find(c) == std::string_view::npos) {
        cur.text += c;
        if (c == '$') cur.dollar = true;
        if (c == '*' || c == '?' || c == '[') cur.glob = true;
        continue;
      }
      if (!cur.text.empty() && !program_at) {
        const size_t eq = cur.text.rfind('=');
        const size_t from = eq == std::string::npos ? 0 : eq + 1;
        const std::string piece = cur.text.substr(from);
        if (runs_code_by_name(piece) || git_program(piece))
          program_at = i - cur.text.size() + from;
      }
      if (!cur.text.empty()) pieces.push_back(std::move(cur));
      cur = {};
    }
    for (const auto& p : pieces) path_pieces(p, true);
    if (!program_at || out_.unreadable) return;
    CommandPaths inner;
    CommandWordReader reader(inner);
    reader.positional_set_ = positional_set_;
    reader.read(std::string_view(text).substr(*program_at), depth + 1);
    reader.refuse_compound_with_paths();
    if (inner.unreadable)
      return refuse("its word '" + text + "' may be a command a program hands to a shell, and " +
                    *inner.unreadable);
    append(out_.words, inner.words);
    append(out_.bare, inner.bare);
    append(out_.scripts, inner.scripts);
    append(out_.git_commands, inner.git_commands);
  }

  template <typename T>
  static void append(std::vector<T>& to, const std::vector<T>& from) {
    for (const auto& s : from)
      if (std::find(to.begin(), to.end(), s) == to.end()) to.push_back(s);
  }

  // The pieces of a word that name a file: split at '=' (`--file=./z`, `FOO=./bin/y`),
  // then a path list at ':' (`X=./bin:/usr/bin`). A piece with a '/' is a path; one
  // without (`bare_ok`, for any word but the program's) names a file at the top only if
  // one exists there (red team A15-G2). A ':' after a first piece without '/' makes a
  // revision, refspec, URL or host (`HEAD:refs/heads/x`, `origin:dir/f`, `https://h/x`),
  // which names no file; an option word without '=' (`-Itools/x`) names none either: what
  // its letters mean is the program's (red team A14B-7).
  void path_pieces(const Token& t, bool bare_ok) {
    if (t.text.empty()) return;
    size_t at = 0;
    if (assignment(t.text)) {
      at = t.text.find('=') + 1;
    } else if (t.text[0] == '-') {
      at = t.text.find('=');
      if (at == std::string::npos) return;
      ++at;
    }
    while (at <= t.text.size()) {
      size_t end = t.text.find('=', at);
      if (end == std::string::npos) end = t.text.size();
      const std::string segment = t.text.substr(at, end - at);
      at = end + 1;
      const size_t colon = segment.find(':');
      if (colon != std::string::npos && segment.substr(0, colon).find('/') == std::string::npos)
        continue;
      for (size_t from = 0; from <= segment.size();) {
        size_t stop = segment.find(':', from);
        if (stop == std::string::npos) stop = segment.size();
        std::string piece = segment.substr(from, stop - from);
        from = stop + 1;
        if (piece.find('/') == std::string::npos) {
          if (bare_ok && !piece.empty() && piece != "." && piece != ".." && piece != "-" &&
              piece[0] != '~' && !t.dollar && !t.glob)
            append(out_.bare, {piece});
          continue;
        }
        const bool tilde_user = piece[0] == '~' && piece.rfind("~/", 0) != 0;
        if (t.dollar || t.glob || tilde_user)
          return refuse("'" + t.text + "' is a path only a shell could resolve");
        append(out_.words, {std::move(piece)});
      }
    }
  }

  // tokens[begin, end): one simple command. Marks in `code` the words a program takes as
  // code (`sh -c STRING`, `python3 -c CODE`), which are read as such, not as paths.
  // `appends`: the program before this one adds words to its command line at run time
  // (`xargs git push`: the repository comes from the input; red team A15C-10).
  void simple_command(const std::vector<Token>& words, size_t begin, size_t end,
                      std::vector<bool>& code, std::vector<bool>& program_at, int depth,
                      bool appends = false) {
    size_t i = begin;
    // Reserved words, wrappers and assignments before the program.
    for (; i < end; ++i) {
      const std::string& w = words[i].text;
      std::string name;
      if (assignment(w, &name)) {
        if (loader_variable(name))
          return refuse("it sets " + name + ", which changes where programs load code from");
        if (config_variable(name))
          return refuse("it sets " + name + ", which changes the configuration git reads");
        continue;
      }
      if (one_of(w, {"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while",
                     "until", "time", "exec", "command", "builtin", "nohup"}))
        continue;
      if (basename_of(w) == "env") {
        while (i + 1 < end && words[i + 1].text.rfind('-', 0) == 0) {
          if (one_of(words[i + 1].text, {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}))
            return refuse("it runs `env " + words[i + 1].text + "`, which zpolicy does not follow");
          ++i;
        }
        continue;
      }
      break;
    }
    if (i >= end) return;
    program_at[i] = true;
    const std::string& program = words[i].text;
    // `${PY:-python3} -m x` is an interpreter only a shell can name (red team A15-G6); `[`
    // and `[[` are the shell's tests, not globs.
    if (words[i].dollar || (words[i].glob && program != "[" && program != "[["))
      return refuse("its program ('" + program + "') is a parameter expansion or a glob, " +
                    "which only a shell resolves");
    const std::string b = basename_of(program);
    if (one_of(b, {"cd", "pushd", "popd"}))
      return refuse("it changes directory (`" + b + "`), so later names resolve elsewhere");
    if (one_of(b, {"eval", "source", "."}))
      return refuse("it runs `" + b + "`, whose code zpolicy cannot read without a shell");
    // git's own options (`!git -c core.fsmonitor=… status`, red team A15-G3): its words,
    // for the caller to read as a git command line (git_arguments).
    if (const auto sub = git_program(program)) {
      CommandPaths::GitCommand git{{}, {}, appends};
      if (!sub->empty()) {
        for (const char c : *sub) (git.line += '\\') += c;
        git.origins.push_back(GitWordOrigin::Literal);
      }
      for (size_t at = i + 1; at < end; ++at) {
        if (!git.line.empty()) git.line += ' ';
        if (words[at].text.empty()) git.line += "''";
        for (const char c : words[at].text) (git.line += '\\') += c;
        git.origins.push_back(origin(words[at]));
      }
      out_.git_commands.push_back(std::move(git));
    }
    if (project_runner(program))
      return refuse("it runs `" + b +
                    "`, which runs what the project where git runs it names (its makefiles, "
                    "package or build files, and what they include), files the sandbox can "
                    "write; run the command outside the sandbox");
    const Interpreter kind = interpreter(program);
    if (kind != Interpreter::None) return interpreted(kind, b, words, i + 1, end, code, depth);
    if (sed_or_awk(program)) program_files(b, words, i + 1, end);
    if (const FileOptions* f = file_options(program)) named_files(*f, words, i + 1, end, code);
    // Any other program may be a wrapper (`timeout 10 python3 -m x`, `nice -n 5`, `stdbuf
    // -o0`, `flock F`, `xargs`): read again from the first later word that names a program
    // that runs code by name, as if that one ran; zpolicy does not know which words a
    // program it does not know runs, so it assumes the worst (red team A15-G1).
    for (size_t j = i + 1; j < end; ++j) {
      if (code[j]) continue;
      std::string name;
      if (assignment(words[j].text, &name) && loader_variable(name))
        return refuse("it sets " + name + " after `" + b +
                      "`, which may pass it on, and it changes where programs load code from");
      if (assignment(words[j].text, &name) && config_variable(name))
        return refuse("it sets " + name + " after `" + b +
                      "`, which may pass it on, and it changes the configuration git reads");
      // A git behind it is read as git's command line (`timeout 60 git -c K=V`, A15B-1).
      if (runs_code_by_name(words[j].text) || git_program(words[j].text)) {
        bool adds = appends;
        for (size_t k = i; k < j; ++k)
          adds = adds || one_of(basename_of(words[k].text), {"xargs", "find", "parallel"});
        return simple_command(words, j, end, code, program_at, depth, adds);
      }
    }
  }

  // A word a shell expands only at run time is the user's own when it is a positional
  // parameter (`$1`, `"$@"`: what the user types after the alias) and the command gives
  // the positional parameters no words of its own (A16-1), else the shell's.
  GitWordOrigin origin(const Token& t) const {
    if (!t.dollar && !t.glob) return GitWordOrigin::Literal;
    return !t.glob && !positional_set_ && positional(t.text) ? GitWordOrigin::Argument
                                                             : GitWordOrigin::Expansion;
  }

  // The files a program's script or config options name (`sed -f strip.sed`, `-nf x`,
  // `--file=x`, `--fi x`), with or without a '/' (red team A15-G2), protected as words are.
  void named_files(const FileOptions& f, const std::vector<Token>& args, size_t begin,
                   size_t end, std::vector<bool>& code) {
    auto named = [&](size_t at, std::string file) {
      code[at] = true;
      if (file.empty() || file == "-") return;
      if (args[at].dollar || args[at].glob)
        return refuse("'" + file + "' is a path only a shell could resolve");
      append(out_.words, {std::move(file)});
    };
    for (size_t i = begin; i < end; ++i) {
      const std::string& a = args[i].text;
      if (a == "--") return;
      if (a.size() < 2 || a[0] != '-') continue;
      if (a[1] == '-') {
        const size_t eq = a.find('=');
        const std::string name = a.substr(0, eq);
        const bool takes = name.size() >= 3 && std::any_of(f.long_names.begin(), f.long_names.end(),
                                                           [&](std::string_view l) {
                                                             return l.rfind(name, 0) == 0;
                                                           });
        if (!takes) continue;
        if (eq != std::string::npos) {
          named(i, a.substr(eq + 1));
        } else if (i + 1 < end) {
          ++i;
          named(i, args[i].text);
        }
        continue;
      }
      const size_t k = a.find_first_of(f.letters, 1);
      if (k == std::string::npos) continue;
      if (k + 1 < a.size()) {
        named(i, a.substr(k + 1));
      } else if (i + 1 < end) {
        ++i;
        named(i, args[i].text);
      }
    }
  }

  // sed and awk run a program file named by an option (GNU sed's `e` command runs a shell
  // command and `w` writes any file; awk has system()), found by a relative name in the
  // directory git runs them in (red team A15-G2: `sed -f strip.sed` ran what the sandbox
  // wrote there). Such a file is read as an interpreter's script: a relative one refuses,
  // an absolute one must lie outside every writable root. A cluster of short options that
  // may hide one (`-nf`, `-fx`) refuses too.
  void program_files(const std::string& b, const std::vector<Token>& args, size_t begin,
                     size_t end) {
    const bool awk = b != "sed" && b != "gsed";
    static const std::string kHow =
        ": name the program file by an absolute path outside every writable root, or run the "
        "command outside the sandbox";
    auto file = [&](const std::string& option, const std::string& path) {
      if (path.empty() || (path[0] != '/' && path.rfind("~/", 0) != 0))
        return refuse("`" + b + " " + option + " " + path +
                      "` runs a program file by a relative name, which resolves against the "
                      "directory git runs it in" +
                      kHow);
      out_.scripts.push_back(path);
    };
    for (size_t i = begin; i < end && !out_.unreadable; ++i) {
      const std::string& a = args[i].text;
      if (a == "--") break;
      const bool takes_file = a == "-f" || a == "--file" ||
                              (awk && (a == "-i" || a == "--include" || a == "-l" ||
                                       a == "--load" || a == "-E" || a == "--exec"));
      if (takes_file) {
        if (i + 1 >= end) return refuse("`" + b + " " + a + "` names no program file");
        file(a, args[++i].text);
        continue;
      }
      if (a.rfind("--", 0) == 0) {
        const size_t eq = a.find('=');
        const std::string name = a.substr(0, eq);
        if (eq != std::string::npos &&
            (name == "--file" ||
             (awk && (name == "--include" || name == "--load" || name == "--exec"))))
          file(name, a.substr(eq + 1));
        continue;
      }
      // A short-option cluster: an awk -F/-v or sed -e takes the rest as its argument.
      if (a.size() > 2 && a[0] == '-' && a[1] != 'e' && a[1] != 'F' && a[1] != 'v' &&
          a.find_first_of(awk ? "filE" : "f", 1) != std::string::npos)
        return refuse("`" + b + " " + a + "` may name a program file zpolicy cannot tell apart" +
                      kHow);
    }
  }

  // INTERP /absolute/script [args], INTERP -c CODE [args]; anything else refuses.
  void interpreted(Interpreter kind, const std::string& b, const std::vector<Token>& args,
                   size_t begin, size_t end, std::vector<bool>& code, int depth) {
    static const std::string kHow =
        ": name the script by an absolute path outside every writable root (`python3 "
        "/opt/tool/tool.py`, not `python3 -m tool`), or run the command outside the sandbox";
    for (size_t i = begin; i < end; ++i) {
      const std::string& a = args[i].text;
      if (a == "--") {
        if (i + 1 < end) return script(b, args[i + 1].text, kHow);
        return refuse("`" + b + "` reads its program from standard input");
      }
      if (a.size() < 2 || a[0] != '-') return script(b, a, kHow);
      if (kind == Interpreter::Shell) {
        if (one_of(a, {"--rcfile", "--init-file"}))
          return refuse("`" + b + " " + a + "` reads a startup file" + kHow);
        if (a == "-o" || a == "+o") {
          ++i;
          continue;
        }
        if (a.rfind("--", 0) != 0 && a.find('c') != std::string::npos) {
          if (i + 1 >= end) return refuse("`" + b + " -c` has no command");
          code[i + 1] = true;
          return read(args[i + 1].text, depth + 1);
        }
        continue;
      }
      if (one_of(a, {"-c", "-e", "-E", "-p", "--eval", "--print"})) {
        if (i + 1 >= end) return refuse("`" + b + " " + a + "` has no code");
        code[i + 1] = true;
        return inline_code(b, args[i + 1].text, kHow);
      }
      if (one_of(a, {"--require", "--import", "--loader", "--experimental-loader"}) ||
          std::string_view("mMIrl").find(a[1]) != std::string_view::npos)
        return refuse("`" + b + " " + a +
                      "` loads a module or include path by name, "
                      "which resolves against the directory git runs it in" +
                      kHow);
    }
    refuse("`" + b + "` reads its program from standard input");
  }

  void script(const std::string& b, const std::string& path, const std::string& how) {
    if (path.empty() || (path[0] != '/' && path.rfind("~/", 0) != 0))
      return refuse("`" + b + " " + path + "` runs a script by a relative name, and " + b +
                    " loads code next to it" + how);
    out_.scripts.push_back(path);
  }

  // Code given inline: python and node import from the working directory first, so
  // code that loads anything by name refuses; its paths are protected as any word's.
  void inline_code(const std::string& b, const std::string& text, const std::string& how) {
    for (std::string_view loads : {"import", "require", "load", "include", "use ", "do "})
      if (text.find(loads) != std::string::npos)
        return refuse("`" + b + "`'s inline code loads code by name ('" + std::string(loads) +
                      "'), which resolves against the directory git runs it in" + how);
    std::string word;
    for (const char c : text + " ") {
      if (std::string_view(" \t\n'\"`;,()[]{}=:").find(c) == std::string_view::npos) {
        word += c;
        continue;
      }
      if (!word.empty()) path_pieces({false, word}, false);
      word.clear();
    }
  }

  CommandPaths& out_;
  bool compound_ = false;
  bool positional_set_ = false;
};

}  // namespace

CommandPaths paths_in_command(std::string_view value) {
  CommandPaths out;
  // An alias or submodule.<s>.update runs what follows its '!' with the shell.
  const size_t first = value.find_first_not_of(" \t");
  if (first != std::string_view::npos && value[first] == '!') value.remove_prefix(first + 1);
  CommandWordReader reader(out);
  reader.read(value, 0);
  reader.refuse_compound_with_paths();
  if (out.unreadable) {
    out.words.clear();
    out.bare.clear();
    out.scripts.clear();
    out.git_commands.clear();
  }
  return out;
}

std::optional<Shebang> shebang_of(std::string_view line) {
  if (line.rfind("#!", 0) != 0) return std::nullopt;
  // As the kernel splits it: the interpreter's path, then at most one argument, the rest
  // of the line with its blanks.
  auto trim = [](std::string_view s) {
    const size_t b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return std::string_view();
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
  };
  line = trim(line.substr(2));
  const size_t blank = line.find_first_of(" \t");
  Shebang out{std::string(line.substr(0, blank)), false};
  const std::string_view arg = blank == std::string_view::npos ? "" : trim(line.substr(blank));
  if (interpreter(out.interpreter) == Interpreter::Other || project_runner(out.interpreter)) {
    out.loads_code_by_name = true;
  } else if (basename_of(out.interpreter) == "env") {
    // `env PROG` runs PROG; `env -S 'PROG ARGS'` splits; an option zpolicy does not read
    // here (`-i`, `-u NAME`) or an assignment first counts as the worst case; a bare `env`
    // prints the environment.
    std::string_view prog = arg;
    for (std::string_view split : {"--split-string=", "--split-string", "-S"})
      if (prog.rfind(split, 0) == 0) {
        prog = trim(prog.substr(split.size()));
        break;
      }
    const std::string p(prog.substr(0, prog.find_first_of(" \t")));
    out.loads_code_by_name =
        !p.empty() && (p[0] == '-' || assignment(p) || interpreter(p) == Interpreter::Other ||
                       project_runner(p));
  }
  return out;
}

}  // namespace zpolicy::compiler
