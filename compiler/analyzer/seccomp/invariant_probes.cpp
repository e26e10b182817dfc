#include "compiler/analyzer/seccomp/invariant_probes.hpp"

#include <cstdio>
#include <set>

namespace zpolicy::compiler {

ir::Diagnostic InvariantFinding::let_through(std::span<const BpfInsn> prog, std::string call_text,
                                             const SeccompData& call) const {
  std::vector<uint32_t> trace;
  const BpfRun run = run_bpf(prog, call, &trace);
  std::string path = "seccomp.bpf path";
  for (uint32_t pc : trace) path += " " + std::to_string(pc);
  return ir::finding("linux", "dropped-deny", rule, std::move(call_text), expected,
                     seccomp_action_text(run.ret), {std::move(path)});
}

bool refuses(uint32_t ret) {
  const auto action = decode_seccomp_ret(ret);
  return action && action->kind != ir::Action::Kind::Allow;
}

std::vector<ir::Diagnostic> first_let_through(std::span<const BpfInsn> prog,
                                              const std::vector<InvariantProbe>& probes,
                                              const InvariantFinding& finding) {
  std::vector<ir::Diagnostic> out;
  std::set<const ir::SyscallInfo*> settled;
  for (const InvariantProbe& p : probes) {
    if (!p.call || settled.contains(p.call)) continue;
    const SeccompData call{p.call->nr, ir::audit_arch(p.arch), 0, p.args};
    const BpfRun run = run_bpf(prog, call);
    if (refuses(run.ret)) {
      if (!run.read_arguments) settled.insert(p.call);
      continue;
    }
    std::string text = std::string(ir::to_string(p.arch)) + " " + std::string(p.call->name) + "(";
    for (size_t i = 0; i < p.args.size(); ++i) {
      char hex[24];
      std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(p.args[i]));
      text += (i ? ", " : "") + std::string(hex);
    }
    out.push_back(finding.let_through(prog, text + ")", call));
    settled.insert(p.call);
  }
  return out;
}

}  // namespace zpolicy::compiler
