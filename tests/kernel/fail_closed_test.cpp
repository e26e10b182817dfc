#include <sys/stat.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// DESIGN.md "Fail-closed": without a usable backend `run` refuses with exit 4 and runs
// nothing; bwrap comes only from /usr/bin, never PATH or the workspace; an invalid
// policy runs nothing.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// Runs zpolicy in a private mount namespace where /usr/bin/bwrap is replaced by `cover`.
RunSpec with_bwrap_covered_by(const std::string& cover) {
  RunSpec spec;
  spec.root_prefix = {"/usr/bin/unshare",
                      "-m",
                      "--propagation",
                      "private",
                      "/bin/sh",
                      "-c",
                      "mount --bind '" + cover + "' /usr/bin/bwrap && exec \"$@\"",
                      "sh"};
  return spec;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_fail_closed)

BOOST_DATA_TEST_CASE(a_missing_bwrap_refuses_with_4_and_runs_nothing, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string empty = box.base() + "/empty", script = box.base() + "/not-executable";
  box.write_file(empty, "", 0644);
  box.write_file(script, "#!/bin/sh\ntouch " + box.ws("FROM-COVER") + "\n", 0644);
  const std::string marker = box.ws("MARKER");
  for (const std::string& cover : {empty, script, std::string("/dev/null")}) {
    RunSpec spec = with_bwrap_covered_by(cover);
    spec.command = {"/usr/bin/touch", marker};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == 4, cover << "\n" << r.describe());
    BOOST_TEST(r.err.find("refusing to run without a sandbox") != std::string::npos, r.describe());
    BOOST_TEST(!exists(marker), cover << ": the command ran");
    BOOST_TEST(!exists(box.ws("FROM-COVER")));
  }
}

BOOST_DATA_TEST_CASE(run_unconfined_is_taken_only_from_a_trusted_workspace_write_policy,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string empty = box.base() + "/empty";
  box.write_file(empty, "", 0644);
  const std::string policy_text = R"(zpolicy: 1
mode: workspace-write
filesystem:
  write: ["${WORKSPACE}"]
unavailable: run-unconfined
)";
  const std::string trusted = box.write_policy("trusted.yaml", policy_text);
  const std::string writable_by_others = box.write_policy("others.yaml", policy_text);
  chmod(writable_by_others.c_str(), 0666);
  const std::string marker = box.ws("MARKER");
  const std::vector<std::vector<std::string>> refused{
      {"--policy", trusted, "--mode", "read-only"},
      {"--policy", writable_by_others},
  };
  for (const auto& options : refused) {
    RunSpec spec = with_bwrap_covered_by(empty);
    spec.options = options;
    spec.command = {"/usr/bin/touch", marker};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == 4, options[1] << "\n" << r.describe());
    BOOST_TEST(!exists(marker), options[1] << ": ran unconfined");
  }
  // Control: the trusted workspace-write policy is the one case that does run (unconfined,
  // and says so).
  RunSpec spec = with_bwrap_covered_by(empty);
  spec.options = {"--policy", trusted};
  spec.command = {"/usr/bin/touch", marker};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.err.find("UNCONFINED") != std::string::npos, r.describe());
  BOOST_TEST(exists(marker));
}

BOOST_DATA_TEST_CASE(a_fake_bwrap_on_path_or_in_the_workspace_is_never_run, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  // A directory the caller may write, outside the sandbox's writable roots: a fake run by
  // the runner itself would leave its mark here.
  box.make_dir(box.base() + "/marks");
  const std::string fake_ran = box.base() + "/marks/fake-bwrap-ran";
  const std::string fake = "#!/bin/sh\necho fake > " + fake_ran + "\nexec /usr/bin/bwrap \"$@\"\n";
  box.write_file(box.base() + "/fakebin/bwrap", fake, 0755);
  box.write_file(box.ws("bwrap"), fake, 0755);
  box.write_file(box.ws("bin/bwrap"), fake, 0755);
  // Both the runner's own and the command's environment see this PATH. Its `.` and `bin`
  // lie in the workspace, which ZP003 refuses (red team A12-3): accepted here, so that
  // the run starts and shows which bwrap it takes.
  RunSpec spec;
  spec.options = {"--accept", "ZP003"};
  spec.extra_env = {"PATH=" + box.base() + "/fakebin:.:bin:" + kHostPath};
  spec.command = {"/bin/sh", "-c", "echo sandboxed > ran.txt"};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(read_file(box.ws("ran.txt")).value_or("<missing>") == "sandboxed\n");
  BOOST_TEST(!exists(fake_ran), "a fake bwrap was executed");
}

BOOST_DATA_TEST_CASE(an_invalid_policy_exits_2_and_runs_nothing, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string marker = box.ws("MARKER");
  const std::vector<std::string> policies{
      box.write_policy("unknown-key.yaml",
                       "zpolicy: 1\nmode: workspace-write\nnetwork: none\nnetwrk: full\n"),
      box.write_policy("bad-mode.yaml", "zpolicy: 1\nmode: everything\n"),
      box.write_policy("not-yaml.yaml", "zpolicy: [1\n"),
      box.write_policy("read-only.yaml", "zpolicy: 1\nmode: read-only\n"),
      box.base() + "/no-such-policy.yaml",
  };
  for (const auto& policy : policies) {
    RunSpec spec;
    spec.options = {"--policy", policy};
    if (policy.find("read-only") != std::string::npos)
      spec.options.insert(spec.options.end(), {"--mode", "workspace-write"});
    spec.command = {"/usr/bin/touch", marker};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == 2, policy << "\n" << r.describe());
    BOOST_TEST(!exists(marker), policy << ": the command ran");
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
