#pragma once

#include <string>
#include <vector>

namespace zpolicy::cli {

// Each subcommand takes the arguments after its name and returns the process exit code.
using Args = std::vector<std::string>;

int cmd_compile(const Args& args);
int cmd_verify(const Args& args);
int cmd_check(const Args& args);
int cmd_diff(const Args& args);
int cmd_explain(const Args& args);
int cmd_inspect(const Args& args);
int cmd_run(const Args& args);
int cmd_plan(const Args& args);
int cmd_cleanup(const Args& args);
int cmd_doctor(const Args& args);
int cmd_show_default(const Args& args);

}  // namespace zpolicy::cli
