#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve/caller_environment.hpp"
#include "compiler/resolve/git_config.hpp"

namespace zpolicy::compiler {

// One setting of git's configuration that the caller's environment gives
// (`$GIT_CONFIG_COUNT` with `$GIT_CONFIG_KEY_<n>` and `$GIT_CONFIG_VALUE_<n>`, and
// `$GIT_CONFIG_PARAMETERS`, which `git -c` exports to what git runs), applied by every git
// the caller's shell runs after the repository's own files, in any repository and in its
// submodules (prepare_other_repo_env keeps both). `variable` names where it came from;
// `entry.line` is its position there, from 1 (1 for a counted one, which its variable names).
struct GitEnvironmentSetting {
  std::string variable;
  GitConfigEntry entry;
};

struct GitEnvironmentSettings {
  std::vector<GitEnvironmentSetting> settings;
  // Set when zpolicy cannot read them as git does: the run is refused.
  std::optional<std::string> refusal;
};

// The settings as git's config.c git_config_from_parameters reads them: the counted ones
// first, then GIT_CONFIG_PARAMETERS' single-quoted words (`'key'='value'`, `'key'=`,
// `'key=value'`, `'key'`), keys with their section and name lowercased.
GitEnvironmentSettings git_config_environment(const CallerEnvironment& environment);

}  // namespace zpolicy::compiler
