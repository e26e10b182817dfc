#include "compiler/analyzer/seccomp/seccomp_verify.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/seccomp_path_proof.hpp"

namespace zpolicy::compiler {
namespace {

constexpr uint32_t kAuditArchAarch64 = 0xC00000B7u;  // any arch the filter must refuse
constexpr size_t kKeptFindings = 100;
// The golden programs' sweeps run about 35 000 instructions; a program that loads an
// argument before it looks at the number makes every number run the value sweep, and
// one of 4 096 instructions could make it run billions (issue 19's 2 s budget).
constexpr size_t kProbeSteps = 100'000'000;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

// The values each argument of one syscall is probed with: every value its rules compare
// with, with its neighbours and high-word variants, and a few boundaries; sorted and
// without repeats. Empty for an argument no condition reads.
std::array<std::vector<uint64_t>, 6> argument_values(
    std::span<const ir::SyscallRule* const> rules) {
  std::array<std::vector<uint64_t>, 6> cand;
  const uint64_t high = uint64_t{1} << 32;
  for (const ir::SyscallRule* r : rules) {
    for (const auto& c : r->conditions) {
      if (c.index >= 6) continue;
      for (uint64_t v : {c.value, c.value & c.mask, c.mask, c.value | ~c.mask})
        for (uint64_t d : {v, v + 1, v - 1, v | high, v & 0xffffffffu, v ^ (uint64_t{1} << 63),
                           v + high, v - high, v | 0xffffffff00000000u})
          cand[c.index].push_back(d);
    }
  }
  for (auto& values : cand) {
    if (values.empty()) continue;
    for (uint64_t d : {uint64_t{0}, uint64_t{1}, uint64_t{0x7fffffff}, uint64_t{0x80000000},
                       uint64_t{0xffffffff}, high, ~uint64_t{0}, uint64_t{1} << 63})
      values.push_back(d);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
  }
  return cand;
}

// The argument vectors probed for one syscall: all zero, all ones, each value of each
// argument alone, and each pair of values of two arguments.
std::vector<std::array<uint64_t, 6>> vectors_of(const std::array<std::vector<uint64_t>, 6>& cand) {
  std::vector<std::array<uint64_t, 6>> out{{}};
  out.push_back(
      {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}});
  for (unsigned i = 0; i < 6; ++i)
    for (uint64_t v : cand[i]) {
      std::array<uint64_t, 6> a{};
      a[i] = v;
      out.push_back(a);
    }
  for (unsigned i = 0; i < 6; ++i)
    for (unsigned j = i + 1; j < 6; ++j)
      for (uint64_t vi : cand[i])
        for (uint64_t vj : cand[j]) {
          std::array<uint64_t, 6> a{};
          a[i] = vi;
          a[j] = vj;
          out.push_back(a);
        }
  return out;
}

// One finding per call number and ABI, so that the kept ones name distinct calls.
using Reported = std::set<std::pair<uint32_t, uint32_t>>;

ir::Diagnostic refusal(std::string why) {
  return ir::finding("linux", "malformed-artifact", {"seccomp.bpf"}, "seccomp.bpf",
                     "a valid artifact", std::move(why));
}

// The policy line behind the IR's answer for a probed call: the rule for that syscall
// with the intended action (the policy's own before the built-in baseline's), else the
// policy's default.
ir::SourceLoc deciding_rule(const ir::SyscallPolicy& p, const SyscallCall& call,
                            const ir::Action& intended) {
  ir::SourceLoc found{ir::kBuiltinFile};
  if (call.arch == ir::Arch::X86_64)
    if (const auto* info = ir::find_syscall(ir::Arch::X86_64, call.nr))
      for (const auto& rule : p.rules)
        if (rule.name == info->name && rule.action == intended) {
          if (rule.loc.file != ir::kBuiltinFile) return rule.loc;
          found = rule.loc;
        }
  return found;
}

// The finding for one call the program answers otherwise than the IR's `intended`:
// dropped-deny when the program's answer is less restrictive or has no word in the IR. It
// names the call and the instructions the interpreter executed on it.
ir::Diagnostic mismatch(const ir::SyscallPolicy& policy, std::span<const BpfInsn> prog,
                        uint32_t audit_arch, const SyscallCall& call, uint64_t ip,
                        const ir::Action& intended) {
  std::vector<uint32_t> trace;
  const uint32_t ret = run_bpf(prog, SeccompData{call.nr, audit_arch, ip, call.args}, &trace).ret;
  const auto actual = decode_seccomp_ret(ret);
  const bool dropped = !actual || ir::more_restrictive(intended, *actual);
  // The IR names x86_64, x32 and i386; any other arch value is just foreign.
  const bool named = audit_arch == ir::kAuditArchX86_64 || audit_arch == ir::kAuditArchI386;
  std::string s = std::string(named ? ir::to_string(call.arch) : "foreign") + " (arch " +
                  hex(audit_arch) + ") nr " + std::to_string(call.nr);
  if (call.arch == ir::Arch::X86_64)
    if (const auto* info = ir::find_syscall(ir::Arch::X86_64, call.nr))
      s += " " + std::string(info->name);
  s += " args";
  for (uint64_t a : call.args) s += " " + hex(a);
  if (ip != 0) s += " ip " + hex(ip);
  s += ": policy says " + intended.str() + ", filter says " + seccomp_action_text(ret);
  s += "; path";
  for (uint32_t pc : trace) s += " " + std::to_string(pc);
  return ir::finding("linux", dropped ? "dropped-deny" : "missing-allow",
                     deciding_rule(policy, call, intended), std::move(s), intended.str(),
                     seccomp_action_text(ret));
}

// The path proof's verdict and counterexamples.
void report_path_proof(const PathProof& proof, const ir::SyscallPolicy& policy,
                       std::span<const BpfInsn> prog, SeccompVerification& v,
                       Reported& reported) {
  if (proof.unprovable)
    v.findings.push_back(refusal("cannot be proven: " + proof.unprovable->str()));
  v.paths = proof.paths;
  v.mismatches += proof.mismatches;
  for (const PathCounterexample& c : proof.counterexamples) {
    reported.insert({c.audit_arch, c.call.nr});
    v.findings.push_back(
        mismatch(policy, prog, c.audit_arch, c.call, c.instruction_pointer, c.intended));
  }
}

// What the probes put in the arguments of the x86_64 numbers some rule's conditions read.
struct ArgumentProbes {
  // The argument vectors of each such number, by number (none for the others).
  std::vector<std::vector<std::array<uint64_t, 6>>> ruled;
  // Every value some rule compares with, in every argument at once, sorted and without
  // repeats: a program whose answer for a call depends on arguments the IR does not look
  // at for that call (an argument check reached by the wrong numbers) shows up on one of
  // these.
  std::vector<uint64_t> values;
};

ArgumentProbes argument_probes(const SyscallIntent& intent) {
  ArgumentProbes out;
  for (const ir::SyscallInfo& s : ir::syscall_table(ir::Arch::X86_64))
    if (intent.reads_arguments(s.nr)) {
      const auto cand = argument_values(intent.rules_for(s.nr));
      out.ruled.resize(std::max<size_t>(out.ruled.size(), s.nr + 1));
      out.ruled[s.nr] = vectors_of(cand);
      // The values in those vectors: zero and all ones, and each argument's values (the
      // pairs repeat them).
      out.values.insert(out.values.end(), {uint64_t{0}, ~uint64_t{0}});
      for (const auto& c : cand) out.values.insert(out.values.end(), c.begin(), c.end());
    }
  std::sort(out.values.begin(), out.values.end());
  out.values.erase(std::unique(out.values.begin(), out.values.end()), out.values.end());
  return out;
}

// The probe sweep (sweep_seccomp): calls run through the program with the interpreter and
// compared with the IR, one number on one ABI at a time.
class ProbeSweep {
 public:
  ProbeSweep(std::span<const BpfInsn> prog, const ir::SyscallPolicy& policy,
             const SyscallIntent& intent, SeccompVerification& v, Reported& reported,
             size_t kept)
      : prog_(prog),
        policy_(policy),
        intent_(intent),
        v_(v),
        reported_(reported),
        args_(argument_probes(intent)),
        kept_(kept) {
    size_t most_vectors = 0;
    for (const auto& vectors : args_.ruled) most_vectors = std::max(most_vectors, vectors.size());
    calls_.reserve(most_vectors + 1 + args_.values.size());
  }

