#include "runner/caller_code_paths.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace zpolicy::runner {
namespace {

using compiler::CallerEnvironment;
using Entries = std::vector<std::pair<std::string, std::string>>;

// Variables whose value is a command or an option string (R18-7, add_command_paths). The
// last ten were missing (red team A29C-2): git runs $GIT_PROXY_COMMAND for every git:// URL
// (`git ls-remote`, `fetch`), sudoedit and systemctl their editors and pager, make's rules
// and build systems $CC and $CXX, cargo $RUSTC and its wrappers for every build of any
// project; one naming a workspace file ran what the command wrote there. And after them
// (red team A29D-2) the remote shells of rsync and cvs, the editors of bash's `fc`,
// `kubectl edit`, gh, hg and svn, gh's pager and browser, make's other tools, and cargo's
// rustc and rustdoc, the JVM build tools' option strings (`-javaagent:FILE`), and npm's
// shell for every `npm run` and its node options.
constexpr const char* kCommandVariables[] = {"EDITOR",
                                             "VISUAL",
                                             "PAGER",
                                             "MANPAGER",
                                             "GIT_EDITOR",
                                             "GIT_PAGER",
                                             "GIT_SEQUENCE_EDITOR",
                                             "GIT_SSH",
                                             "GIT_SSH_COMMAND",
                                             "GIT_ASKPASS",
                                             "SSH_ASKPASS",
                                             "SUDO_ASKPASS",
                                             "BROWSER",
                                             "GIT_EXTERNAL_DIFF",
                                             "LESSOPEN",
                                             "LESSCLOSE",
                                             "SHELL",
                                             "PROMPT_COMMAND",
                                             "NODE_OPTIONS",
                                             "RUBYOPT",
                                             "PERL5OPT",
                                             "JAVA_TOOL_OPTIONS",
                                             "_JAVA_OPTIONS",
                                             "JDK_JAVA_OPTIONS",
                                             "GOFLAGS",
                                             "VIMINIT",
                                             "EXINIT",
                                             "GIT_PROXY_COMMAND",
                                             "SUDO_EDITOR",
                                             "SYSTEMD_EDITOR",
                                             "SYSTEMD_PAGER",
                                             "CC",
                                             "CXX",
                                             "RUSTC",
                                             "RUSTC_WRAPPER",
                                             "RUSTC_WORKSPACE_WRAPPER",
                                             "CARGO_BUILD_RUSTC_WRAPPER",
                                             "RSYNC_RSH",
                                             "CVS_RSH",
                                             "FCEDIT",
                                             "KUBE_EDITOR",
                                             "GH_EDITOR",
                                             "GH_PAGER",
                                             "GH_BROWSER",
                                             "HGEDITOR",
                                             "SVN_EDITOR",
                                             "AS",
                                             "AR",
                                             "LD",
                                             "CPP",
                                             "FC",
                                             "CARGO_BUILD_RUSTC",
                                             "CARGO_BUILD_RUSTDOC",
                                             "RUSTDOC",
                                             "MAVEN_OPTS",
                                             "GRADLE_OPTS",
                                             "SBT_OPTS",
                                             "ANT_OPTS",
                                             "NPM_CONFIG_SCRIPT_SHELL",
                                             "npm_config_script_shell",
                                             "NPM_CONFIG_NODE_OPTIONS",
                                             "npm_config_node_options"};

// The caller's search paths for code (red team H17-8), and the directories that move the
// start-up files ZP003 lists ($XDG_CONFIG_HOME's git, fish, systemd, autostart; $ZDOTDIR's
// .zshrc). LD_PRELOAD names files (blanks or colons between them); the rest are
// colon-separated lists. gcc looks for the programs it runs (cc1, as, collect2, ld) in
// $COMPILER_PATH's directories and below $GCC_EXEC_PREFIX first: one naming the workspace
// had the host's next `gcc -c` run the `as` the command wrote there (red team A29D-2).
void add_search_path_entries(const CallerEnvironment& caller, Entries& out) {
  for (const char* variable : {"LD_LIBRARY_PATH",   "LD_PRELOAD",
                               "LD_AUDIT",          "PYTHONPATH",
                               "PERL5LIB",          "PERLLIB",
                               "RUBYLIB",           "NODE_PATH",
                               "BASH_ENV",          "ENV",
                               "PYTHONSTARTUP",     "XDG_CONFIG_HOME",
                               "ZDOTDIR",           "PYTHONUSERBASE",
                               "GIT_CONFIG_GLOBAL", "GIT_EXEC_PATH",
                               "GIT_TEMPLATE_DIR",  "CARGO_HOME",
                               "RUSTUP_HOME",       "GEM_HOME",
                               "GEM_PATH",          "CLASSPATH",
                               "COMPILER_PATH",     "GCC_EXEC_PREFIX",
                               "CMAKE_PREFIX_PATH"}) {
    const auto value = caller.get(variable);
    if (!value) continue;
    const std::string& rest = *value;
    const std::string_view name = variable;
    const bool objects = name == "LD_PRELOAD" || name == "LD_AUDIT";
    for (size_t pos = 0; pos <= rest.size();) {
      size_t next = rest.find_first_of(name == "LD_PRELOAD" ? ": " : ":", pos);
      if (next == std::string::npos) next = rest.size();
      std::string entry = rest.substr(pos, next - pos);
      pos = next + 1;
      // An object named without a '/' is searched on the library path (judged through
      // LD_LIBRARY_PATH); an empty one is nothing. An empty directory entry is the working
      // directory, as in $PATH.
      if (objects && entry.find('/') == std::string::npos) continue;
      out.emplace_back(variable, std::move(entry));
    }
  }
}

// Files the host's programs read as code or as configuration that runs commands, and
// directories they load whole (red team R18-7): `make` parses every $MAKEFILES first
// (`$(shell …)`), `kubectl` runs a kubeconfig's credential `exec` plugin, the AWS CLI a
// profile's `credential_process`, hg an hgrc's hooks, python its $PYTHONHOME and the
// bytecode in $PYTHONPYCACHEPREFIX, glibc's iconv the modules of $GCONV_PATH, gpg-agent
// the `pinentry-program` of $GNUPGHOME. And (red team A29D-2) cmake the CMake code of
// $CMAKE_TOOLCHAIN_FILE in every project it configures, npm an npmrc's `script-shell` for
// every `npm run`, psql, irb and R their start-up files, go $GOENV's GOFLAGS, gradle every
// init script of $GRADLE_USER_HOME/init.d: `CMAKE_TOOLCHAIN_FILE=WS/tc.cmake` and
// `NPM_CONFIG_USERCONFIG=WS/.npmrc` ran the command's `execute_process` and shell at the
// host's next `cmake` and `npm run` elsewhere. Colon lists; $MAKEFILES is blank-separated.
// An empty entry names nothing here.
void add_code_file_entries(const CallerEnvironment& caller, Entries& out) {
  for (const char* variable : {"KUBECONFIG",
                               "AWS_CONFIG_FILE",
                               "HGRCPATH",
                               "MAKEFILES",
                               "MYVIMRC",
                               "PYTHONHOME",
                               "PYTHONPYCACHEPREFIX",
                               "GCONV_PATH",
                               "GNUPGHOME",
                               "DOCKER_CONFIG",
                               "CLOUDSDK_CONFIG",
                               "CMAKE_TOOLCHAIN_FILE",
                               "NPM_CONFIG_USERCONFIG",
                               "npm_config_userconfig",
                               "NPM_CONFIG_GLOBALCONFIG",
                               "npm_config_globalconfig",
                               "PSQLRC",
                               "IRBRC",
                               "R_PROFILE_USER",
                               "GOENV",
                               "GRADLE_USER_HOME"}) {
    const auto value = caller.get(variable);
    // GOENV=off names no file: go reads none.
    if (!value || (std::string_view(variable) == "GOENV" && *value == "off")) continue;
    const std::string& rest = *value;
    const char* separators = std::string_view(variable) == "MAKEFILES" ? " \t" : ":";
    for (size_t pos = 0; pos <= rest.size();) {
      size_t next = rest.find_first_of(separators, pos);
      if (next == std::string::npos) next = rest.size();
      if (next > pos) out.emplace_back(variable, rest.substr(pos, next - pos));
      pos = next + 1;
    }
  }
}

// The path a piece of a command word names (`-I/dir`, `-r./x`: the option's letters before
// it go), none where it names none: no '/', or a parameter expansion, the shell's to
// evaluate (a prompt's `${PWD/#$HOME/~}`). `~/` is the caller's home, when that is absolute.
std::optional<std::string> path_of_piece(std::string piece, const CallerEnvironment& caller) {
  if (!piece.empty() && piece[0] == '-')
    piece.erase(
        0, std::min(piece.size(), piece.find_first_not_of("-_0123456789abcdefghijklmnopqrstuvwxyz"
                                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ")));
  if (piece.find('/') == std::string::npos || piece.find_first_of("$`") != std::string::npos)
    return std::nullopt;
  if (piece.rfind("~/", 0) == 0)
    if (const auto home = caller.get("HOME"); home && home->starts_with("/"))
      piece = *home + piece.substr(1);
  return piece;
}

// Commands and option strings the host's programs run or apply (red team R18-7): the
// program `git commit` starts as $GIT_EDITOR, `less` as $LESSOPEN, `ssh` as
// $SSH_ASKPASS, bash's $PROMPT_COMMAND before each prompt, `node --require FILE` in
// $NODE_OPTIONS, `-javaagent:FILE`, `go build -toolexec=FILE`. Each word naming a path
// (holding a '/') is an entry: the word itself, or of `-opt=PATH`, `-opt:PATH`,
// `-IPATH` the part that holds the '/' (more, never less). A word without '/' is found
// on $PATH, which is judged as $PATH.
void add_command_paths(const std::string& variable, const std::string& value,
                       const CallerEnvironment& caller, Entries& out) {
  std::string words = value;
  for (char& c : words)
    if (c == '\'' || c == '"' || c == '|' || c == ';' || c == '&' || c == '(' || c == ')' ||
        c == '\n' || c == '\t')
      c = ' ';
  for (size_t pos = 0; pos < words.size();) {
    size_t next = words.find(' ', pos);
    if (next == std::string::npos) next = words.size();
    const std::string word = words.substr(pos, next - pos);
    pos = next + 1;
    if (word.find('/') == std::string::npos) continue;
    for (size_t at = 0; at <= word.size();) {
      size_t end = word.find_first_of("=:,", at);
      if (end == std::string::npos) end = word.size();
      if (auto path = path_of_piece(word.substr(at, end - at), caller))
        out.emplace_back(variable, std::move(*path));
      at = end + 1;
    }
  }
}

// One setting of the git configuration the environment gives, which every git command of
// the caller's shell applies (red team R18-7). A key that names a directory or file by its
// value (core.hooksPath, core.worktree, include.path, includeIf.*.path, init.templateDir)
// names it even without a '/' (judged from here, where a relative hooks path is taken from
// the top the caller runs git in); any other value is read as a command.
void add_git_setting(const std::string& variable, std::string key, const std::string& value,
                     const CallerEnvironment& caller, Entries& out) {
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  const bool path_key = key == "core.hookspath" || key == "core.worktree" ||
                        key == "include.path" || key == "init.templatedir" ||
                        (key.rfind("includeif.", 0) == 0 && key.size() > 5 &&
                         key.compare(key.size() - 5, 5, ".path") == 0);
  if (!path_key || value.empty() || value.find_first_of("$`") != std::string::npos) {
    add_command_paths(variable, value, caller, out);
    return;
  }
  const auto home = caller.get("HOME");
  out.emplace_back(variable, value.rfind("~/", 0) == 0 && home ? *home + value.substr(1) : value);
}

// GIT_CONFIG_COUNT's settings: GIT_CONFIG_KEY_n with GIT_CONFIG_VALUE_n.
void add_git_config_count(const CallerEnvironment& caller, Entries& out) {
  const auto count = caller.get("GIT_CONFIG_COUNT");
  if (!count) return;
  const long n = std::strtol(count->c_str(), nullptr, 10);
  for (long i = 0; i < n && i < 1000; ++i) {
    const std::string v = "GIT_CONFIG_VALUE_" + std::to_string(i);
    const auto key = caller.get("GIT_CONFIG_KEY_" + std::to_string(i));
    const auto value = caller.get(v);
    if (key && value) add_git_setting(v, *key, *value, caller, out);
  }
}

// The shell single-quoted string at `at` in `text` ('\'' for a quote), after blanks; `at`
// moves past it. None where no whole one is there.
std::optional<std::string> single_quoted(const std::string& text, size_t& at) {
  while (at < text.size() && text[at] == ' ') ++at;
  if (at >= text.size() || text[at] != '\'') return std::nullopt;
  std::string word;
  for (++at; at < text.size(); ++at) {
    if (text[at] != '\'') {
      word += text[at];
    } else if (text.compare(at, 4, "'\\''") == 0) {
      word += '\'';
      at += 3;
    } else {
      ++at;
      return word;
    }
  }
  return std::nullopt;
}

// GIT_CONFIG_PARAMETERS' settings: single-quoted strings, a pair joined by '=' or one string
// holding 'key=value'.
void add_git_config_parameters(const CallerEnvironment& caller, Entries& out) {
  const auto params = caller.get("GIT_CONFIG_PARAMETERS");
  if (!params) return;
  const std::string& text = *params;
  size_t at = 0;
  while (auto first = single_quoted(text, at)) {
    if (at < text.size() && text[at] == '=') {
      ++at;
      if (auto value = single_quoted(text, at))
        add_git_setting("GIT_CONFIG_PARAMETERS", *first, *value, caller, out);
    } else if (const size_t eq = first->find('='); eq != std::string::npos) {
      add_git_setting("GIT_CONFIG_PARAMETERS", first->substr(0, eq), first->substr(eq + 1), caller,
                      out);
    }
  }
}

}  // namespace

std::vector<std::string> caller_path_entries(const CallerEnvironment& caller) {
  std::vector<std::string> out;
  const std::string rest = caller.get("PATH").value_or("");
  for (size_t pos = 0; pos <= rest.size();) {
    size_t next = rest.find(':', pos);
    if (next == std::string::npos) next = rest.size();
    out.push_back(rest.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> caller_load_path_entries(
    const CallerEnvironment& caller) {
  Entries out;
  add_search_path_entries(caller, out);
  add_code_file_entries(caller, out);
  for (const char* variable : kCommandVariables)
    if (const auto value = caller.get(variable)) add_command_paths(variable, *value, caller, out);
  add_git_config_count(caller, out);
  add_git_config_parameters(caller, out);
  return out;
}

}  // namespace zpolicy::runner
