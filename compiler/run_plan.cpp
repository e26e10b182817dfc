#include "compiler/run_plan.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <map>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/verify.hpp"
#include "compiler/lint/syscall_lint.hpp"
#include "compiler/network/proxy_environment.hpp"
#include "compiler/pipeline.hpp"
#include "emitters/bwrap/bwrap_emitter.hpp"
#include "zpolicy/exit_code.hpp"

namespace zpolicy::compiler {
namespace {

const Artifact* artifact(const Compiled& c, const char* name) {
  for (const auto& a : c.artifacts)
    if (a.name == name) return &a;
  return nullptr;
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The refusal of a run for error-level lints and verifier findings: each one at its
// policy line, then one summary line; --accept is suggested only when it could help.
Refusal refusal(const std::vector<ir::Diagnostic>& refused,
                const std::vector<ir::Diagnostic>& findings) {
  std::string report;
  for (const auto& l : refused) report += l.report() + "\n";
  for (const auto& f : findings) report += f.report() + "\n";
  report += "zpolicy: refusing to run";
  if (!findings.empty())
    report += ": " + plural(findings.size(), "verifier finding", "verifier findings");
  if (!refused.empty())
    report += std::string(findings.empty() ? ": " : ", ") +
              plural(refused.size(), "lint", "lints") + " at error level";
  report += "; nothing ran\n";
  const bool acceptable_only =
      findings.empty() && std::all_of(refused.begin(), refused.end(), [](const ir::Diagnostic& l) {
        return acceptance_of(l.code) == Acceptance::Acceptable;
      });
  if (acceptable_only)
    report += "zpolicy: to take this risk for one run, name each lint: --accept ID\n";
  return Refusal{kExitVerify, report};
}

// The error-level findings of `lints`, each refused or accepted (--accept).
void judge(const BoundLints& lints, std::vector<ir::Diagnostic>& refused,
           std::vector<ir::Diagnostic>& accepted) {
  for (auto& l : lint_policy(lints.judged, lints.context)) {
    if (l.severity != ir::Severity::Error) continue;
    bool ok = acceptance_of(l.code) == Acceptance::Acceptable &&
              std::find(lints.accept.begin(), lints.accept.end(), l.code) != lints.accept.end();
    (ok ? accepted : refused).push_back(std::move(l));
  }
}

// The command's environment as bwrap reads it from --args: NUL-separated arguments,
// --clearenv (bwrap itself started with none, but nothing is left to chance) then
// --setenv NAME VALUE for each variable. A NUL inside a name or value would end the
// argument there and start another bwrap option: refused. So is a variable bwrap's
// setenv() refuses (an empty name), which would fail the run only once bwrap started.
std::optional<std::string> environment_arguments(const std::vector<std::string>& env,
                                                 std::string& error) {
  using namespace std::string_literals;
  std::string out = "--clearenv\0"s;
  for (const auto& e : env) {
    const size_t eq = e.find('=');
    if (eq == 0 || eq == std::string::npos) {
      error = "the command's environment holds '" + e.substr(0, e.find('\0')) +
              "', which is not NAME=VALUE";
      return std::nullopt;
    }
    if (e.find('\0') != std::string::npos) {
      error = "the command's environment variable '" + e.substr(0, std::min(eq, e.find('\0'))) +
              "' holds a NUL, which bwrap would take for the end of its value";
      return std::nullopt;
    }
    out += "--setenv\0"s + e.substr(0, eq) + '\0' + e.substr(eq + 1) + '\0';
  }
  return out;
}

// bwrap 0.8.0 counts its command line and what --args hands it together, and dies past
// 9000 ("Exceeded maximum number of arguments") once started: the run then said the
// command could not start (exit 126), which it was not told why (red team R9-A1).
constexpr size_t kBwrapMaxArguments = 9000;

// bwrap 0.8.0 reads its whole mount table again after each bind (to make what lies below
// the new mount read-only too), and the stage mounts each protection in the writable roots'
// copies first, so setting a sandbox up costs the square of its mounts: 250 protected
// paths took 2.8 s, 500 took 11.5 s and 1 000 outran the runner's 30 s setup limit on a
// loaded 2-core machine. A nested repository's index recording thousands of submodules (a
// sandbox can write one) held every later run 30 s before that refusal (red team R17,
// "noticed, left"); past this many mounts the run is refused at once, naming where most
// of them come from, before any placeholder is made.
constexpr size_t kMaxSandboxMounts = 1024;

// "'FILE:LINE' (N of them)": the policy line or host file that asked for the most
// protected and deny paths.
std::string main_source_of_mounts(const ir::Resolved& r) {
  std::map<std::string, size_t> count;
  for (const auto* list : {&r.protect, &r.deny})
    for (const auto& p : *list)
      ++count[p.loc.file + (p.loc.line > 0 ? ":" + std::to_string(p.loc.line) : "")];
  const auto most = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
    return a.second < b.second;
  });
  if (most == count.end()) return "the policy";
  return "'" + most->first + "' (" + std::to_string(most->second) + " of them)";
}

}  // namespace

