#include <boost/test/unit_test.hpp>

#include "bench/seccomp/libseccomp_reference.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "seccomp_test_support.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;
using zpolicy::compiler::probe_arguments;

namespace {

struct Probe {
  uint32_t audit_arch;
  ir::Arch arch;  // how the IR names it (an unknown arch is foreign like i386)
  uint32_t nr;
  std::array<uint64_t, 6> args;
};

// Every audited ABI, numbers 0..1023, the x32 range, the number-space boundaries, and
// for each x86_64 syscall the argument values around its rules.
std::vector<Probe> probes(const ir::SyscallPolicy& policy) {
  std::vector<Probe> out;
  const std::array<uint64_t, 6> zero{};
  for (uint32_t nr = 0; nr < 1024; ++nr) {
    const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, nr);
    if (s) {
      for (const auto& a : probe_arguments(policy, *s))
        out.push_back({ir::kAuditArchX86_64, ir::Arch::X86_64, nr, a});
    } else {
      out.push_back({ir::kAuditArchX86_64, ir::Arch::X86_64, nr, zero});
    }
    out.push_back({ir::kAuditArchX86_64, ir::Arch::X32, nr | ir::kX32SyscallBit, zero});
    out.push_back({ir::kAuditArchI386, ir::Arch::I386, nr, zero});
    out.push_back({0xC00000B7u /* aarch64 */, ir::Arch::I386, nr, zero});
  }
  for (uint32_t nr : {0x3fffffffu, 0x40000000u, 0x7fffffffu, 0x80000000u, 0xbfffffffu,
                      0xc0000000u, 0xffffffffu})
    out.push_back({ir::kAuditArchX86_64, ir::Arch::X86_64, nr, zero});
  return out;
}

zc::SyscallCall call_of(const Probe& p) { return {p.arch, p.nr, p.args}; }

ir::Action run(const std::vector<zc::BpfInsn>& prog, const Probe& p) {
  zc::SeccompData d;
  d.arch = p.audit_arch;
  d.nr = p.nr;
  d.args = p.args;
  const auto a = zc::decode_seccomp_ret(zc::run_bpf(prog, d).ret);
  BOOST_REQUIRE(a.has_value());
  return *a;
}

std::vector<zc::BpfInsn> parse(const std::string& bytes) {
  auto prog = zc::parse_bpf(bytes);
  BOOST_REQUIRE_MESSAGE(prog.has_value(), prog.error().message);
  return *prog;
}

std::string describe(const Probe& p) {
  std::string s = std::string(ir::to_string(p.arch)) + " nr " + std::to_string(p.nr) + " args";
  for (uint64_t a : p.args) s += " " + std::to_string(a);
  return s;
}

// Why libseccomp may legitimately differ from the IR on a probe, or "" when it must not.
// 1. It compares every argument on 64 bits, also `int` ones the kernel truncates.
// 2. It has no notion of numbers the policy does not know (they get its default).
// 3. It cannot say "most restrictive applying rule wins" across overlapping rules with
//    different actions, nor add a rule whose action equals the default.
// 4. Its code for 64-bit range comparisons (< <= > >=) on one argument is wrong.
// 5. It keeps only one comparison per argument in a rule (socket loopback's two !=).
std::string libseccomp_excuse(const ir::SyscallPolicy& policy, const Probe& p) {
  if (p.arch != ir::Arch::X86_64) return "";
  const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, p.nr);
  if (s == nullptr) return policy.unknown_number_action == policy.default_action ? "" : "unknown";
  std::set<ir::Action::Kind> kinds;
  std::vector<uint32_t> actions;
  bool range = false;
  for (const auto& r : policy.rules) {
    if (r.name != s->name) continue;
    actions.push_back(zpolicy::bench::libseccomp_action(r.action));
    std::set<unsigned> args;
    for (const auto& c : r.conditions)
      if (!args.insert(c.index).second) return "one argument twice in a rule";
    for (const auto& c : r.conditions) {
      if (s->args[c.index] == ir::ArgWidth::U32 && (p.args[c.index] >> 32) != 0)
        return "int argument with high bits";
      range |= c.op == ir::CmpOp::Lt || c.op == ir::CmpOp::Le || c.op == ir::CmpOp::Gt ||
               c.op == ir::CmpOp::Ge;
    }
  }
  std::sort(actions.begin(), actions.end());
  if (std::unique(actions.begin(), actions.end()) - actions.begin() > 1) return "overlap";
  for (uint32_t a : actions)
    if (a == zpolicy::bench::libseccomp_action(policy.default_action)) return "overlap";
  if (range) return "64-bit range";
  return "";
}