  // One number on one ABI: first with every argument zero. If that path read no
  // argument, the program gives the same answer for every argument vector, so only the
  // IR's side needs the other vectors.
  void number(uint32_t audit, ir::Arch arch, uint32_t nr, const BpfRun& first) {
    const auto got = decode_seccomp_ret(first.ret);
    check(audit, SyscallCall{arch, nr, {}}, got);
    static const std::vector<std::array<uint64_t, 6>> kNone;
    const bool indexed = arch == ir::Arch::X86_64 && nr < args_.ruled.size();
    const auto& vectors = indexed ? args_.ruled[nr] : kNone;  // empty: no rule reads one
    if (vectors.empty() && !first.read_arguments) return;
    if (!first.read_arguments) {
      for (const auto& a : vectors) check(audit, SyscallCall{arch, nr, a}, got);
      return;
    }
    const std::array<uint64_t, 6> ones{~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0},
                                       ~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}};
    calls_.clear();
    for (const auto& a : vectors) calls_.push_back({nr, audit, 0, a});
    calls_.push_back({nr, audit, 0, ones});
    for (uint64_t x : args_.values) calls_.push_back({nr, audit, 0, {x, x, x, x, x, x}});
    run_calls(arch);
  }

  // Whether the sweep ran past kProbeSteps instructions, and skipped the rest.
  bool over_budget() const { return swept_ > kProbeSteps; }

 private:
  // The argument vectors of one number, in order, run together (run_bpf_for_calls).
  void run_calls(ir::Arch arch) {
    if (over_budget()) return;
    const auto runs = run_bpf_for_calls(prog_, calls_);
    for (size_t i = 0; i < calls_.size() && !over_budget(); ++i) {
      swept_ += runs[i].executed;
      check(calls_[i].arch, SyscallCall{arch, calls_[i].nr, calls_[i].args},
            decode_seccomp_ret(runs[i].ret));
    }
  }

  // Compares the program's answer `got` for one call (decoded) with the IR's.
  void check(uint32_t audit, const SyscallCall& call, const std::optional<ir::Action>& got) {
    ++v_.probes;
    const ir::Action want = intent_.decide(call);
    if (got && *got == want) return;
    ++v_.mismatches;
    if (kept_ >= kKeptFindings || !reported_.insert({audit, call.nr}).second) return;
    ++kept_;
    v_.findings.push_back(mismatch(policy_, prog_, audit, call, 0, want));
  }

  std::span<const BpfInsn> prog_;
  const ir::SyscallPolicy& policy_;
  const SyscallIntent& intent_;
  SeccompVerification& v_;
  Reported& reported_;
  const ArgumentProbes args_;
  // Instructions the probes ran; past kProbeSteps the rest are skipped and the program
  // refused, so that the sweep never costs more than the proof may.
  size_t swept_ = 0;
  size_t kept_;  // mismatch findings so far, the proof's included
  std::vector<SeccompData> calls_;  // one buffer serves every number
};

