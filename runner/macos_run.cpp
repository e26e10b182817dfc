#include "runner/macos_run.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "zpolicy/exit_code.hpp"
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
  // Both runs: the same binary, environment and directory; only argv and limits differ.
  auto spec_for = [&](const std::variant<std::vector<std::string>, SandboxExecArgvError>& argv) {
    SpawnSpec s;
    s.exe = sandbox_exec;
    s.argv = std::get<std::vector<std::string>>(argv);
    s.envp = run.env;
    s.cwd = run.cwd;
    return s;
  };
  SpawnSpec check = spec_for(preflight);
  check.fds = {{null, 0}, {null, 1}};
  check.timeout = kPreflightTimeout;
  check.timeout_grace = std::chrono::milliseconds(0);
  Outcome checked = supervise(check);
  close(null);
  if (auto refusal = preflight_verdict(checked, sandbox_exec)) {
    err << "zpolicy: refusing to run without a sandbox: " << to_string(refusal->refusal) << ": "
        << refusal->message << "\n";
    return kExitUnavailable;
  }

  SpawnSpec spec = spec_for(command);
  spec.timeout = run.timeout;
  Outcome outcome = supervise(spec);
  if (outcome.kind == Outcome::Kind::TimedOut)
    err << timeout_report(outcome, false);
  if (outcome.kind == Outcome::Kind::SpawnFailed)
    err << "zpolicy: cannot start " << sandbox_exec << "; nothing ran\n";
  return status_of(outcome);
}

}  // namespace zpolicy::runner
