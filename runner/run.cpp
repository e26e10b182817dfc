#include "runner/run.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "compiler/lint/policy_lint.hpp"
#include "compiler/resolve/resolve.hpp"
#include "compiler/run_plan.hpp"
#include "runner/backend.hpp"
#include "runner/environment.hpp"
#include "runner/execute.hpp"
#include "runner/explain_hint.hpp"
#if defined(__linux__)
#include "runner/host_mount_table.hpp"
#include "runner/mount_objects_seen.hpp"
#endif
#include "zpolicy/exit_code.hpp"

#if defined(__APPLE__)
#include "runner/macos_argv.hpp"
#endif

namespace zpolicy::runner {
namespace {

// The caller's $PATH, split: what the host runs by name after the sandbox is gone.
std::vector<std::string> caller_path_entries() {
  std::vector<std::string> out;
  const char* path = getenv("PATH");
  std::string rest = path ? path : "";
  for (size_t pos = 0; pos <= rest.size();) {
    size_t next = rest.find(':', pos);
    if (next == std::string::npos) next = rest.size();
    out.push_back(rest.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

// Variables whose value is a command or an option string (R18-7, below).
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
                                             "EXINIT"};

// The caller's other search paths for code, split, as (variable, entry): what the host's
// next programs load by name from there (red team H17-8), and the directories that move
// the start-up files ZP003 lists ($XDG_CONFIG_HOME's git, fish, systemd, autostart;
// $ZDOTDIR's .zshrc). LD_PRELOAD names files (blanks or colons between them); the rest are
// colon-separated lists.
std::vector<std::pair<std::string, std::string>> caller_load_path_entries() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* variable :
       {"LD_LIBRARY_PATH", "LD_PRELOAD",       "LD_AUDIT",   "PYTHONPATH",     "PERL5LIB",
        "PERLLIB",         "RUBYLIB",          "NODE_PATH",  "BASH_ENV",       "ENV",
        "PYTHONSTARTUP",   "XDG_CONFIG_HOME",  "ZDOTDIR",    "PYTHONUSERBASE", "GIT_CONFIG_GLOBAL",
        "GIT_EXEC_PATH",   "GIT_TEMPLATE_DIR", "CARGO_HOME", "RUSTUP_HOME",    "GEM_HOME",
        "GEM_PATH",        "CLASSPATH"}) {
    const char* value = getenv(variable);
    if (!value) continue;
    const std::string rest = value;
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
  // Files the host's programs read as code or as configuration that runs commands, and
  // directories they load whole (red team R18-7): `make` parses every $MAKEFILES first
  // (`$(shell …)`), `kubectl` runs a kubeconfig's credential `exec` plugin, the AWS CLI a
  // profile's `credential_process`, hg an hgrc's hooks, python its $PYTHONHOME and the
  // bytecode in $PYTHONPYCACHEPREFIX, glibc's iconv the modules of $GCONV_PATH, gpg-agent
  // the `pinentry-program` of $GNUPGHOME. Colon lists; $MAKEFILES is blank-separated. An
  // empty entry names nothing here.
  for (const char* variable :
       {"KUBECONFIG", "AWS_CONFIG_FILE", "HGRCPATH", "MAKEFILES", "MYVIMRC", "PYTHONHOME",
        "PYTHONPYCACHEPREFIX", "GCONV_PATH", "GNUPGHOME", "DOCKER_CONFIG", "CLOUDSDK_CONFIG"}) {
    const char* value = getenv(variable);
    if (!value) continue;
    const std::string rest = value;
    const char* separators = std::string_view(variable) == "MAKEFILES" ? " \t" : ":";
    for (size_t pos = 0; pos <= rest.size();) {
      size_t next = rest.find_first_of(separators, pos);
      if (next == std::string::npos) next = rest.size();
      if (next > pos) out.emplace_back(variable, rest.substr(pos, next - pos));
      pos = next + 1;
    }
  }
  // Commands and option strings the host's programs run or apply (red team R18-7): the
  // program `git commit` starts as $GIT_EDITOR, `less` as $LESSOPEN, `ssh` as
  // $SSH_ASKPASS, bash's $PROMPT_COMMAND before each prompt, `node --require FILE` in
  // $NODE_OPTIONS, `-javaagent:FILE`, `go build -toolexec=FILE`. Each word naming a path
  // (holding a '/') is an entry: the word itself, or of `-opt=PATH`, `-opt:PATH`,
  // `-IPATH` the part that holds the '/' (more, never less). A word without '/' is found
  // on $PATH, which is judged as $PATH.
  auto command_paths = [&out](const std::string& variable, const std::string& value) {
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
        std::string piece = word.substr(at, end - at);
        at = end + 1;
        // `-I/dir`, `-r./x`: the option's letters before the path.
        if (!piece.empty() && piece[0] == '-')
          piece.erase(0, std::min(piece.size(),
                                  piece.find_first_not_of("-_0123456789abcdefghijklmnopqrstuvwxyz"
                                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ")));
        // A parameter expansion is the shell's to evaluate (a prompt's `${PWD/#$HOME/~}`);
        // `~/` is the caller's home.
        if (piece.find('/') == std::string::npos || piece.find_first_of("$`") != std::string::npos)
          continue;
        if (piece.rfind("~/", 0) == 0)
          if (const char* home = getenv("HOME"); home && home[0] == '/')
            piece = home + piece.substr(1);
        out.emplace_back(variable, std::move(piece));
      }
    }
  };
  for (const char* variable : kCommandVariables)
    if (const char* value = getenv(variable)) command_paths(variable, value);
  // Git configuration given in the environment, which every git command of the caller's
  // shell applies (red team R18-7): GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n/VALUE_n, and
  // GIT_CONFIG_PARAMETERS (`'key'='value'` pairs, or `'key=value'`). A key that names a
  // directory or file by its value (core.hooksPath, core.worktree, include.path,
  // includeIf.*.path, init.templateDir) names it even without a '/' (judged from here,
  // where a relative hooks path is taken from the top the caller runs git in); any other
  // value is read as a command.
  auto git_setting = [&](const std::string& variable, std::string key, const std::string& value) {
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    const bool path_key = key == "core.hookspath" || key == "core.worktree" ||
                          key == "include.path" || key == "init.templatedir" ||
                          (key.rfind("includeif.", 0) == 0 && key.size() > 5 &&
                           key.compare(key.size() - 5, 5, ".path") == 0);
    if (path_key && !value.empty() && value.find_first_of("$`") == std::string::npos)
      out.emplace_back(variable, value.rfind("~/", 0) == 0 && getenv("HOME")
                                     ? getenv("HOME") + value.substr(1)
                                     : value);
    else
      command_paths(variable, value);
  };
  if (const char* count = getenv("GIT_CONFIG_COUNT")) {
    const long n = std::strtol(count, nullptr, 10);
    for (long i = 0; i < n && i < 1000; ++i) {
      const std::string k = "GIT_CONFIG_KEY_" + std::to_string(i);
      const std::string v = "GIT_CONFIG_VALUE_" + std::to_string(i);
      const char* key = getenv(k.c_str());
      const char* value = getenv(v.c_str());
      if (key && value) git_setting(v, key, value);
    }
  }
  if (const char* params = getenv("GIT_CONFIG_PARAMETERS")) {
    // Shell single-quoted strings ('\'' for a quote), a pair joined by '=' or one string
    // holding 'key=value'.
    const std::string text = params;
    size_t at = 0;
    auto quoted = [&]() -> std::optional<std::string> {
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
    };
    while (auto first = quoted()) {
      if (at < text.size() && text[at] == '=') {
        ++at;
        if (auto value = quoted()) git_setting("GIT_CONFIG_PARAMETERS", *first, *value);
      } else if (const size_t eq = first->find('='); eq != std::string::npos) {
        git_setting("GIT_CONFIG_PARAMETERS", first->substr(0, eq), first->substr(eq + 1));
      }
    }
  }
  return out;
}

// Resolves the command the way execvp would, but with the sandbox's own PATH, so a
// missing or non-executable command is reported (127/126) before anything starts.
std::optional<std::string> find_command(const std::string& name,
                                        const std::vector<std::string>& env, int& failure) {
  auto executable = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  auto exists = [](const std::string& p) { return access(p.c_str(), F_OK) == 0; };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return name;
    failure = exists(name) ? kExitNotExecutable : kExitNotFound;
    return std::nullopt;
  }
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  failure = kExitNotFound;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find(':', pos);
    if (next == std::string::npos) next = path.size();
    std::string dir = path.substr(pos, next - pos);
    pos = next + 1;
    if (dir.empty() || dir[0] != '/') continue;  // relative PATH entries would search the cwd
    std::string cand = dir + "/" + name;
    if (executable(cand)) return cand;
    if (exists(cand)) failure = kExitNotExecutable;
  }
  return std::nullopt;
}

// `unavailable: run-unconfined` is honoured only from a policy file nobody else could
// have written: owned by root or the caller, not writable by group or others.
bool trusted_policy_file(const std::optional<std::string>& path) {
  if (!path) return false;
  struct stat st;
  return stat(path->c_str(), &st) == 0 && (st.st_uid == 0 || st.st_uid == getuid()) &&
         !(st.st_mode & (S_IWGRP | S_IWOTH));
}

std::optional<std::string> canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

// The policy file as it is opened: absolute, but with its symlinks, which the lints follow
// one by one (ZP004).
std::string absolute(const std::string& path, const std::string& cwd) {
  return path.starts_with("/") ? path : cwd + "/" + path;
}

}  // namespace

std::variant<compiler::RunPlan, int> prepare(const RunRequest& req, std::ostream& err,
                                             compiler::FilterProof when,
                                             [[maybe_unused]] HostMountTable* mounts) {
  if (req.command.empty()) {
    err << "zpolicy: run: no command given (zpolicy run [OPTIONS] -- CMD [ARG...])\n";
    return kExitUsage;
  }
  if (auto why = compiler::check_accepted(req.accept)) {
    err << "zpolicy: " << *why << "\n";
    return kExitUsage;
  }
  // --timeout narrows like --mode: it may shorten the policy's limit, never lift it.
  if (req.timeout && req.policy.timeout && *req.timeout > req.policy.timeout->value) {
    err << "<command line>: error: --timeout is longer than the policy's timeout ("
        << req.policy.timeout->loc.str() << "); it may only shorten it\n";
    return kExitUsage;
  }
  compiler::RunInput in{req.policy, req.mode, std::nullopt, {}, req.accept, {}, {}, req.timeout};
  if (!in.timeout && in.policy.timeout) in.timeout = in.policy.timeout->value;
  const auto caller = current_environment();
  in.env = build_environment(in.policy.env, caller);
  for (const auto& e : req.env) {
    const auto eq = e.find('=');
    const std::string name = e.substr(0, eq);
    if (compiler::looks_like_secret(name))
      err << "zpolicy: warning: --env " << name
          << " looks like a secret; everything in the sandbox can read it\n";
    if (eq != std::string::npos) {
      set_variable(in.env, name, e.substr(eq + 1));
      continue;
    }
    for (const auto& c : caller)
      if (c.starts_with(name + "=")) set_variable(in.env, name, c.substr(name.size() + 1));
  }
  // Tells a program it runs under zpolicy, and how confined (docs/run.md "Environment").
  set_variable(in.env, "ZPOLICY_SANDBOX", ir::to_string(req.mode));
  int failure = 0;
  auto exe = find_command(req.command[0], in.env, failure);
  if (!exe) {
    err << "zpolicy: " << req.command[0] << ": "
        << (failure == kExitNotFound ? "command not found" : "not executable") << "\n";
    return failure;
  }
  in.command = req.command;
  in.command[0] = *exe;

  // Before danger-full-access too: run unconfined, the command would keep the effective
  // identity (a set-user-id-root copy gave nobody a root shell; red team A13B-1).
  if (auto why = set_id_process(); !why.empty()) {
    err << "zpolicy: refusing to run: " << why << "; nothing ran\n";
    return kExitInternal;
  }

  if (req.mode == ir::Mode::DangerFullAccess) return compiler::plan_unconfined(in);

  if (auto backend = preflight(); !backend.usable()) {
    if (in.policy.unavailable.value == ir::Unavailable::RunUnconfined &&
        req.mode == ir::Mode::WorkspaceWrite && trusted_policy_file(req.policy_path)) {
      err << "zpolicy: sandbox unavailable (" << backend.str()
          << "); running UNCONFINED as " << in.policy.unavailable.loc.str() << " allows\n";
      return compiler::plan_unconfined(in);
    }
    err << "zpolicy: refusing to run without a sandbox: " << backend.str() << "\n";
    return kExitUnavailable;
  }

  ir::Diagnostics diags;
  in.host = compiler::host_facts(req.workspace, diags);
  if (!in.host) {
    err << diags.str();
    return kExitUsage;
  }
#if defined(__linux__)
  // Before the table is read: a mount change from here on is seen by the look below.
  const unsigned long marks_before = mounts ? mounts->marks() : 0;
  if (mounts) {
    in.host->mounts = mounts->now();
    // Unread, no other name of a deny root would be masked: refuse rather than guess.
    if (in.host->mounts->empty()) {
      err << "zpolicy: cannot read the host's mount table (/proc/self/mountinfo); nothing ran\n";
      return kExitInternal;
    }
  }
#endif
  in.lint = {
      in.host,
      req.policy_path ? std::optional(absolute(*req.policy_path, in.host->cwd)) : std::nullopt,
      canonical("/proc/self/exe"),
      std::string(kBwrapPath),
      caller_path_entries(),
      caller_load_path_entries()};
#if defined(__APPLE__)
  in.lint.backend_binary = std::string(kSandboxExec);
  const auto target = ir::Target::Macos;
#else
  const auto target = ir::Target::Linux;
#endif
  auto planned = compiler::plan_confined(in, target, when);
  if (auto* refusal = std::get_if<compiler::Refusal>(&planned)) {
    err << refusal->report;
    return refusal->exit_code;
  }
#if defined(__linux__)
  // What the lints judged by name at the mount points in the writable roots, by identity:
  // the sandbox must get the same (runner/mount_objects_seen.hpp). Recorded after the
  // lints, so no mount may have changed on the host since the table they judged was read,
  // or the record could be of another mount than the one judged.
  auto& plan = std::get<compiler::RunPlan>(planned);
  if (mounts && plan.verified) {
    plan.mounts_judged = mount_objects_seen(AT_FDCWD, plan.verified->write, mounts->first());
    // One the lints could not look at either (EACCES below a directory the caller cannot
    // search) was judged by nothing: what it shows is unknown (red team A14B-8).
    for (const auto& o : *plan.mounts_judged)
      if (!o.found) {
        err << "zpolicy: the mount point '" << o.point
            << "' in a writable root cannot be looked up by this user (a directory on its way "
               "is not searchable), so what it shows cannot be judged; make its directories "
               "searchable, or give the run another writable root; nothing ran\n";
        return kExitUsage;
      }
    if (mounts->marks() != marks_before) {
      err << "zpolicy: a filesystem was mounted or unmounted on the host while the policy was "
             "resolved; refusing to run what was not judged; nothing ran\n";
      return kExitInternal;
    }
  }
#endif
  return std::get<compiler::RunPlan>(std::move(planned));
}

int run(const RunRequest& req, std::ostream& err, RunReport* report) {
#if defined(__linux__)
  // One descriptor of the host's mount table for the whole run (runner/host_mount_table.hpp).
  HostMountTable host_mounts;
  HostMountTable* mounts = &host_mounts;
#else
  HostMountTable* mounts = nullptr;
#endif
  auto prepared = prepare(req, err, compiler::FilterProof::BeforeRelease, mounts);
  const auto* planned = std::get_if<compiler::RunPlan>(&prepared);
  // A refusal that comes before any plan is a status too: nothing ran that could forge it.
  if (req.status_file) {
    auto file = StatusFile::open(*req.status_file, planned, err);
    if (const int* refused = std::get_if<int>(&file)) return *refused;
    if (report) report->status_file.emplace(std::get<StatusFile>(std::move(file)));
  }
  if (!planned) return std::get<int>(prepared);
  const auto& plan = *planned;
  RunReport own;
  RunReport& observed = report ? *report : own;
  const int status = execute(plan, err, &observed, mounts);
  // A refusal's status is zpolicy's: the hint would say the command exited with it (red
  // team R8-S1).
  if (observed.refused_before_start) return status;
  if (auto hint = explain_hint(req, plan.backend != compiler::Backend::Unconfined, status,
                               !observed.did_not_start))
    err << *hint << "\n";
  return status;
}

}  // namespace zpolicy::runner
