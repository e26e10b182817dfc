#include "runner/run.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "compiler/lint/policy_lint.hpp"
#include "compiler/resolve/resolve.hpp"
#include "compiler/run_plan.hpp"
#include "runner/backend.hpp"
#include "runner/caller_code_paths.hpp"
#include "runner/environment.hpp"
#include "runner/execute.hpp"
#include "runner/explain_hint.hpp"
#if defined(__linux__)
#include "runner/host_mount_table.hpp"
#include "runner/mount_objects_seen.hpp"
#endif
#include "runner/supervise.hpp"
#include "zpolicy/exit_code.hpp"

#if defined(__APPLE__)
#include "runner/macos_argv.hpp"
#endif

namespace zpolicy::runner {
namespace {

// Resolves the command the way execvp would, but with the sandbox's own PATH, so a
// missing or non-executable command is reported (127/126) before anything starts.
std::optional<std::string> find_command(const std::string& name,
                                        const std::vector<std::string>& env, int& failure) {
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

// `unavailable: run-unconfined` is honoured only from a policy file nobody else could
// have written: owned by root or the caller, not writable by group or others.
bool trusted_policy_file(const std::optional<std::string>& path) {
  if (!path) return false;
  struct stat st;
  return stat(path->c_str(), &st) == 0 && (st.st_uid == 0 || st.st_uid == getuid()) &&
         !(st.st_mode & (S_IWGRP | S_IWOTH));
}

std::optional<std::string> canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

// The policy file as it is opened: absolute, but with its symlinks, which the lints follow
// one by one (ZP004).
std::string absolute(const std::string& path, const std::string& cwd) {
  return path.starts_with("/") ? path : cwd + "/" + path;
}

}  // namespace

std::variant<compiler::RunPlan, int> prepare(const RunRequest& req, std::ostream& err,
                                             compiler::FilterProof when,
                                             [[maybe_unused]] HostMountTable* mounts) {
  if (req.command.empty()) {
    err << "zpolicy: run: no command given (zpolicy run [OPTIONS] -- CMD [ARG...])\n";
    return kExitUsage;
  }
  if (auto why = compiler::check_accepted(req.accept)) {
    err << "zpolicy: " << *why << "\n";
    return kExitUsage;
  }
  // --timeout narrows like --mode: it may shorten the policy's limit, never lift it.
  if (req.timeout && req.policy.timeout && *req.timeout > req.policy.timeout->value) {
    err << "<command line>: error: --timeout is longer than the policy's timeout ("
        << req.policy.timeout->loc.str() << "); it may only shorten it\n";
    return kExitUsage;
  }
  compiler::RunInput in{req.policy, req.mode, std::nullopt, {}, req.accept, {}, {}, req.timeout};
  if (!in.timeout && in.policy.timeout) in.timeout = in.policy.timeout->value;
  // The caller's environment, read once: the command's is built from it, and resolution
  // and the lints judge it (HostFacts::environment).
  auto caller = compiler::CallerEnvironment::of_this_process();
  in.env = build_environment(in.policy.env, caller);
  for (const auto& e : req.env) {
    const auto eq = e.find('=');
    const std::string name = e.substr(0, eq);
    if (compiler::looks_like_secret(name))
      err << "zpolicy: warning: --env " << name
          << " looks like a secret; everything in the sandbox can read it\n";
    if (eq != std::string::npos) {
      set_variable(in.env, name, e.substr(eq + 1));
      continue;
    }
    for (const auto& c : caller.entries())
      if (c.starts_with(name + "=")) set_variable(in.env, name, c.substr(name.size() + 1));
  }
  // Tells a program it runs under zpolicy, and how confined (docs/run.md "Environment").
  set_variable(in.env, "ZPOLICY_SANDBOX", ir::to_string(req.mode));
  int failure = 0;
  auto exe = find_command(req.command[0], in.env, failure);
  if (!exe) {
    err << "zpolicy: " << req.command[0] << ": "
        << (failure == kExitNotFound ? "command not found" : "not executable") << "\n";
    return failure;
  }
  in.command = req.command;
  in.command[0] = *exe;

  // Before danger-full-access too: run unconfined, the command would keep the effective
  // identity (a set-user-id-root copy gave nobody a root shell; red team A13B-1).
  if (auto why = set_id_process(); !why.empty()) {
    err << "zpolicy: refusing to run: " << why << "; nothing ran\n";
    return kExitInternal;
  }

  if (req.mode == ir::Mode::DangerFullAccess) return compiler::plan_unconfined(in);

  if (auto backend = preflight(); !backend.usable()) {
    if (in.policy.unavailable.value == ir::Unavailable::RunUnconfined &&
        req.mode == ir::Mode::WorkspaceWrite && trusted_policy_file(req.policy_path)) {
      err << "zpolicy: sandbox unavailable (" << backend.str()
          << "); running UNCONFINED as " << in.policy.unavailable.loc.str() << " allows\n";
      return compiler::plan_unconfined(in);
    }
    err << "zpolicy: refusing to run without a sandbox: " << backend.str() << "\n";
    return kExitUnavailable;
  }

  ir::Diagnostics diags;
  in.host = compiler::host_facts(req.workspace, std::move(caller), diags);
  if (!in.host) {
    err << diags.str();
    return kExitUsage;
  }
#if defined(__linux__)
  // Before the table is read: a mount change from here on is seen by the look below.
  const unsigned long marks_before = mounts ? mounts->marks() : 0;
  if (mounts) {
    in.host->mounts = mounts->now();
    // Unread, no other name of a deny root would be masked: refuse rather than guess.
    if (in.host->mounts->empty()) {
      err << "zpolicy: cannot read the host's mount table (/proc/self/mountinfo); nothing ran\n";
      return kExitInternal;
    }
  }
#endif
  in.lint = {
      in.host,
      req.policy_path ? std::optional(absolute(*req.policy_path, in.host->cwd)) : std::nullopt,
      canonical("/proc/self/exe"),
      std::string(kBwrapPath),
      caller_path_entries(in.host->environment),
      caller_load_path_entries(in.host->environment)};
#if defined(__APPLE__)
  in.lint.backend_binary = std::string(kSandboxExec);
  const auto target = ir::Target::Macos;
#else
  const auto target = ir::Target::Linux;
#endif
  auto planned = compiler::plan_confined(in, target, when);
  if (auto* refusal = std::get_if<compiler::Refusal>(&planned)) {
    err << refusal->report;
    return refusal->exit_code;
  }
#if defined(__linux__)
  // What the lints judged by name at the mount points in the writable roots, by identity:
  // the sandbox must get the same (runner/mount_objects_seen.hpp). Recorded after the
  // lints, so no mount may have changed on the host since the table they judged was read,
  // or the record could be of another mount than the one judged.
  auto& plan = std::get<compiler::RunPlan>(planned);
  if (mounts && plan.verified) {
    plan.mounts_judged = mount_objects_seen(AT_FDCWD, plan.verified->write, mounts->first());
    // One the lints could not look at either (EACCES below a directory the caller cannot
    // search) was judged by nothing: what it shows is unknown (red team A14B-8).
    for (const auto& o : *plan.mounts_judged)
      if (!o.found) {
        err << "zpolicy: the mount point '" << o.point
            << "' in a writable root cannot be looked up by this user (a directory on its way "
               "is not searchable), so what it shows cannot be judged; make its directories "
               "searchable, or give the run another writable root; nothing ran\n";
        return kExitUsage;
      }
    if (mounts->marks() != marks_before) {
      err << "zpolicy: a filesystem was mounted or unmounted on the host while the policy was "
             "resolved; refusing to run what was not judged; nothing ran\n";
      return kExitInternal;
    }
  }
#endif
  return std::get<compiler::RunPlan>(std::move(planned));
}

int run(const RunRequest& req, std::ostream& err, RunReport* report) {
  if (req.status_file) StatusFile::empty_earlier(*req.status_file);
#if defined(__linux__)
  // One descriptor of the host's mount table for the whole run (runner/host_mount_table.hpp).
  HostMountTable host_mounts;
  HostMountTable* mounts = &host_mounts;
#else
  HostMountTable* mounts = nullptr;
#endif
  auto prepared = prepare(req, err, compiler::FilterProof::BeforeRelease, mounts);
  const auto* planned = std::get_if<compiler::RunPlan>(&prepared);
  // From here on a run changes what a signal's default action would leave behind (red team
  // A28B-1); resolution before changed nothing (but for the earlier status document, emptied
  // first), and stays interruptible.
  std::optional<HeldSignals> own_hold;
  (report ? report->held_signals : own_hold).emplace();
  // A refusal that comes before any plan is a status too: nothing ran that could forge it.
  if (req.status_file) {
    auto file = StatusFile::open(*req.status_file, planned, err);
    if (const int* refused = std::get_if<int>(&file)) return *refused;
    if (report) report->status_file.emplace(std::get<StatusFile>(std::move(file)));
  }
  if (!planned) return std::get<int>(prepared);
  const auto& plan = *planned;
  RunReport own;
  RunReport& observed = report ? *report : own;
  const int status = execute(plan, err, &observed, mounts);
  // A refusal's status is zpolicy's: the hint would say the command exited with it (red
  // team R8-S1). An interruption's is the caller's own signal.
  if (observed.refused_before_start || observed.interrupted_by) return status;
  if (auto hint = explain_hint(req, plan.backend != compiler::Backend::Unconfined, status,
                               !observed.did_not_start))
    err << *hint << "\n";
  return status;
}

}  // namespace zpolicy::runner
