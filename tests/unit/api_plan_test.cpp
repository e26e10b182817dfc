// The public plan carries everything an executor runs, for every backend: a sandbox-exec
// plan's argv is the command line the runner would build from the verified profile and
// parameters (it was empty, leaving an embedder to rebuild it).
#include <boost/test/unit_test.hpp>

#include "api/plan.hpp"
#include "compiler/backend_paths.hpp"
#include "zpolicy/zpolicy.hpp"

namespace {

zpolicy::compiler::RunPlan sandbox_exec_plan() {
  auto compiled = zpolicy::compile({}, zpolicy::Target::Macos);
  BOOST_TEST_REQUIRE(compiled.exit_code == 0);
  zpolicy::compiler::RunPlan p;
  p.backend = zpolicy::compiler::Backend::SandboxExec;
  p.exe = zpolicy::compiler::kSandboxExecPath;
  p.command = {"/usr/bin/make", "test"};
  p.cwd = "/Users/dev/project";
  for (const auto& a : compiled.artifacts)
    if (a.name == "profile.sb") p.sbpl_profile = a.content;
  p.sbpl_params = {{"WORKSPACE", "/Users/dev/project"}, {"HOME", "/Users/dev"}};
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(api_plan)

BOOST_AUTO_TEST_CASE(a_sandbox_exec_plan_carries_its_argv) {
  const auto p = sandbox_exec_plan();
  std::string error;
  const auto plan = zpolicy::api::public_plan(p, error);
  BOOST_TEST_REQUIRE(plan.has_value(), error);
  const std::vector<std::string> expected = {"/usr/bin/sandbox-exec", "-p", p.sbpl_profile,
                                             "-D", "WORKSPACE=/Users/dev/project",
                                             "-D", "HOME=/Users/dev",
                                             "--", "/usr/bin/make", "test"};
  BOOST_TEST(plan->argv == expected, boost::test_tools::per_element());
  BOOST_TEST(plan->exe == plan->argv.front());
  BOOST_TEST(plan->backend == "sandbox-exec");
  BOOST_TEST(plan->cwd == "/Users/dev/project");
  BOOST_TEST(plan->placeholders.empty());
  BOOST_TEST(!plan->status_fd.has_value());
}

BOOST_AUTO_TEST_CASE(a_sandbox_exec_argv_that_cannot_be_built_gives_no_plan) {
  auto p = sandbox_exec_plan();
  p.sbpl_params.push_back({"bad-name", "x"});
  std::string error;
  BOOST_TEST(!zpolicy::api::public_plan(p, error).has_value());
  BOOST_TEST(error == "cannot build the sandbox-exec command line: invalid parameter name 'bad-name'");
}

BOOST_AUTO_TEST_SUITE_END()
