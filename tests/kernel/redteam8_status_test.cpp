#include <grp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"
#include "zpolicy/zpolicy.hpp"

// Round 8 of the red-team pass, the status file now that the runner opens it
// (docs/redteam-2026-12.md "Round 8", R8-S2 and R8-S3).
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_redteam8_status)

// R8-S2: a run refused before it is planned (its command missing, its policy invalid, its
// request invalid) opened the status file with no location check, through a symlink an
// earlier sandbox planted in the workspace: the refusal's document replaced, or created,
// a file of that name in any directory the caller can write (R7-S2, for refusals).
BOOST_DATA_TEST_CASE(a_status_file_of_a_run_refused_before_its_plan_follows_no_symlink,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string victim = box.base() + "/victim";
  box.make_dir(victim);
  box.write_file(victim + "/status.json", "precious\n");
  box.host_command({"/bin/ln", "-s", victim, box.ws("results")});
  const std::string invalid = box.write_policy("invalid.yaml", "zpolicy: 1\nbogus: [\n");
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> refused{
      {{}, {"./missing.sh"}},
      {{"--policy", invalid}, {"/bin/true"}},
      {{"--timeout", "soon"}, {"/bin/true"}},
  };
  for (const auto& [options, command] : refused)
    for (const std::string name : {"results/status.json", "results/new.json"}) {
      RunSpec spec;
      spec.options = options;
      spec.options.insert(spec.options.end(), {"--status-file", name});
      spec.command = command;
      const RunResult r = box.run(spec);
      BOOST_CHECK_MESSAGE(r.exit_code == 2, name << ": " << r.describe());
      BOOST_CHECK_MESSAGE(r.err.find("is named through a symlink") != std::string::npos,
                          r.describe());
    }
  BOOST_CHECK_EQUAL(read_file(victim + "/status.json").value_or(""), "precious\n");
  BOOST_CHECK(!exists(victim + "/new.json"));
  // Named without a symlink, the refusal is a status as before.
  RunSpec spec;
  spec.options = {"--status-file", "status.json"};
  spec.command = {"./missing.sh"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 127, r.describe());
  BOOST_CHECK(read_file(box.ws("status.json")).value_or("").find("\"exit_code\": 127") !=
              std::string::npos);
}

// R8-S3: an embedder whose stdin is closed (`zpolicy` itself reopens 0-2, a library cannot)
// got the status file as descriptor 0, which the runner then took for a file on stdin and
// refused ("cannot copy the file on stdin"): no run with a status file was possible. The
// embedder runs in a child of this process, as the caller.
BOOST_DATA_TEST_CASE(an_embedder_with_stdin_closed_runs_with_a_status_file, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string out = box.base() + "/out";
  box.make_dir(out);
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    const gid_t id = uid_of(caller);
    // Dumpable again, as an embedder that drops root must make itself (red team A10-4).
    if (setgroups(0, nullptr) != 0 || setresgid(id, id, id) != 0 || setresuid(id, id, id) != 0 ||
        prctl(PR_SET_DUMPABLE, 1) != 0 || chdir(box.workspace().c_str()) != 0 || clearenv() != 0)
      _exit(100);
    setenv("PATH", "/usr/bin:/bin", 1);
    setenv("HOME", box.home().c_str(), 1);
    close(0);
    RunRequest request;
    request.status_file = out + "/status.json";
    request.command = {"/bin/sh", "-c", "exit 3"};
    std::ostringstream messages;
    _exit(run_with_status(request, messages).exit_code);
  }
  int status = 0;
  BOOST_REQUIRE(waitpid(child, &status, 0) == child);
  BOOST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  BOOST_CHECK(read_file(out + "/status.json").value_or("").find("\"exit_code\": 3") !=
              std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
