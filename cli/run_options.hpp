#pragma once

#include <string>

#include "cli/options.hpp"

namespace zpolicy::cli {

// The options `run` and `plan` share (--policy, --mode, --workspace, --timeout, --env,
// --accept), those of `opts` as well, and the command after "--", which is never parsed
// as ours. A command given without "--" is a usage error that shows the line with it.
// Returns false on a usage error (printed; exit 2); `help_shown` as parse_options.
bool parse_run_options(const Args& args, const std::string& command_name,
                       const std::string& usage, po::options_description& opts,
                       po::variables_map& vm, RunRequest& request, bool& help_shown);

}  // namespace zpolicy::cli
