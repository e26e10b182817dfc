#include "compiler/pipeline.hpp"

#include "compiler/analyzer/verify.hpp"
#include "emitters/bwrap/bwrap_emitter.hpp"
#include "emitters/sbpl/profile.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"

namespace zpolicy::compiler {

std::vector<Artifact> emit_artifacts(const ir::Resolved& r, Target target, ArtifactSet set) {
  std::vector<Artifact> out;
  if (target == Target::Linux) {
    namespace bw = emitters::bwrap;
    if (set == ArtifactSet::All) {
      out.push_back({"bwrap.args", bw::args_text(bw::emit_args(r))});
    } else {
      auto emitted = bw::emit(r, bw::BindForm::Descriptor);
      out.push_back({"bwrap.args", bw::args_text(emitted.args)});
      out.push_back({"bwrap.fds", bw::sources_text(emitted.sources)});
    }
    out.push_back({"seccomp.bpf", emitters::seccomp::emit_bpf(r.syscalls), true});
    if (set == ArtifactSet::All)
      out.push_back({"seccomp.txt", emitters::seccomp::emit_listing(r.syscalls)});
  } else {
    auto profile = emitters::sbpl::emit(r);
    out.push_back({"profile.sb", profile.text});
    out.push_back({"params.txt", emitters::sbpl::params_text(profile)});
  }
  return out;
}

std::optional<ir::Resolved> resolve_for_target(const ir::Policy& policy, Target target,
                                               ir::Mode mode, const std::optional<HostFacts>& host,
                                               ir::Diagnostics& diags) {
  if (!ir::is_confined(mode)) {
    diags.error(policy.mode.loc.line ? policy.mode.loc : policy.origin,
                "nothing to compile: danger-full-access runs without a sandbox "
                "(use --mode to compile a narrower mode)");
    return std::nullopt;
  }
  if (!host) return resolve_portable(policy, mode, diags);
  const HostOs needed = target == Target::Linux ? HostOs::Linux : HostOs::Macos;
  if (host->os != needed) {
    diags.error({"<command line>"},
                std::string("--workspace binds the policy to this host's paths, and this host "
                            "is not ") +
                    (target == Target::Linux ? "Linux" : "macOS") + "; compile the " +
                    to_string(target) + " target without --workspace (portable) instead");
    return std::nullopt;
  }
  auto bound = resolve_for_host(policy, mode, *host, diags);
  // Only bwrap needs a missing protected path to exist (runner/placeholders); Seatbelt's
  // literal + subpath pair refuses creating it, so a macOS run creates nothing.
  if (bound && target == Target::Linux) assume_placeholders(*bound);
  return bound;
}

std::optional<Compiled> compile(const ir::Policy& policy, Target target, ir::Mode mode,
                                const std::optional<HostFacts>& host, ir::Diagnostics& diags,
                                ArtifactSet set, Proof proof) {
  auto r = resolve_for_target(policy, target, mode, host, diags);
  if (!r) return std::nullopt;
  Compiled c{std::move(*r), {}, {}};
  c.findings = inexpressible(c.resolved, target);
  if (!c.findings.empty()) return c;
  c.artifacts = emit_artifacts(c.resolved, target, set);
  c.findings = proof == Proof::MountPlanOnly && target == Target::Linux
                   ? verify_linux_part(c.resolved, LinuxPart::Mounts, c.artifacts, set)
                   : verify_artifacts(c.resolved, target, c.artifacts, set);
  return c;
}

}  // namespace zpolicy::compiler
