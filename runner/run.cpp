#include "runner/run.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "compiler/frontend/default_policy.hpp"
#include "zpolicy/exit_code.hpp"
#include "compiler/frontend/policy_parser.hpp"
#include "compiler/resolve/resolve.hpp"
#include "runner/backend.hpp"
#include "runner/environment.hpp"
#include "runner/supervise.hpp"

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>

#include <cstring>

#include "emitters/bwrap/bwrap_emitter.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "runner/placeholders.hpp"
#elif defined(__APPLE__)
#include "emitters/sbpl/profile.hpp"
#include "runner/macos_argv.hpp"
#include "runner/macos_run.hpp"
#endif

namespace zpolicy::runner {
namespace {

// Resolves the command the way execvp would, but with the sandbox's own PATH, so a
// missing or non-executable command is reported (127/126) before anything starts.
std::optional<std::string> find_command(const std::string& name, const std::vector<std::string>& env,
                                        int& failure) {
  auto executable = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  auto exists = [](const std::string& p) { return access(p.c_str(), F_OK) == 0; };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return name;
    failure = exists(name) ? kExitNotExecutable : kExitNotFound;
    return std::nullopt;
  }
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  failure = kExitNotFound;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find(':', pos);
    if (next == std::string::npos) next = path.size();
    std::string dir = path.substr(pos, next - pos);
    pos = next + 1;
    if (dir.empty() || dir[0] != '/') continue;  // relative PATH entries would search the cwd
    std::string cand = dir + "/" + name;
    if (executable(cand)) return cand;
    if (exists(cand)) failure = kExitNotExecutable;
  }
  return std::nullopt;
}

int run_unconfined(const std::vector<std::string>& command, const std::string& exe,
                   const std::vector<std::string>& env,
                   std::optional<std::chrono::milliseconds> timeout) {
  SpawnSpec spec;
  spec.exe = exe;
  spec.argv = command;
  spec.envp = env;
  spec.timeout = timeout;
  return status_of(supervise(spec));
}

// `unavailable: run-unconfined` is honoured only from a policy file nobody else could
// have written: owned by root or the caller, not writable by group or others.
bool trusted_policy_file(const std::optional<std::string>& path) {
  if (!path) return false;
  struct stat st;
  return stat(path->c_str(), &st) == 0 && (st.st_uid == 0 || st.st_uid == getuid()) &&
         !(st.st_mode & (S_IWGRP | S_IWOTH));
}

