#include "compiler/run_plan.hpp"

#include <algorithm>

#include "compiler/lint/syscall_lint.hpp"
#include "compiler/network/proxy_environment.hpp"
#include "compiler/pipeline.hpp"
#include "emitters/bwrap/bwrap_emitter.hpp"
#include "zpolicy/exit_code.hpp"

namespace zpolicy::compiler {
namespace {

// The artifact files split as their readers split them: one entry per line, the last
// newline closing the last entry. bwrap.args is read by the verifier this way, so the
// argv built from it is the argv it proved.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

const Artifact* artifact(const Compiled& c, const char* name) {
  for (const auto& a : c.artifacts)
    if (a.name == name) return &a;
  return nullptr;
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

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

RunPlan plan_unconfined(const RunInput& in) {
  RunPlan plan;
  plan.backend = Backend::Unconfined;
  plan.exe = in.command.at(0);
  plan.argv = in.command;
  plan.command = in.command;
  plan.env = in.env;
  plan.timeout = in.timeout;
  return plan;
}

std::variant<RunPlan, Refusal> plan_confined(const RunInput& in, ir::Target target) {
  // The lints first: they look at the policy and a few host paths only, so a run they
  // refuse (a workspace of `/` or `$HOME`) is refused before resolution walks the tree.
  // They judge the mode this run gets: --mode read-only makes nothing writable.
  ir::Policy judged = in.policy;
  judged.mode.value = in.mode;
  std::vector<Lint> refused, accepted;
  for (auto& l : lint_policy(judged, in.lint)) {
    if (l.severity != ir::Severity::Error) continue;
    bool ok = acceptance_of(l.id) == Acceptance::Acceptable &&
              std::find(in.accept.begin(), in.accept.end(), l.id) != in.accept.end();
    (ok ? accepted : refused).push_back(std::move(l));
  }
  ir::Diagnostics syscall_diags;
  lint_syscall_rules(in.policy.syscalls, syscall_diags);
  for (const auto& d : syscall_diags.all())
    if (d.severity == ir::Severity::Error)
      refused.push_back({kSyscallLintId, d.severity, d.loc, d.message});

  std::optional<Compiled> compiled;
  if (refused.empty()) {
    ir::Diagnostics diags;
    compiled = compile(in.policy, target, in.mode, in.host, diags, ArtifactSet::Enforced);
    if (!compiled || diags.has_errors()) return Refusal{kExitUsage, diags.str()};
  }
  const size_t findings = compiled ? compiled->findings.size() : 0;
  if (!refused.empty() || findings) {
    std::string report;
    for (const auto& l : refused) report += l.str() + "\n";
    if (compiled)
      for (const auto& f : compiled->findings) report += f.str();
    report += "zpolicy: refusing to run";
    if (findings) report += ": " + plural(findings, "verifier finding", "verifier findings");
    if (!refused.empty())
      report += std::string(findings ? ", " : ": ") + plural(refused.size(), "lint", "lints") +
                " at error level";
    report += "; nothing ran\n";
    bool acceptable_only = !findings && std::all_of(refused.begin(), refused.end(), [](const Lint& l) {
      return acceptance_of(l.id) == Acceptance::Acceptable;
    });
    if (acceptable_only)
      report += "zpolicy: to take this risk for one run, name each lint: --accept ID\n";
    return Refusal{kExitVerify, report};
  }

  RunPlan plan;
  plan.command = in.command;
  plan.env = in.env;
  plan.timeout = in.timeout;
  plan.accepted = std::move(accepted);
  if (target == Target::Linux) {
    const Artifact* args = artifact(*compiled, "bwrap.args");
    const Artifact* bpf = artifact(*compiled, "seccomp.bpf");
    const Artifact* fds = artifact(*compiled, "bwrap.fds");
    if (!args || !bpf || !fds)
      return Refusal{kExitInternal, "zpolicy: internal error: no linux artifacts\n"};
    // Split as the verifier split it ("FD PATH"); it refused anything else.
    for (const auto& line : lines_of(fds->content)) {
      const size_t space = line.find(' ');
      const int fd = std::stoi(line.substr(0, space));
      if (fd == kStatusFd || fd == emitters::bwrap::kSeccompFd)
        return Refusal{kExitInternal, "zpolicy: internal error: bind descriptor " +
                                          std::to_string(fd) + " is already in use\n"};
      plan.bind_sources.push_back({fd, line.substr(space + 1)});
    }
    plan.backend = Backend::Bwrap;
    plan.exe = kBwrapPath;
    plan.argv = {kBwrapPath};
    for (auto& a : lines_of(args->content)) plan.argv.push_back(std::move(a));
    plan.argv.insert(plan.argv.end(), {"--json-status-fd", std::to_string(kStatusFd)});
    if (compiled->resolved.network == ir::Network::Allow) {
      // Above every descriptor the verified argv names (the bind sources start at 5).
      plan.block_fd = kStatusFd + 1;
      for (const auto& s : plan.bind_sources) plan.block_fd = std::max(plan.block_fd, s.fd + 1);
      plan.argv.insert(plan.argv.end(), {"--block-fd", std::to_string(plan.block_fd)});
      plan.proxy_port = proxy_port(compiled->resolved.allow);
      set_proxy_environment(plan.env, plan.proxy_port, compiled->resolved.allow);
    }
    plan.argv.push_back("--");
    plan.argv.insert(plan.argv.end(), in.command.begin(), in.command.end());
    // The filter's descriptor is the one the verified argv names (`--seccomp 3`).
    plan.fds.push_back({emitters::bwrap::kSeccompFd, bpf->content, bpf->name});
    plan.status_fd = kStatusFd;
  } else {
    const Artifact* profile = artifact(*compiled, "profile.sb");
    const Artifact* params = artifact(*compiled, "params.txt");
    if (!profile || !params)
      return Refusal{kExitInternal, "zpolicy: internal error: no macos artifacts\n"};
    plan.backend = Backend::SandboxExec;
    plan.exe = kSandboxExecPath;
    plan.sbpl_profile = profile->content;
    for (const auto& line : lines_of(params->content)) {
      auto eq = line.find('=');
      plan.sbpl_params.emplace_back(line.substr(0, eq),
                                    eq == std::string::npos ? "" : line.substr(eq + 1));
    }
    plan.cwd = compiled->resolved.cwd;
  }
  plan.verified = std::move(compiled->resolved);
  return plan;
}

}  // namespace zpolicy::compiler