// Every number below 1024 on every audited ABI and a foreign one, and the numbers at the
// edges of the x32 bit and the 32-bit range.
void sweep_numbers(std::span<const BpfInsn> prog, ProbeSweep& sweep) {
  constexpr uint32_t kNumbers = 1024;
  const auto x86_64 = run_bpf_for_numbers(prog, ir::kAuditArchX86_64, 0, kNumbers);
  const auto x32 = run_bpf_for_numbers(prog, ir::kAuditArchX86_64, ir::kX32SyscallBit, kNumbers);
  const auto i386 = run_bpf_for_numbers(prog, ir::kAuditArchI386, 0, kNumbers);
  const auto aarch64 = run_bpf_for_numbers(prog, kAuditArchAarch64, 0, kNumbers);
  for (uint32_t nr = 0; nr < kNumbers; ++nr) {
    sweep.number(ir::kAuditArchX86_64, ir::Arch::X86_64, nr, x86_64[nr]);
    sweep.number(ir::kAuditArchX86_64, ir::Arch::X32, nr | ir::kX32SyscallBit, x32[nr]);
    sweep.number(ir::kAuditArchI386, ir::Arch::I386, nr, i386[nr]);
    // The IR has no name for other arches; like i386 they are foreign.
    sweep.number(kAuditArchAarch64, ir::Arch::I386, nr, aarch64[nr]);
  }
  for (uint32_t nr :
       {0x3fffffffu, 0x40000000u, 0x7fffffffu, 0x80000000u, 0xbfffffffu, 0xc0000000u, 0xffffffffu})
    sweep.number(ir::kAuditArchX86_64, (nr & ir::kX32SyscallBit) ? ir::Arch::X32 : ir::Arch::X86_64,
                 nr, run_bpf(prog, SeccompData{nr, ir::kAuditArchX86_64, 0, {}}));
}