std::optional<ir::HostIdentity> recorded_identity(const ir::Resolved& resolved,
                                                  const std::string& path) {
  for (const auto* list : {&resolved.read, &resolved.write, &resolved.pin, &resolved.protect})
    for (const auto& r : *list)
      if (r.path == path && r.identity) return r.identity;
  return std::nullopt;
}

const char* to_string(Backend b) {
  switch (b) {
    case Backend::Bwrap:
      return "bwrap";
    case Backend::SandboxExec:
      return "sandbox-exec";
    case Backend::Unconfined:
      return "unconfined";
  }
  return "?";
}

std::optional<std::string> check_accepted(const std::vector<std::string>& ids) {
  std::string acceptable;
  for (const auto& a : acceptable_lints()) acceptable += (acceptable.empty() ? "" : ", ") + a;
  for (const auto& id : ids) {
    switch (acceptance_of(id)) {
      case Acceptance::Acceptable:
        continue;
      case Acceptance::Warning:
        return "--accept " + id + ": a warning never refuses a run; there is nothing to accept "
               "(acceptable: " + acceptable + ")";
      case Acceptance::NotAcceptable:
        return "--accept " + id + ": this lint is a mistake in the policy, not a risk to take; "
               "fix the policy (acceptable: " + acceptable + ")";
      case Acceptance::VerifierFinding:
        return "--accept " + id + ": a verifier finding (a dropped deny) is never accepted "
               "(acceptable: " + acceptable + ")";
      case Acceptance::Unknown:
        return "--accept " + id + ": not a lint that can be accepted (acceptable: " + acceptable +
               "); a verifier finding (a dropped deny) is never accepted";
    }
  }
  return std::nullopt;
}

std::optional<Refusal> lints_refuse_on(const RunPlan& plan,
                                       const std::vector<MountEntry>& mounts) {
  if (!plan.lints || !plan.lints->context.host) return std::nullopt;
  BoundLints now = *plan.lints;
  now.context.host->mounts = mounts;
  std::vector<ir::Diagnostic> refused, accepted;
  judge(now, refused, accepted);
  if (refused.empty()) return std::nullopt;
  return refusal(refused, {});
}

RunPlan plan_unconfined(const RunInput& in) {
  RunPlan plan;
  plan.backend = Backend::Unconfined;
  plan.exe = in.command.at(0);
  plan.argv = in.command;
  plan.command = in.command;
  plan.env = in.env;
  plan.exe_env = in.env;  // the command itself
  plan.timeout = in.timeout;
  return plan;
}

