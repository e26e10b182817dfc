#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve/caller_environment.hpp"

namespace zpolicy::compiler {

// The configuration files git reads for every repository of this user, before the
// repository's own: the system files, $XDG_CONFIG_HOME/git/config or ~/.config/git/config,
// ~/.gitconfig and the one GIT_CONFIG_GLOBAL names. Each one the host's git may read is
// listed, also where git would skip it (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL set): more,
// never less. Missing files are skipped by the reader, as by git.
//
// The system file is git's `$(sysconfdir)/gitconfig`, fixed when git was built: /etc/gitconfig
// for a git built with the prefix /usr, `<prefix>/etc/gitconfig` for any other prefix
// (/usr/local, Linuxbrew's, conda's RUNTIME_PREFIX build, relative to the executable). git
// is not run to ask (a process start on every run): /etc/gitconfig is read, and for every
// `git` on the caller's $PATH whose directory `<d>` is not /usr/bin, the
// `<d>/../etc/gitconfig` of its name there and of its canonical path (review R25-4), and
// the file GIT_CONFIG_SYSTEM names.
//
// The variables are those of `environment`, the caller's.
//
// `refusal`: one of GIT_CONFIG_SYSTEM, GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME and HOME is
// relative, which git opens from the directory it runs in, perhaps in a writable root
// (review R25-5); the caller refuses the run.
struct GitConfigFilesOutside {
  std::vector<std::string> files;
  std::optional<std::string> refusal;
};
GitConfigFilesOutside git_config_files_outside(const std::string& home,
                                               const CallerEnvironment& environment);

}  // namespace zpolicy::compiler
