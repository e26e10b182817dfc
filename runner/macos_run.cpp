#include "runner/macos_run.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "compiler/exit_code.hpp"
#include "runner/macos_argv.hpp"
#include "runner/supervise.hpp"

namespace zpolicy::runner {
namespace {

std::optional<SandboxExecStatus> preflight_verdict(const Outcome& o, const std::string& binary) {
  switch (o.kind) {
    case Outcome::Kind::Exited:
      return classify_preflight(o.code, false);
    case Outcome::Kind::Signaled:
      return classify_preflight(o.code, true);
    case Outcome::Kind::TimedOut:
      return SandboxExecStatus{SandboxExecRefusal::Failed,
                               binary + " did not finish the preflight within " +
                                   std::to_string(kPreflightTimeout.count()) + " ms"};
    case Outcome::Kind::SpawnFailed:
      break;
  }
  return SandboxExecStatus{SandboxExecRefusal::Failed, "cannot start " + binary};
}

}  // namespace

int run_sandbox_exec(const std::string& sandbox_exec, const SandboxExecRun& run,
                     std::ostream& err) {
  auto preflight = preflight_argv(run.profile, run.params);
  auto command = sandbox_exec_argv(run.profile, run.params, run.command);
  for (const auto* argv : {&preflight, &command})
    if (const auto* e = std::get_if<SandboxExecArgvError>(argv)) {
      err << "zpolicy: cannot build the sandbox-exec command line: " << e->message
          << "; nothing ran\n";
      return kExitInternal;
    }

  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) {
    err << "zpolicy: cannot open /dev/null for the sandbox-exec preflight; nothing ran\n";
    return kExitInternal;
  }
  SpawnSpec check;
  check.exe = sandbox_exec;
  check.argv = std::get<std::vector<std::string>>(preflight);
  check.envp = run.env;
  check.cwd = run.cwd;
  check.fds = {{null, 0}, {null, 1}};
  check.timeout = kPreflightTimeout;
  Outcome checked = supervise(check);
  close(null);
  if (auto refusal = preflight_verdict(checked, sandbox_exec)) {
    err << "zpolicy: refusing to run without a sandbox: " << to_string(refusal->refusal) << ": "
        << refusal->message << "\n";
    return kExitUnavailable;
  }

  SpawnSpec spec;
  spec.exe = sandbox_exec;
  spec.argv = std::get<std::vector<std::string>>(command);
  spec.envp = run.env;
  spec.cwd = run.cwd;
  spec.timeout = run.timeout;
  Outcome outcome = supervise(spec);
  if (outcome.kind == Outcome::Kind::TimedOut)
    err << "zpolicy: timed out; the command and its process group were killed\n";
  if (outcome.kind == Outcome::Kind::SpawnFailed)
    err << "zpolicy: cannot start " << sandbox_exec << "; nothing ran\n";
  return status_of(outcome);
}

}  // namespace zpolicy::runner