std::variant<RunPlan, Refusal> plan_confined(const RunInput& in, ir::Target target,
                                             FilterProof when) {
  // The lints first: they look at the policy and a few host paths only, so a run they
  // refuse (a workspace of `/` or `$HOME`) is refused before resolution walks the tree.
  // They judge the mode this run gets: --mode read-only makes nothing writable.
  BoundLints lints{in.policy, in.lint, in.accept};
  lints.judged.mode.value = in.mode;
  std::vector<ir::Diagnostic> refused, accepted;
  judge(lints, refused, accepted);
  ir::Diagnostics syscall_diags;
  lint_syscall_rules(in.policy.syscalls, syscall_diags);
  for (const auto& d : syscall_diags.all())
    if (d.severity == ir::Severity::Error)
      refused.push_back({kSyscallLintId, d.severity, d.loc, d.message});

  std::optional<Compiled> compiled;
  if (refused.empty()) {
    ir::Diagnostics diags;
    const bool overlap = when == FilterProof::BeforeRelease && target == Target::Linux;
    compiled = compile(in.policy, target, in.mode, in.host, diags, ArtifactSet::Enforced,
                       overlap ? Proof::MountPlanOnly : Proof::All);
    if (!compiled || diags.has_errors()) return Refusal{kExitUsage, diags.str()};
  }
  if (!refused.empty() || !compiled->findings.empty())
    return refusal(refused, compiled ? compiled->findings : std::vector<ir::Diagnostic>{});

  RunPlan plan;
  plan.command = in.command;
  plan.env = in.env;
  plan.timeout = in.timeout;
  plan.accepted = std::move(accepted);
  plan.lints = std::move(lints);
  if (target == Target::Linux) {
    const Artifact* args = artifact(*compiled, "bwrap.args");
    const Artifact* bpf = artifact(*compiled, "seccomp.bpf");
    const Artifact* fds = artifact(*compiled, "bwrap.fds");
    if (!args || !bpf || !fds)
      return Refusal{kExitInternal, "zpolicy: internal error: no linux artifacts\n"};
    // Split as the verifier split it ("FD PATH"); it refused anything else.
    for (const auto& line : ir::artifact_lines(fds->content)) {
      const size_t space = line.find(' ');
      const int fd = std::stoi(std::string(line.substr(0, space)));
      if (fd == kStatusFd || fd == emitters::bwrap::kSeccompFd)
        return Refusal{kExitInternal, "zpolicy: internal error: bind descriptor " +
                                          std::to_string(fd) + " is already in use\n"};
      plan.bind_sources.push_back({fd, std::string(line.substr(space + 1))});
    }
    plan.backend = Backend::Bwrap;
    plan.exe = kBwrapPath;
    plan.argv = {kBwrapPath};
    for (const auto a : ir::artifact_lines(args->content)) plan.argv.emplace_back(a);
    plan.argv.insert(plan.argv.end(), {"--json-status-fd", std::to_string(kStatusFd)});
    // Above every descriptor the verified argv names (the bind sources start at 5).
    plan.block_fd = kStatusFd + 1;
    for (const auto& s : plan.bind_sources) plan.block_fd = std::max(plan.block_fd, s.fd + 1);
    plan.argv.insert(plan.argv.end(), {"--block-fd", std::to_string(plan.block_fd)});
    const int environment_fd = plan.block_fd + 1;
    plan.argv.insert(plan.argv.end(), {"--args", std::to_string(environment_fd)});
    auto parsed = parse_bwrap_args(args->content, std::make_shared<PathTable>(PathSpelling::Bound),
                                   fds->content);
    if (!parsed)
      return Refusal{kExitInternal, "zpolicy: internal error: the verified bwrap.args no longer "
                                    "parses\n"};
    plan.expected_setup = expected_setup(*parsed);
    for (const auto& op : parsed->ops)
      if (op.kind == BwrapOpKind::Bind && op.source_fd)
        for (auto& s : plan.bind_sources)
          if (s.fd == *op.source_fd) s.writable = true;
    for (const auto& op : parsed->ops)
      if (is_mount(op.kind)) plan.mount_destinations.push_back(parsed->paths->path(op.dest).str());
    if (plan.mount_destinations.size() > kMaxSandboxMounts)
      return Refusal{kExitUsage,
                     "zpolicy: run: the sandbox would need " +
                         std::to_string(plan.mount_destinations.size()) +
                         " mounts (protected paths and deny paths inside the writable roots, "
                         "their placeholders and the standard ones), more than the " +
                         std::to_string(kMaxSandboxMounts) +
                         " one run sets up (bwrap's setup grows with the square of the count); "
                         "most come from " +
                         main_source_of_mounts(compiled->resolved) +
                         "; give the run a smaller workspace, or protect a directory that "
                         "holds many of them; nothing ran\n"};
    if (compiled->resolved.network == ir::Network::Allow) {
      plan.proxy_port = proxy_port(compiled->resolved.allow);
      set_proxy_environment(plan.env, plan.proxy_port, compiled->resolved.allow);
    }
    plan.argv.push_back("--");
    plan.argv.insert(plan.argv.end(), in.command.begin(), in.command.end());
    // The filter's descriptor is the one the verified argv names (`--seccomp 3`).
    plan.fds.push_back({emitters::bwrap::kSeccompFd, bpf->content, bpf->name, Handover::AtRelease});
    // After set_proxy_environment: the payload is the command's whole environment.
    std::string bad;
    auto environment = environment_arguments(plan.env, bad);
    if (!environment) return Refusal{kExitUsage, "zpolicy: run: " + bad + "; nothing ran\n"};
    const size_t arguments = plan.argv.size() - 1 +
                             static_cast<size_t>(std::count(environment->begin(), environment->end(), '\0'));
    if (arguments > kBwrapMaxArguments)
      return Refusal{kExitUsage,
                     "zpolicy: run: the sandbox's setup, the command and its environment come to " +
                         std::to_string(arguments) + " bwrap arguments, and bwrap takes at most " +
                         std::to_string(kBwrapMaxArguments) + " (" + std::to_string(plan.env.size()) +
                         " variables, " + std::to_string(in.command.size()) +
                         " command words, the rest mounts); nothing ran\n"};
    plan.fds.push_back({environment_fd, std::move(*environment), kEnvironmentArtifact, Handover::AtStart});

    plan.status_fd = kStatusFd;
  } else {
    const Artifact* profile = artifact(*compiled, "profile.sb");
    const Artifact* params = artifact(*compiled, "params.txt");
    if (!profile || !params)
      return Refusal{kExitInternal, "zpolicy: internal error: no macos artifacts\n"};
    plan.backend = Backend::SandboxExec;
    plan.exe = kSandboxExecPath;
    plan.exe_env = plan.env;
    plan.sbpl_profile = profile->content;
    for (const auto& line : ir::artifact_lines(params->content)) {
      auto eq = line.find('=');
      plan.sbpl_params.emplace_back(line.substr(0, eq),
                                    eq == std::string::npos ? "" : line.substr(eq + 1));
    }
    plan.cwd = compiled->resolved.cwd;
  }
  plan.verified = std::move(compiled->resolved);
  if (when == FilterProof::BeforeRelease && target == Target::Linux) start_filter_proof(plan);
  return plan;
}

