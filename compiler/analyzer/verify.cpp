#include "compiler/analyzer/verify.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "compiler/analyzer/bwrap/verify_bwrap.hpp"
#include "compiler/analyzer/sbpl/sbpl_ancestor_bytes.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/keyring_invariant.hpp"
#include "compiler/analyzer/seccomp/listing_check.hpp"
#include "compiler/analyzer/seccomp/network_invariant.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "compiler/analyzer/seccomp/setid_invariant.hpp"
#include "compiler/analyzer/seccomp/shared_access_invariant.hpp"

namespace zpolicy::compiler {

using ir::Artifact;
using ir::ArtifactSet;
using ir::Target;

namespace {

const Artifact* find(const std::vector<Artifact>& arts, const std::string& name) {
  auto it = std::find_if(arts.begin(), arts.end(), [&](const Artifact& a) { return a.name == name; });
  return it == arts.end() ? nullptr : &*it;
}

ir::Diagnostic malformed_artifact(Target t, const std::string& file, std::string why) {
  return ir::finding(to_string(t), "malformed-artifact", {file}, file, "a valid artifact",
                     std::move(why));
}

// bwrap.args and bwrap.fds: what bwrap acts on as soon as it starts.
void verify_linux_mounts(const ir::Resolved& r, const std::vector<Artifact>& arts,
                         ir::ArtifactSet set, std::vector<ir::Diagnostic>& out) {
  // A run binds by descriptor, and bwrap.fds says what each descriptor holds.
  const Artifact* fds = find(arts, "bwrap.fds");
  if (set == ir::ArtifactSet::Enforced && !fds)
    out.push_back(malformed_artifact(Target::Linux, "bwrap.fds", "missing"));
  if (const Artifact* args = find(arts, "bwrap.args")) {
    auto f = verify_bwrap(r, args->content,
                          fds ? std::optional<std::string_view>(fds->content) : std::nullopt);
    out.insert(out.end(), f.begin(), f.end());
  } else {
    out.push_back(malformed_artifact(Target::Linux, "bwrap.args", "missing"));
  }
}

// seccomp.bpf and its listing: what bwrap reads only once the runner releases it.
void verify_linux_filter(const ir::Resolved& r, const std::vector<Artifact>& arts,
                         ir::ArtifactSet set, std::vector<ir::Diagnostic>& out) {
  const Artifact* bpf = find(arts, "seccomp.bpf");
  // Read once for the listing, the proof and the invariants; a program that does not
  // parse is seccomp.bpf's error, and checked no further.
  std::optional<ir::Result<std::vector<BpfInsn>>> parsed;
  if (bpf) parsed = parse_bpf(bpf->content);
  const std::vector<BpfInsn>* prog = parsed && *parsed ? &**parsed : nullptr;
  // The listing is for review, not what the kernel loads, but reviewers read it in
  // golden diffs: it must be the listing of this very program, and a set without it is
  // not what compile writes.
  if (set == ir::ArtifactSet::All) {
    const Artifact* listing = find(arts, "seccomp.txt");
    if (!listing) {
      out.push_back(malformed_artifact(Target::Linux, "seccomp.txt", "missing"));
    } else if (prog) {
      if (auto m = check_listing(listing->content, *prog, r.syscalls))
        out.push_back(ir::finding("linux", "malformed-artifact", m->loc, "seccomp.txt",
                                  "the listing of seccomp.bpf", m->message));
    }
  }
  if (!bpf) {
    out.push_back(malformed_artifact(Target::Linux, "seccomp.bpf", "missing"));
    return;
  }
  if (!prog) {
    out.push_back(malformed_artifact(Target::Linux, "seccomp.bpf", parsed->error().message));
    return;
  }
  const SeccompVerification v = verify_seccomp(r.syscalls, *prog);
  out.insert(out.end(), v.findings.begin(), v.findings.end());
  auto network = check_network_invariant(r, *prog);
  out.insert(out.end(), network.begin(), network.end());
  auto setid = check_setid_invariant(*prog);
  out.insert(out.end(), setid.begin(), setid.end());
  auto shared = check_shared_access_invariant(*prog);
  out.insert(out.end(), shared.begin(), shared.end());
  auto keyring = check_keyring_invariant(*prog);
  out.insert(out.end(), keyring.begin(), keyring.end());
  const size_t listed = static_cast<size_t>(
      std::count_if(v.findings.begin(), v.findings.end(),
                    [](const ir::Diagnostic& d) { return d.kind != "malformed-artifact"; }));
  if (v.mismatches > listed)
    out.push_back(ir::finding("linux", "dropped-deny", {"seccomp.bpf"}, "seccomp.bpf",
                              "no further mismatches",
                              std::to_string(v.mismatches - listed) + " more not listed"));
}

void verify_macos(const ir::Resolved& r, const std::vector<Artifact>& arts, SbplBindings bindings,
                  std::vector<ir::Diagnostic>& out) {
  const Artifact* profile = find(arts, "profile.sb");
  const Artifact* params = find(arts, "params.txt");
  if (!profile || !params) {
    out.push_back(
        malformed_artifact(Target::Macos, profile ? "params.txt" : "profile.sb", "missing"));
    return;
  }
  auto values = parse_params_text(params->content);
  if (!values) {
    out.push_back(malformed_artifact(Target::Macos, "params.txt", values.error().message));
    return;
  }
  auto findings = verify_sbpl(r, profile->content, *values, bindings);
  out.insert(out.end(), findings.begin(), findings.end());
}

}  // namespace

std::vector<std::string> artifact_names(Target target) {
  if (target == Target::Linux) return {"bwrap.args", "seccomp.bpf", "seccomp.txt"};
  return {"profile.sb", "params.txt"};
}

std::vector<ir::Diagnostic> inexpressible(const ir::Resolved& intent, Target target) {
  std::vector<ir::Diagnostic> out;
  if (target != Target::Macos || !ir::is_confined(intent.mode)) return out;
  out = unnameable_policy_paths(intent);
  if (out.empty())
    if (auto s = too_many_ancestor_bytes(intent)) out.push_back(std::move(*s));
  return out;
}

std::vector<ir::Diagnostic> verify_artifacts(const ir::Resolved& intent, Target target,
                                             const std::vector<Artifact>& artifacts,
                                             ir::ArtifactSet set, bool artifacts_from_elsewhere) {
  std::vector<ir::Diagnostic> out;
  if (!ir::is_confined(intent.mode)) return out;
  if (target == Target::Linux) {
    verify_linux_mounts(intent, artifacts, set, out);
    verify_linux_filter(intent, artifacts, set, out);
  } else {
    verify_macos(intent, artifacts,
                 artifacts_from_elsewhere ? SbplBindings::EveryNesting : SbplBindings::EachRootAlone,
                 out);
  }
  return out;
}

std::vector<ir::Diagnostic> verify_linux_part(const ir::Resolved& intent, LinuxPart part,
                                              const std::vector<Artifact>& artifacts,
                                              ir::ArtifactSet set) {
  std::vector<ir::Diagnostic> out;
  if (!ir::is_confined(intent.mode)) return out;
  if (part == LinuxPart::Mounts)
    verify_linux_mounts(intent, artifacts, set, out);
  else
    verify_linux_filter(intent, artifacts, set, out);
  return out;
}

}  // namespace zpolicy::compiler