// The sweep's findings and counts added to `v`, after the proof's first `kept` ones (whose
// calls `reported` names). A sweep that runs past its bound refuses the program, unless
// the proof refused it unproven already.
void sweep_probes(const ir::SyscallPolicy& policy, const SyscallIntent& intent,
                  std::span<const BpfInsn> prog, bool unproven, size_t kept, Reported& reported,
                  SeccompVerification& v) {
  ProbeSweep sweep(prog, policy, intent, v, reported, kept);
  sweep_numbers(prog, sweep);
  if (sweep.over_budget() && !unproven)
    v.findings.insert(v.findings.begin(),
                      refusal("cannot be checked: the probe sweep runs more than " +
                              std::to_string(kProbeSteps) + " instructions"));
}

}  // namespace

std::vector<std::array<uint64_t, 6>> probe_arguments(const ir::SyscallPolicy& policy,
                                                     const ir::SyscallInfo& info) {
  return vectors_of(argument_values(SyscallIntent(policy).rules_for(info.nr)));
}

ir::Result<SeccompVerification> verify_seccomp(const ir::SyscallPolicy& policy,
                                               std::string_view bpf) {
  const auto prog = parse_bpf(bpf);
  if (!prog) return prog.error();
  return verify_seccomp(policy, *prog);
}

SeccompVerification verify_seccomp(const ir::SyscallPolicy& policy, std::span<const BpfInsn> prog) {
  SeccompVerification v;
  const SyscallIntent intent(policy);
  Reported reported;
  const PathProof proof = prove_paths(intent, prog);
  report_path_proof(proof, policy, prog, v, reported);
  // A program the proof accepts answers every call as the policy does, so the probes
  // could only agree (the unit and mutation tiers run them there, as the proof's oracle).
  if (!proof.unprovable && proof.mismatches == 0) return v;
  sweep_probes(policy, intent, prog, proof.unprovable.has_value(), proof.counterexamples.size(),
               reported, v);
  return v;
}

SeccompVerification sweep_seccomp(const ir::SyscallPolicy& policy, std::span<const BpfInsn> prog) {
  SeccompVerification v;
  const SyscallIntent intent(policy);
  Reported reported;
  sweep_probes(policy, intent, prog, false, 0, reported, v);
  return v;
}

}  // namespace zpolicy::compiler