void start_filter_proof(RunPlan& plan) {
  // Over copies of exactly the bytes the backend will read, so that what is proved is
  // what runs, whatever happens to `plan` meanwhile.
  std::vector<Artifact> handed;
  for (const auto& p : plan.fds)
    if (p.artifact != kEnvironmentArtifact) handed.push_back({p.artifact, p.bytes, true});
  auto prove = [resolved = *plan.verified, handed = std::move(handed)] {
    return verify_linux_part(resolved, LinuxPart::Filter, handed, ArtifactSet::Enforced);
  };
  // The thread takes no signal: it starts with every signal blocked (a new thread
  // inherits its creator's mask), so the runner's handlers and masks (runner/supervise.cpp)
  // stay the main thread's alone, and a signal never meets a disposition the runner did
  // not set up.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    plan.filter_proof = std::async(std::launch::async, prove).share();
  } catch (const std::system_error&) {
    // No thread: the proof runs when awaited, later than asked and never weaker.
    plan.filter_proof = std::async(std::launch::deferred, prove).share();
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

std::optional<Refusal> await_filter_proof(const RunPlan& plan) {
  if (!plan.filter_proof.valid()) return std::nullopt;
  try {
    const auto& findings = plan.filter_proof.get();
    if (findings.empty()) return std::nullopt;
    return refusal({}, findings);
  } catch (const std::exception& e) {
    return Refusal{kExitInternal, std::string("zpolicy: cannot prove the seccomp program: ") +
                                      e.what() + "; nothing ran\n"};
  }
}

}  // namespace zpolicy::compiler
