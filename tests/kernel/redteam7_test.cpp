#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Round 7 of the red-team pass (docs/redteam-2026-12.md "Round 7"): what a sandbox can do
// to the names the host reads after it, and to the runs beside it.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

const std::string kForged = "{\"zpolicy_run_status\": 1, \"exit_code\": 0, \"network_refusals\": []}";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam7)

// R7-S1: the status file named through a symlink that lies in the workspace. The file
// itself is outside every writable root, but the caller reads it by its name, and the
// command re-points the symlink at a status of its own.
BOOST_DATA_TEST_CASE(a_status_file_named_through_a_symlink_the_sandbox_can_replace_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string out = box.base() + "/out";
  box.make_dir(out);
  box.make_dir(box.ws("deep"));
  box.host_command({"/bin/ln", "-s", "../out", box.ws("l")});
  box.host_command({"/bin/ln", "-s", out, box.ws("deep/abs")});
  for (const auto& [status, link] :
       {std::pair{std::string("l/status.json"), std::string("l")},
        std::pair{box.ws("deep/abs/../out/status.json"), std::string("deep/abs")},
        std::pair{box.ws("deep/abs/status.json"), std::string("deep/abs")}}) {
    RunSpec spec;
    spec.options = {"--status-file", status};
    spec.command = {"/bin/sh", "-c",
                    "mkdir -p fake/out out && echo '" + kForged +
                        "' | tee fake/status.json fake/out/status.json > out/status.json && ln -sfn " +
                        box.workspace() + "/fake new && mv -T new " + link + "; exit 3"};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 2, status << ": " << r.describe());
    BOOST_CHECK_MESSAGE(r.err.find("lies in writable root") != std::string::npos, r.describe());
    const std::string read_by_name = status.starts_with("/") ? status : box.ws(status);
    BOOST_CHECK_MESSAGE(read_file(read_by_name).value_or("") != kForged + "\n", status << ": forged");
    box.host_command({"/bin/rm", "-rf", box.ws("fake"), box.ws("out")});
    box.host_command({"/bin/ln", "-sfn", link == "l" ? "../out" : out, box.ws(link)});
  }
  // A symlink outside every writable root is the caller's own: the status is written.
  BOOST_REQUIRE(symlink(out.c_str(), (box.base() + "/mine").c_str()) == 0);
  RunSpec spec;
  spec.options = {"--status-file", box.base() + "/mine/status.json"};
  spec.command = {"/bin/sh", "-c", "exit 3"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 3, r.describe());
  BOOST_CHECK(read_file(out + "/status.json").value_or("").find("\"exit_code\": 3") !=
              std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
