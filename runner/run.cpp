#include "runner/run.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "compiler/default_policy.hpp"
#include "compiler/exit_code.hpp"
#include "compiler/frontend.hpp"
#include "compiler/resolve.hpp"
#include "emitters/bwrap/bwrap_emitter.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "runner/backend.hpp"
#include "runner/environment.hpp"
#include "runner/placeholders.hpp"
#include "runner/supervise.hpp"

namespace zpolicy::runner {
namespace {

constexpr int kStatusFd = 4;

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

int status_of(const Outcome& o) {
  switch (o.kind) {
    case Outcome::Kind::TimedOut:
      return kExitTimeout;
    case Outcome::Kind::Exited:
      return o.code;
    case Outcome::Kind::Signaled:
      return kExitSignalBase + o.code;
    case Outcome::Kind::SpawnFailed:
      return kExitInternal;
  }
  return kExitInternal;
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
  Placeholders placeholders;
  std::string why;
  if (!placeholders.prepare(*resolved, why)) {
    err << "zpolicy: " << why << "\n";
    return kExitInternal;
  }

  std::string bpf = emitters::seccomp::emit_bpf(resolved->syscalls);
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
  for (auto& a : emitters::bwrap::emit_args(*resolved)) spec.argv.push_back(std::move(a));
  spec.argv.insert(spec.argv.end(), {"--json-status-fd", std::to_string(kStatusFd), "--", *exe});
  spec.argv.insert(spec.argv.end(), req.command.begin() + 1, req.command.end());
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
    err << "zpolicy: the sandbox could not start '" << req.command[0] << "'; nothing ran\n";
    return kExitNotExecutable;
  }
  return status_of(outcome);
}

}  // namespace zpolicy::runner
