// paths_in_command (git_config_keys.hpp): a command value read as `sh -c` reads it, as
// far as zpolicy can follow it without running a shell, and refused past that (red team
// A14B-3, A14B-2).
#include <algorithm>
#include <array>

#include "compiler/resolve/git_config_keys.hpp"

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

// An assignment prefix that changes where a program loads code from.
bool loader_variable(std::string_view name) {
  auto ends = [&](std::string_view s) {
    return name.size() >= s.size() && name.substr(name.size() - s.size()) == s;
  };
  for (std::string_view p : {"LD_", "PYTHON", "PERL", "RUBY", "NODE_", "GEM_", "BUNDLE_", "LUA_"})
    if (name.rfind(p, 0) == 0) return true;
  return ends("PATH") || ends("LIB") || one_of(name, {"BASH_ENV", "ENV", "ZDOTDIR"});
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

class Reader {
 public:
  explicit Reader(CommandPaths& out) : out_(out) {}

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
    // Each simple command, then the words no program takes as code.
    std::vector<bool> code(tokens.size(), false);
    size_t start = 0;
    for (size_t i = 0; i <= tokens.size() && !out_.unreadable; ++i)
      if (i == tokens.size() || tokens[i].op) {
        simple_command(tokens, start, i, code, depth);
        start = i + 1;
      }
    for (size_t i = 0; i < tokens.size() && !out_.unreadable; ++i)
      if (!tokens[i].op && !code[i]) path_pieces(tokens[i]);
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

  // The pieces of a word that name a file: split at '=' (`--file=./z`, `FOO=./bin/y`),
  // then a path list at ':' (`X=./bin:/usr/bin`), each piece with a '/'. A ':' after a
  // first piece without '/' makes a revision, refspec, URL or host (`HEAD:refs/heads/x`,
  // `origin:dir/f`, `https://h/x`), which names no file; an option word without '='
  // (`-Itools/x`) names none either: what its letters mean is the program's (red team
  // A14B-7).
  void path_pieces(const Token& t) {
    if (t.text.empty()) return;
    size_t at = 0;
    if (t.text[0] == '-') {
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
        if (piece.find('/') == std::string::npos) continue;
        const bool tilde_user = piece[0] == '~' && piece.rfind("~/", 0) != 0;
        if (t.dollar || t.glob || tilde_user)
          return refuse("'" + t.text + "' is a path only a shell could resolve");
        if (std::find(out_.words.begin(), out_.words.end(), piece) == out_.words.end())
          out_.words.push_back(std::move(piece));
      }
    }
  }

  // tokens[begin, end): one simple command. Marks in `code` the words a program takes as
  // code (`sh -c STRING`, `python3 -c CODE`), which are read as such, not as paths.
  void simple_command(const std::vector<Token>& words, size_t begin, size_t end,
                      std::vector<bool>& code, int depth) {
    size_t i = begin;
    // Reserved words, wrappers and assignments before the program.
    for (; i < end; ++i) {
      const std::string& w = words[i].text;
      std::string name;
      if (assignment(w, &name)) {
        if (loader_variable(name))
          return refuse("it sets " + name + ", which changes where programs load code from");
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
    if (b == "git") {
      std::string line;
      for (size_t at = i + 1; at < end; ++at) {
        if (!line.empty()) line += ' ';
        if (words[at].text.empty()) line += "''";
        for (const char c : words[at].text) (line += '\\') += c;
      }
      out_.git_commands.push_back(std::move(line));
    }
    // A program that runs another (`timeout 10 python3 -m x`, `nice`, `stdbuf -o0`,
    // `exec -a NAME`, `xargs`) hides the interpreter behind options zpolicy does not know
    // (red team A15-G1): the first word that names an interpreter is read as one, wherever
    // it stands. A word that only mentions one (`--author python`) refuses: fail closed.
    for (size_t at = i; at < end; ++at)
      if (const Interpreter kind = interpreter(words[at].text); kind != Interpreter::None)
        return interpreted(kind, basename_of(words[at].text), words, at + 1, end, code, depth);
    for (size_t at = i; at < end; ++at)
      if (const std::string name = basename_of(words[at].text);
          one_of(name, {"sed", "gsed", "awk", "gawk", "mawk", "nawk"}))
        return program_files(name, words, at + 1, end);
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
      if (!word.empty()) path_pieces({false, word});
      word.clear();
    }
  }

  CommandPaths& out_;
  bool compound_ = false;
};

}  // namespace

bool loads_code_beside_script(std::string_view first_line) {
  if (first_line.substr(0, 2) != "#!") return false;
  std::vector<std::string> words;
  std::string word;
  for (const char c : std::string(first_line.substr(2)) + " ") {
    if (c != ' ' && c != '\t') {
      word += c;
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  size_t i = 0;
  if (i < words.size() && basename_of(words[i]) == "env")
    for (++i; i < words.size() && (words[i][0] == '-' || assignment(words[i])); ++i) {
    }
  return i < words.size() && interpreter(words[i]) == Interpreter::Other;
}

CommandPaths paths_in_command(std::string_view value) {
  CommandPaths out;
  // An alias or submodule.<s>.update runs what follows its '!' with the shell.
  const size_t first = value.find_first_not_of(" \t");
  if (first != std::string_view::npos && value[first] == '!') value.remove_prefix(first + 1);
  Reader reader(out);
  reader.read(value, 0);
  reader.refuse_compound_with_paths();
  if (out.unreadable) {
    out.words.clear();
    out.scripts.clear();
    out.git_commands.clear();
  }
  return out;
}

}  // namespace zpolicy::compiler
