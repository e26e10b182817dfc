#pragma once

#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// Runs of a policy that reads everything and denies one path the test makes appear (or
// not) while the run starts: through `zpolicy run`, or through run_plan.py executing the
// plan of the same policy and command.
namespace zpolicy::tests::kernel {

// A root-owned policy reading "/", writing the workspace and denying `deny`.
inline std::string deny_policy(const Sandbox& box, const std::string& deny) {
  return box.write_policy("deny.yaml",
                          "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
                          "  write: [\"${WORKSPACE}\"]\n  deny: [\"" +
                              deny + "\"]\n");
}

// Makes `spec` run `command` under `policy`: `zpolicy run`, or, with `executor`, the plan
// `zpolicy plan` makes of it executed by examples/python/run_plan.py.
inline void run_through(const Sandbox& box, bool executor, const std::string& policy,
                        const std::vector<std::string>& command, RunSpec& spec) {
  if (!executor) {
    spec.options = {"--policy", policy};
    spec.command = command;
    return;
  }
  std::vector<std::string> plan_argv = {zpolicy_binary(), "plan", "--format", "json",
                                        "--policy",       policy, "--"};
  plan_argv.insert(plan_argv.end(), command.begin(), command.end());
  const RunResult planned = box.host_command(plan_argv);
  BOOST_REQUIRE_MESSAGE(planned.exit_code == 0, planned.describe());
  spec.launcher = {"/usr/bin/python3",
                   box.write_policy("run_plan.py", source_file("examples/python/run_plan.py")),
                   box.write_policy("plan.json", planned.out)};
}

}  // namespace zpolicy::tests::kernel
