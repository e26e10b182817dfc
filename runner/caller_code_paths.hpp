#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/resolve/caller_environment.hpp"

namespace zpolicy::runner {

// The caller's $PATH, split: what the host runs by name after the sandbox is gone.
std::vector<std::string> caller_path_entries(const compiler::CallerEnvironment& caller);

// The caller's other search paths for code, as (variable, entry): what the host's next
// programs load by name from there (red team H17-8), the directories that move the start-up
// files ZP003 lists, the files the host's programs read as code or as configuration that
// runs commands, the paths in commands and option strings they run or apply, and the
// paths in the git configuration the environment gives (red team R18-7). In that order.
std::vector<std::pair<std::string, std::string>> caller_load_path_entries(
    const compiler::CallerEnvironment& caller);

}  // namespace zpolicy::runner
