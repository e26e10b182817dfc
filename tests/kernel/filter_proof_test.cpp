#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "compiler/frontend/default_policy.hpp"
#include "compiler/run_plan.hpp"
#include "runner/execute.hpp"
#include "runner/run.hpp"
#include "sandbox_fixture.hpp"

// `run` proves the seccomp program while bwrap sets up the sandbox (docs/run.md "When the
// seccomp program is proved"). These tests hand the real runner a program that fails its
// proof and check on the host that the command never ran: bwrap is released only when
// the proof holds, as root and as an unprivileged caller.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// One classic BPF instruction, `ret ALLOW`: the kernel would let every call through.
const std::string kAllowEverything("\x06\x00\x00\x00\x00\x00\xff\x7f", 8);

struct Outcome {
  int exit_code = -1;
  std::string err;
};

// Prepares the default policy's run of `command` in `box`'s workspace as `box`'s caller,
// in a child process, with the program handed to bwrap replaced by `program` (when set)
// and its proof restarted over it, then executes the plan with the real runner.
Outcome run_with_program(const Sandbox& box, const std::vector<std::string>& command,
                         const std::optional<std::string>& program) {
  char path[] = "/var/tmp/zpolicy-kt-err-XXXXXX";
  const int err_fd = mkstemp(path);
  BOOST_REQUIRE(err_fd >= 0);
  unlink(path);
  const pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(err_fd, STDERR_FILENO);
    const uid_t uid = uid_of(box.caller());
    // This test process holds nothing secret: dumpable again after it drops root, as an
    // embedder must make itself to run in process (red team A10-4).
    if (uid != 0 && (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 ||
                     setresuid(uid, uid, uid) != 0 || prctl(PR_SET_DUMPABLE, 1) != 0))
      _exit(99);
    if (chdir(box.workspace().c_str()) != 0) _exit(98);
    setenv("HOME", box.home().c_str(), 1);
    runner::RunRequest req;
    req.policy = compiler::default_policy();
    req.mode = ir::Mode::WorkspaceWrite;
    req.command = command;
    auto prepared = runner::prepare(req, std::cerr, compiler::FilterProof::BeforeRelease);
    if (const int* refused = std::get_if<int>(&prepared)) _exit(*refused);
    auto& plan = std::get<compiler::RunPlan>(prepared);
    if (program) {
      auto filter = std::find_if(plan.fds.begin(), plan.fds.end(),
                                 [](const auto& p) { return p.artifact == "seccomp.bpf"; });
      if (filter == plan.fds.end()) _exit(97);
      filter->bytes = *program;
      compiler::start_filter_proof(plan);
    }
    std::cerr.flush();
    _exit(runner::execute(plan, std::cerr));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Outcome out;
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  lseek(err_fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; (n = read(err_fd, buf, sizeof buf)) > 0;) out.err.append(buf, n);
  close(err_fd);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_filter_proof)

BOOST_DATA_TEST_CASE(a_program_that_fails_its_proof_is_never_released, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string marker = box.ws("ran-" + unique_token());
  const std::vector<std::string> command{"/usr/bin/touch", marker};
  // The control: the verified program is released and the command runs.
  const auto verified = run_with_program(box, command, std::nullopt);
  BOOST_TEST(verified.exit_code == 0, verified.err);
  BOOST_TEST(exists(marker), "the control did not run: " << verified.err);
  unlink(marker.c_str());

  const auto tampered = run_with_program(box, command, kAllowEverything);
  BOOST_TEST(tampered.exit_code == 3, tampered.err);
  BOOST_TEST(tampered.err.find("dropped-deny") != std::string::npos, tampered.err);
  BOOST_TEST(tampered.err.find("nothing ran") != std::string::npos, tampered.err);
  BOOST_TEST(!exists(marker), "the command ran under a program that failed its proof");
  // Nothing of the refused run is left in the workspace: its placeholders are gone.
  BOOST_TEST(!exists(box.ws(".git")), tampered.err);
  BOOST_TEST(!exists(box.ws(".env")), tampered.err);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
