#include "tests/fuzz/run_input.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string_view>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/seccomp_path_proof.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "compiler/frontend/default_policy.hpp"
#include "compiler/frontend/oci_import.hpp"
#include "compiler/frontend/policy_parser.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/resolve/git_index.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy::fuzz {
namespace {

// Choices that are not part of the input's bytes (bind to a workspace or not, narrow
// the mode, the OCI import's arch) are drawn from a hash of them, so that a saved input
// replays exactly as it ran.
uint64_t content_hash(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325u;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3u;
  return h;
}

bool has_error(const Result& r) {
  for (const auto& d : r.diagnostics)
    if (d.severity == Severity::Error) return true;
  return false;
}

// DESIGN.md "Command line": 0, 2 invalid input, 3 verification failed; never success
// with nothing to show, never a refusal without a reason.
std::optional<std::string> broken_promise(const std::string& call, const Result& r,
                                          bool needs_artifacts) {
  if (r.exit_code != kExitOk && r.exit_code != kExitUsage && r.exit_code != kExitVerify)
    return call + " returned exit code " + std::to_string(r.exit_code);
  if (r.exit_code != kExitOk && !has_error(r))
    return call + " refused (exit " + std::to_string(r.exit_code) + ") without an error diagnostic";
  if (r.exit_code == kExitOk && has_error(r))
    return call + " succeeded with an error diagnostic: " + r.diagnostics.front().str();
  if (needs_artifacts && r.exit_code == kExitOk && r.artifacts.empty())
    return call + " succeeded without artifacts";
  return std::nullopt;
}

struct Check {
  Outcome outcome;
  void operator()(const std::string& call, const Result& r, bool needs_artifacts = false) {
    outcome.exit_code = r.exit_code;
    outcome.diagnostics.clear();
    for (const auto& d : r.diagnostics) outcome.diagnostics += d.str();
    if (!outcome.broken) outcome.broken = broken_promise(call, r, needs_artifacts);
  }
};

Outcome run_policy(const Input& input, const std::string& workspace) {
  const uint64_t h = content_hash(input.bytes);
  Request req;
  req.policy_text = input.bytes;
  req.policy_name = "fuzz.yaml";
  if (h % 4 == 0 && !workspace.empty()) req.workspace = workspace;
  if (h % 8 == 1) req.mode = "read-only";
  Check check;
  check("check", zpolicy::check(req));
  for (Target t : {Target::Linux, Target::Macos})
    check(t == Target::Linux ? "compile --target linux" : "compile --target macos",
          zpolicy::compile(req, t), true);
  static const char* const kPaths[] = {"${WORKSPACE}/.git/config", "/etc/passwd",
                                       "${HOME}/.ssh/id_rsa", "${TMPDIR}/x", "/"};
  static const char* const kOperations[] = {"read", "write", "create", "delete"};
  const Explanation e = zpolicy::explain(req, kPaths[(h >> 8) % 5], kOperations[(h >> 16) % 4]);
  // 3: a refusal with its reason (a run bound here would be refused; a policy the macOS
  // target cannot express), as compile's.
  if (e.exit_code != kExitOk && e.exit_code != kExitUsage && e.exit_code != kExitVerify &&
      !check.outcome.broken)
    check.outcome.broken = "explain returned exit code " + std::to_string(e.exit_code);
  return check.outcome;
}

std::vector<Artifact> artifact_set(const Corpus& corpus, const Input& input,
                                   std::initializer_list<const char*> names) {
  std::vector<Artifact> out;
  for (const char* name : names)
    out.push_back({name, name == input.role ? input.bytes : corpus.artifact(input.policy, name),
                   std::string_view(name) == "seccomp.bpf"});
  return out;
}

Request golden_request(const Corpus& corpus, const Input& input) {
  Request req;
  req.policy_text = corpus.policy_text(input.policy);
  req.policy_name = input.policy + ".yaml";
  return req;
}

// `zpolicy inspect FILE [--syscall NAME --arch A --args ...]` on the program.
void inspect_bpf(const std::string& bytes) {
  const auto program = compiler::parse_bpf(bytes);
  static_cast<void>(compiler::disassemble_bpf(std::string_view(bytes)));
  if (!program) return;
  const uint64_t h = content_hash(bytes);
  const std::array<uint64_t, 6> args{h, h >> 32, ~h, 0, 1, 0xffffffffu};
  for (ir::Arch arch : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386})
    for (uint32_t nr : {0u, 101u, static_cast<uint32_t>(h % 512), 0xffffffffu})
      static_cast<void>(compiler::evaluate_bpf(bytes, arch, nr, args, h));
}

