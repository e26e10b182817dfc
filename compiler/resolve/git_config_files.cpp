#include "compiler/resolve/git_config_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace zpolicy::compiler {

namespace {

// The directory holding `path`'s last component ("/" for one directly below it).
std::string directory_holding(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// `<bin>/../etc/gitconfig` for a git in the directory `bin`, as git's Makefile sets
// sysconfdir: /etc for the prefix /usr, `<prefix>/etc` for any other (`/` gives /etc too).
std::string system_config_of(const std::string& bin) {
  const std::string prefix = directory_holding(bin);
  return prefix == "/usr" || prefix == "/" ? "/etc/gitconfig" : prefix + "/etc/gitconfig";
}

// The system files of every `git` on `path`: a PATH entry that is not absolute names a
// directory relative to where the caller's shell runs, which zpolicy cannot know (the
// limit docs/protected-paths.md states).
std::vector<std::string> system_configs_on(const std::optional<std::string>& path) {
  std::vector<std::string> out;
  if (!path) return out;
  const std::string_view all(*path);
  for (size_t at = 0; at <= all.size();) {
    const size_t end = std::min(all.find(':', at), all.size());
    std::string dir(all.substr(at, end - at));
    at = end + 1;
    if (dir.empty() || dir[0] != '/') continue;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string git = (dir == "/" ? "" : dir) + "/git";
    struct stat st;
    if (stat(git.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || access(git.c_str(), X_OK) != 0)
      continue;
    // The name the shell runs (Linuxbrew's `bin/git` links into its Cellar, and its git's
    // sysconfdir is the brew prefix's `etc`) and the canonical one (a RUNTIME_PREFIX build
    // finds its prefix from /proc/self/exe): both, as neither alone is always git's.
    out.push_back(system_config_of(dir));
    char real[PATH_MAX];
    if (realpath(git.c_str(), real)) out.push_back(system_config_of(directory_holding(real)));
  }
  return out;
}

}  // namespace

GitConfigFilesOutside git_config_files_outside(const std::string& home,
                                               const CallerEnvironment& environment) {
  GitConfigFilesOutside out;
  // A relative value is opened by git from its working directory, wherever the host runs
  // it (config.c git_system_config, git_global_config, path.c xdg_config_home and
  // interpolate_path take it as written): perhaps a writable root, where the sandbox wrote
  // a config naming its own hooks. Refused: which directories git runs in is no question
  // zpolicy can answer. An empty value is none to git (XDG_CONFIG_HOME, HOME) or a file it
  // cannot open (GIT_CONFIG_*).
  for (const char* name : {"GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME", "HOME"}) {
    const auto v = environment.get(name);
    if (v && !v->empty() && !v->starts_with("/")) {
      out.refusal = std::string("$") + name + " is the relative path '" + *v +
                    "', which git opens from the directory it runs in, perhaps a writable "
                    "root: make it absolute";
      return out;
    }
  }
  std::vector<std::string> files{"/etc/gitconfig"};
  for (auto& f : system_configs_on(environment.get("PATH"))) files.push_back(std::move(f));
  // `/dev/null` is git's documented way to read no such file (GIT_CONFIG_GLOBAL=/dev/null
  // in test harnesses and CI): empty to git, and no regular file the reader would take.
  auto absolute_env = [&environment](const char* name) -> std::optional<std::string> {
    auto v = environment.get(name);
    return v && v->starts_with("/") && *v != "/dev/null" ? v : std::nullopt;
  };
  if (auto system = absolute_env("GIT_CONFIG_SYSTEM")) files.push_back(*system);
  if (auto xdg = absolute_env("XDG_CONFIG_HOME")) files.push_back(*xdg + "/git/config");
  if (!home.empty() && home[0] == '/') {
    const std::string base = home == "/" ? "" : home;
    files.push_back(base + "/.config/git/config");
    files.push_back(base + "/.gitconfig");
  }
  if (auto global = absolute_env("GIT_CONFIG_GLOBAL")) files.push_back(*global);
  for (auto& f : files)
    if (std::find(out.files.begin(), out.files.end(), f) == out.files.end())
      out.files.push_back(std::move(f));
  return out;
}

}  // namespace zpolicy::compiler