struct Tally {
  size_t probes = 0, compared = 0, excused = 0;
  std::map<std::string, size_t> excuses;
};

Tally check_policy(const ir::SyscallPolicy& policy) {
  const auto ours = parse(zpolicy::emitters::seccomp::emit_bpf(policy));
  const auto lin = parse(zpolicy::bench::build_libseccomp(policy, 1).bpf);
  const auto tree = parse(zpolicy::bench::build_libseccomp(policy, 2).bpf);
  const zc::SyscallIntent intent(policy);
  Tally t;
  for (const auto& p : probes(policy)) {
    ++t.probes;
    const ir::Action want = intent.decide(call_of(p));
    const ir::Action got = run(ours, p);
    if (got != want)
      BOOST_ERROR("emitted filter says " << got.str() << ", IR says " << want.str() << " for "
                                         << describe(p));
    for (const auto* ref : {&lin, &tree}) {
      const ir::Action theirs = run(*ref, p);
      const std::string excuse = libseccomp_excuse(policy, p);
      if (excuse.empty()) {
        ++t.compared;
        if (theirs != want)
          BOOST_ERROR("libseccomp says " << theirs.str() << ", IR says " << want.str()
                                         << " for " << describe(p));
      } else if (theirs != want) {
        ++t.excused;
        ++t.excuses[excuse];
      }
    }
  }
  return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_differential)

BOOST_AUTO_TEST_CASE(default_policy_matches_ir_and_libseccomp) {
  Tally t = check_policy(zpolicy::test::default_syscalls());
  BOOST_TEST(t.compared > 4000u);
  // socket(AF_VSOCK | 1<<32) and ioctl(TIOCSTI | 1<<32): libseccomp lets them through.
  BOOST_TEST(t.excuses["int argument with high bits"] > 0u);
}

BOOST_AUTO_TEST_CASE(every_mode_and_network_matches) {
  using ir::Mode;
  using ir::Network;
  for (auto mode : {Mode::ReadOnly, Mode::WorkspaceWrite, Mode::DangerFullAccess})
    for (auto net : {Network::None, Network::Loopback, Network::Full})
      for (auto deny : {ir::Action::errno_(1), ir::Action::kill()}) {
        BOOST_TEST_CONTEXT(ir::to_string(mode) << " " << ir::to_string(net) << " " << deny.str()) {
          const auto pol = zc::effective_syscalls(zpolicy::test::policy_with(mode, net, deny), mode);
          const Tally t = check_policy(pol);
          BOOST_TEST(t.compared > 0u);
        }
      }
}

BOOST_AUTO_TEST_CASE(overlapping_and_64bit_range_rules_match_the_ir) {
  const Tally t = check_policy(zpolicy::test::tricky_syscalls());
  BOOST_TEST(t.compared > 1000u);
  for (const auto& [why, n] : t.excuses) BOOST_TEST_MESSAGE("libseccomp differs (" << why << "): " << n);
}

BOOST_AUTO_TEST_CASE(docker_profile_matches_ir_and_libseccomp) {
  for (const auto& pol : {zpolicy::test::docker_only(), zpolicy::test::docker_in_sandbox()}) {
    Tally t = check_policy(pol);
    BOOST_TEST(t.compared > 4000u);
    for (const auto& [why, n] : t.excuses) BOOST_TEST_MESSAGE("libseccomp differs (" << why << "): " << n);
  }
}

BOOST_AUTO_TEST_SUITE_END()
