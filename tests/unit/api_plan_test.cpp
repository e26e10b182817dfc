// The public plan carries everything an executor runs, for every backend: a sandbox-exec
// plan's argv is the command line the runner would build from the verified profile and
// parameters (it was empty, leaving an embedder to rebuild it).
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <sstream>

#include "api/plan.hpp"
#include "compiler/backend_paths.hpp"
#include "support/temp_dir.hpp"
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

// run(plan) executes only what plan() verified: the plan as made runs; one built by hand or
// changed since is refused (exit 2) and its command never starts. An unconfined policy, so
// that no sandbox is needed to tell.
BOOST_AUTO_TEST_CASE(run_of_a_plan_runs_only_the_plan_as_verified) {
  zpolicy::test::TempDir dir;
  const std::string policy = dir.write("danger.yaml", "zpolicy: 1\nmode: danger-full-access\n");
  zpolicy::RunRequest request;
  request.policy_file = policy;
  request.command = {"/bin/sh", "-c", "echo ran >> \"$0\"", dir / "marker"};
  const auto planned = zpolicy::plan(request);
  BOOST_TEST_REQUIRE(planned.plan.has_value(), planned.messages);

  auto edited = *planned.plan;
  edited.env.push_back("EXTRA=1");
  std::ostringstream messages;
  BOOST_TEST(zpolicy::run(edited, messages) == 2);
  BOOST_TEST(messages.str() ==
             "zpolicy: run: the plan was changed after plan() verified it; make a new one "
             "(RunRequest holds what may be chosen); nothing ran\n");
  auto by_hand = *planned.plan;
  by_hand.verified.reset();
  messages.str("");
  BOOST_TEST(zpolicy::run(by_hand, messages) == 2);
  BOOST_TEST(messages.str().find("not made by plan()") != std::string::npos, messages.str());
  BOOST_TEST(!std::filesystem::exists(dir / "marker"));

  messages.str("");
  BOOST_TEST(zpolicy::run(*planned.plan, messages) == 0, messages.str());
  BOOST_TEST(zpolicy::run(*planned.plan, messages) == 0, messages.str());
  std::ifstream marker(dir / "marker");
  std::stringstream content;
  content << marker.rdbuf();
  BOOST_TEST(content.str() == "ran\nran\n");
}

BOOST_AUTO_TEST_SUITE_END()
