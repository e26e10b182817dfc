#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "killed_launcher.hpp"
#include "sandbox_fixture.hpp"

// Round 5 of the red-team pass (docs/redteam-2026-12.md "Round 5"): the release of bwrap
// through --block-fd, the runner's death while a sandbox is checked, timeouts and signals
// around the setup.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_redteam5)

// R5-K1: bwrap takes end of file on --block-fd for a release. zpolicy killed with SIGKILL
// (a harness's kill(), the OOM killer) while bwrap waits there closed the pipe's write
// end: the command started without the setup check, and the sandbox's init had lost its
// parent-death signal to bwrap's credential changes, so the command outlived zpolicy and
// its timeout. zpolicy is stopped as soon as it has started bwrap, so that it cannot
// release the sandbox itself; then killed once the init waits for the release.
BOOST_DATA_TEST_CASE(a_runner_killed_while_the_sandbox_is_checked_releases_nothing,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", "echo x > ran; sleep 2; echo y > late"};
  check_killed_launcher_releases_nothing(box, spec, box.ws("ran"), {box.ws("ran"), box.ws("late")},
                                         "zpolicy");
}

// R5-S1: `--status-file` opened with a blocking open: a FIFO at that name (a sandbox in the
// same workspace can plant one where the harness puts its status) hung the run before it
// started, with no timeout to end it. And the file is opened before the run and written
// at its end: what the command wrote into it meanwhile stayed after the document.
BOOST_DATA_TEST_CASE(a_status_file_planted_as_a_fifo_refuses_the_run_at_once,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.host_command({"/usr/bin/mkfifo", box.ws("status.json")});
  RunSpec spec;
  spec.options = {"--status-file", box.ws("status.json")};
  spec.command = {"/bin/sh", "-c", "echo x > ran"};
  spec.limit = std::chrono::seconds(10);
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(!r.hit_limit && r.exit_code == 2, r.describe());
  BOOST_CHECK(!exists(box.ws("ran")));
}

// R5-S2, fixed: a status file in a writable root could be renamed away by the command and
// another put at its name, or overwritten; zpolicy wrote the true status into the renamed
// file and the harness read the forgery. Such a status file is refused before anything
// starts (exit 2), also when the writable root is reached through a bind-mount alias; one
// outside every writable root holds zpolicy's document only.
BOOST_DATA_TEST_CASE(a_status_file_the_sandbox_could_forge_is_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string forge =
      "mv status.json old.json; echo '{\"zpolicy_run_status\": 1, \"exit_code\": 0, "
      "\"network_refusals\": [], \"network_refusals_omitted\": 0}' > status.json; echo x > ran; "
      "exit 3";
  const std::string alias = box.base() + "/alias";
  box.make_dir(alias);
  BOOST_REQUIRE(mount(box.workspace().c_str(), alias.c_str(), nullptr, MS_BIND, nullptr) == 0);
  for (const std::string& status : {box.ws("status.json"), alias + "/status.json"}) {
    RunSpec spec;
    spec.options = {"--status-file", status};
    spec.command = {"/bin/sh", "-c", forge};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 2, status << ": " << r.describe());
    BOOST_CHECK_MESSAGE(r.err.find("lies in writable root") != std::string::npos, r.describe());
    BOOST_CHECK_MESSAGE(!exists(box.ws("ran")), status << ": the command ran");
  }
  umount2(alias.c_str(), MNT_DETACH);
  // Outside every writable root: the document is zpolicy's, whatever the command did.
  RunSpec spec;
  spec.options = {"--status-file", box.home() + "/status.json"};
  spec.command = {"/bin/sh", "-c", "exit 3"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 3, r.describe());
  const auto doc = read_file(box.home() + "/status.json");
  BOOST_REQUIRE(doc);
  BOOST_CHECK_EQUAL(*doc,
                    "{\"zpolicy_run_status\": 1, \"exit_code\": 3, \"network_refusals\": [], "
                    "\"network_refusals_omitted\": 0, \"nothing_ran\": false}\n");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