#if defined(__linux__)
// bwrap with the seccomp filter on fd 3 and its status on fd 4, after the placeholders
// for missing protected paths exist (which marks them in `resolved`).
int run_confined(ir::Resolved& resolved, const std::vector<std::string>& command,
                 const std::vector<std::string>& env,
                 std::optional<std::chrono::milliseconds> timeout, std::ostream& err) {
  constexpr int kStatusFd = 4;
  Placeholders placeholders;
  std::string why;
  if (!placeholders.prepare(resolved, why)) {
    err << "zpolicy: " << why << "\n";
    return kExitInternal;
  }

  std::string bpf = emitters::seccomp::emit_bpf(resolved.syscalls);
  int filter = memfd_create("zpolicy-seccomp", MFD_CLOEXEC);
  int status[2] = {-1, -1};
  if (filter < 0 || write(filter, bpf.data(), bpf.size()) != static_cast<ssize_t>(bpf.size()) ||
      lseek(filter, 0, SEEK_SET) != 0 || pipe2(status, O_CLOEXEC | O_NONBLOCK) != 0) {
    err << "zpolicy: cannot prepare the seccomp filter: " << std::strerror(errno) << "\n";
    return kExitInternal;
  }
  SpawnSpec spec;
  spec.exe = kBwrapPath;
  spec.argv = {kBwrapPath};
  for (auto& a : emitters::bwrap::emit_args(resolved)) spec.argv.push_back(std::move(a));
  spec.argv.insert(spec.argv.end(), {"--json-status-fd", std::to_string(kStatusFd), "--"});
  spec.argv.insert(spec.argv.end(), command.begin(), command.end());
  spec.envp = env;
  spec.fds = {{filter, emitters::bwrap::kSeccompFd}, {status[1], kStatusFd}};
  spec.timeout = timeout;
  spec.status_fd = status[0];
  Outcome outcome = supervise(spec);
  close(filter);
  close(status[0]);
  close(status[1]);
  placeholders.cleanup();

  if (outcome.kind == Outcome::Kind::TimedOut) {
    err << "zpolicy: timed out; the sandbox and every process in it were killed\n";
    return kExitTimeout;
  }
  if (!outcome.setup_finished) {
    auto diagnosis = probe();
    if (!diagnosis.usable()) {
      err << "zpolicy: the sandbox could not be set up; nothing ran: " << diagnosis.str() << "\n";
      return kExitUnavailable;
    }
    err << "zpolicy: the sandbox could not start '" << command[0] << "'; nothing ran\n";
    return kExitNotExecutable;
  }
  return status_of(outcome);
}
#elif defined(__APPLE__)
// sandbox-exec, pinned, after a preflight that proves the profile loads (runner/macos_run).
int run_confined(const ir::Resolved& resolved, const std::vector<std::string>& command,
                 const std::vector<std::string>& env,
                 std::optional<std::chrono::milliseconds> timeout, std::ostream& err) {
  auto profile = emitters::sbpl::emit(resolved);
  SandboxExecRun run{profile.text, profile.params, command, env, resolved.cwd, timeout};
  return run_sandbox_exec(std::string(kSandboxExec), run, err);
}
#else
// preflight() refuses every other platform before anything is resolved.
int run_confined(const ir::Resolved&, const std::vector<std::string>&,
                 const std::vector<std::string>&, std::optional<std::chrono::milliseconds>,
                 std::ostream& err) {
  err << "zpolicy: refusing to run without a sandbox: unsupported-platform\n";
  return kExitUnavailable;
}
#endif

}  // namespace

int run(const RunRequest& req, std::ostream& err) {
  if (req.command.empty()) {
    err << "zpolicy: run: no command given (zpolicy run [OPTIONS] -- CMD [ARG...])\n";
    return kExitUsage;
  }
  ir::Diagnostics diags;
  std::optional<ir::Policy> policy =
      req.policy_path ? compiler::load_policy_file(*req.policy_path, diags)
                      : std::optional(compiler::default_policy());
  std::optional<ir::Mode> mode;
  if (policy) mode = compiler::effective_mode(*policy, req.mode, diags);
  if (!policy || !mode || diags.has_errors()) {
    err << diags.str();
    return kExitUsage;
  }
  auto timeout = req.timeout;
  if (!timeout && policy->timeout) timeout = policy->timeout->value;
  auto env = build_environment(policy->env, current_environment());
  int failure = 0;
  auto exe = find_command(req.command[0], env, failure);
  if (!exe) {
    err << "zpolicy: " << req.command[0] << ": "
        << (failure == kExitNotFound ? "command not found" : "not executable") << "\n";
    return failure;
  }

  if (*mode == ir::Mode::DangerFullAccess) return run_unconfined(req.command, *exe, env, timeout);

  if (auto backend = preflight(); !backend.usable()) {
    if (policy->unavailable.value == ir::Unavailable::RunUnconfined &&
        *mode == ir::Mode::WorkspaceWrite && trusted_policy_file(req.policy_path)) {
      err << "zpolicy: sandbox unavailable (" << backend.str()
          << "); running UNCONFINED as " << policy->unavailable.loc.str() << " allows\n";
      return run_unconfined(req.command, *exe, env, timeout);
    }
    err << "zpolicy: refusing to run without a sandbox: " << backend.str() << "\n";
    return kExitUnavailable;
  }

  auto host = compiler::host_facts(req.workspace, diags);
  std::optional<ir::Resolved> resolved;
  if (host) resolved = compiler::resolve_for_host(*policy, *mode, *host, diags);
  if (!resolved) {
    err << diags.str();
    return kExitUsage;
  }
  std::vector<std::string> command = req.command;
  command[0] = *exe;
  return run_confined(*resolved, command, env, timeout, err);
}

}  // namespace zpolicy::runner