// The probe sweep as the path proof's oracle (docs/verify.md "3. The probes"): `verify`
// runs the sweep only on a program the proof refutes, so here a program the proof
// accepts must be accepted by the sweep too, or the proof has a hole. The golden
// policies' syscall rules are resolved once each.
std::optional<std::string> proof_oracle(const Corpus& corpus, const Input& input) {
  const auto program = compiler::parse_bpf(input.bytes);
  if (!program) return std::nullopt;
  static std::map<std::string, ir::SyscallPolicy> rules;
  auto at = rules.find(input.policy);
  if (at == rules.end()) {
    ir::Diagnostics d;
    const auto policy =
        compiler::parse_policy(corpus.policy_text(input.policy), input.policy + ".yaml", d);
    const auto resolved = policy ? compiler::resolve_for_target(*policy, ir::Target::Linux,
                                                                policy->mode.value, std::nullopt, d)
                                 : std::nullopt;
    if (!resolved) return "the golden policy " + input.policy + " does not resolve for linux";
    at = rules.emplace(input.policy, resolved->syscalls).first;
  }
  const auto proof = compiler::prove_paths(compiler::SyscallIntent(at->second), *program);
  if (proof.unprovable || proof.mismatches > 0 ||
      compiler::sweep_seccomp(at->second, *program).ok())
    return std::nullopt;
  return "the probe sweep refutes a seccomp program the path proof accepts";
}

Outcome run_artifact(const Corpus& corpus, const Input& input) {
  Check check;
  const Request req = golden_request(corpus, input);
  if (input.kind == Kind::Sbpl) {
    check("verify --target macos",
          zpolicy::verify(req, Target::Macos, artifact_set(corpus, input, {"profile.sb", "params.txt"})));
    return check.outcome;
  }
  check("verify --target linux",
        zpolicy::verify(req, Target::Linux,
                        artifact_set(corpus, input, {"bwrap.args", "seccomp.bpf", "seccomp.txt"})));
  if (input.kind == Kind::Seccomp) {
    inspect_bpf(input.bytes);
    if (!check.outcome.broken) check.outcome.broken = proof_oracle(corpus, input);
  }
  return check.outcome;
}

Outcome run_oci(const Input& input) {
  static const char* const kArches[] = {"amd64", "x32", "386", "arm64"};
  const uint64_t h = content_hash(input.bytes);
  compiler::OciImportOptions options;
  options.arch = kArches[h % 4];
  if (h & 4) options.capabilities = {"CAP_SYS_ADMIN", "CAP_SYS_PTRACE"};
  ir::Diagnostics diags;
  const auto spec = compiler::import_oci_seccomp(input.bytes, "fuzz.json", diags, options);
  Outcome out;
  out.exit_code = diags.has_errors() ? kExitUsage : kExitOk;
  out.diagnostics = diags.str();
  if (!spec) {
    if (!diags.has_errors()) out.broken = "the import returned nothing without an error";
    return out;
  }
  if (diags.has_errors()) out.broken = "the import returned a profile with an error: " + diags.str();
  ir::Policy policy = compiler::default_policy();
  policy.syscalls = *spec;
  ir::Diagnostics compile_diags;
  const auto compiled = compiler::compile(policy, compiler::Target::Linux, ir::Mode::WorkspaceWrite,
                                          std::nullopt, compile_diags);
  out.diagnostics += compile_diags.str();
  if (!compiled) {
    out.exit_code = kExitUsage;
    if (!compile_diags.has_errors() && !out.broken)
      out.broken = "compile of the imported profile returned nothing without an error";
  } else if (!compiled->findings.empty()) {
    out.exit_code = kExitVerify;
  }
  return out;
}

// A git index as the host's .git/index (compiler/resolve/git_index.hpp; red team A16-6):
// written beside the seeds' shared indexes in a directory of the scratch tree, then read
// for its gitlinks with the hash size its role names. The reader answers with paths or
// with why it will not decide; either is an answer (exit 0 or 2 in the statistics).
Outcome run_git_index(const Corpus& corpus, const Input& input, const std::string& workspace) {
  Outcome out;
  if (workspace.empty()) return out;
  const std::filesystem::path dir = std::filesystem::path(workspace).parent_path() / "git-index";
  std::filesystem::create_directories(dir);
  for (const auto& [name, bytes] : corpus.shared_indexes())
    std::ofstream(dir / name, std::ios::binary | std::ios::trunc) << bytes;
  const std::string index = (dir / "index").string();
  std::ofstream(index, std::ios::binary | std::ios::trunc) << input.bytes;
  const auto links = compiler::gitlinks_of_index(index, input.role == "index-sha256" ? 32 : 20);
  out.exit_code = links.unreadable ? kExitUsage : kExitOk;
  out.diagnostics = links.unreadable ? "unreadable: " + *links.unreadable + "\n"
                                     : std::to_string(links.paths.size()) + " gitlinks\n";
  for (const auto& p : links.paths) out.diagnostics += "  " + p.substr(0, 200) + "\n";
  return out;
}

}  // namespace

Outcome run_input(const Corpus& corpus, const Input& input, const std::string& workspace) {
  switch (input.kind) {
    case Kind::Policy:
      return run_policy(input, workspace);
    case Kind::Bwrap:
    case Kind::Seccomp:
    case Kind::Sbpl:
      return run_artifact(corpus, input);
    case Kind::Oci:
      return run_oci(input);
    case Kind::GitIndex:
      return run_git_index(corpus, input, workspace);
  }
  return {};
}

}  // namespace zpolicy::fuzz
