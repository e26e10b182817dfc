#include <algorithm>
#include <array>
#include <boost/test/unit_test.hpp>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/invariant_probes.hpp"
#include "compiler/analyzer/seccomp/network_invariant.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "seccomp_test_support.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;
namespace es = zpolicy::emitters::seccomp;
using zpolicy::test::findings_report;
using zpolicy::test::names_dropped_deny;

namespace {

ir::Resolved resolved(ir::Mode mode, ir::Network net) {
  ir::Resolved r;
  r.mode = mode;
  r.network = net;
  r.syscalls = zc::effective_syscalls(zpolicy::test::policy_with(mode, net), mode);
  return r;
}

// The resolved policy with the rules `drop` matches taken out of its IR, as a baseline
// that lost them would have it; the artifact is emitted from that IR.
std::vector<ir::Diagnostic> network_findings(const ir::Resolved& r, const std::string& bpf) {
  return zc::check_network_invariant(r, *zc::parse_bpf(bpf));
}

template <class Drop>
std::string emitted_without(const ir::Resolved& r, Drop drop) {
  ir::SyscallPolicy weakened = r.syscalls;
  std::erase_if(weakened.rules, drop);
  return es::emit_bpf(weakened);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_network_invariant)

BOOST_AUTO_TEST_CASE(emitted_filters_hold_it_and_full_network_has_none) {
  for (auto net : {ir::Network::None, ir::Network::Loopback, ir::Network::Full})
    for (auto mode : {ir::Mode::WorkspaceWrite, ir::Mode::ReadOnly}) {
      const auto r = resolved(mode, net);
      const auto fs = network_findings(r, es::emit_bpf(r.syscalls));
      BOOST_TEST(fs.empty(), findings_report(fs));
    }
  // Under `full` even an allow-all program is no finding.
  const auto full = resolved(ir::Mode::WorkspaceWrite, ir::Network::Full);
  ir::SyscallPolicy allow_all;
  BOOST_TEST(network_findings(full, es::emit_bpf(allow_all)).empty());
}

// A baseline that lost the type rules: the datagram pair is let through. Both checks
// catch it: the IR-independent one, and the IR comparison, whose probes include the
// values around the type masks (SOCK_DGRAM among them).
BOOST_AUTO_TEST_CASE(a_datagram_socketpair_is_a_dropped_deny) {
  for (auto net : {ir::Network::None, ir::Network::Loopback}) {
    const auto r = resolved(ir::Mode::WorkspaceWrite, net);
    const std::string bpf = emitted_without(r, [](const ir::SyscallRule& rule) {
      return rule.name == "socketpair" &&
             std::any_of(rule.conditions.begin(), rule.conditions.end(),
                         [](const ir::ArgCondition& c) { return c.index == 1; });
    });
    const auto fs = network_findings(r, bpf);
    BOOST_TEST(names_dropped_deny(fs, "x86_64 socketpair(0x1, 0x2,"), findings_report(fs));
    const auto v = zc::verify_seccomp(r.syscalls, bpf);
    BOOST_TEST_REQUIRE(v.has_value());
    BOOST_TEST_REQUIRE(!v->ok());
    BOOST_TEST(v->findings[0].kind == "dropped-deny");
    BOOST_TEST(v->findings[0].probe.find(" socketpair args ") != std::string::npos,
               v->findings[0].probe);
  }
}

BOOST_AUTO_TEST_CASE(each_lost_network_rule_is_named) {
  struct Case {
    ir::Network net;
    const char* rule;
    const char* probe;
  };
  const Case cases[] = {
      {ir::Network::None, "socket", "x86_64 socket(0x1, 0x1,"},
      {ir::Network::Loopback, "socket", "x86_64 socket(0x1, 0x1,"},
      {ir::Network::None, "connect", "x86_64 connect("},
      {ir::Network::None, "sendto", "x86_64 sendto("},
      {ir::Network::None, "io_uring_setup", "x86_64 io_uring_setup("},
      {ir::Network::Loopback, "io_uring_enter", "x86_64 io_uring_enter("},
  };
  for (const auto& c : cases) {
    const auto r = resolved(ir::Mode::WorkspaceWrite, c.net);
    const auto fs = network_findings(
        r, emitted_without(r, [&](const ir::SyscallRule& rule) { return rule.name == c.rule; }));
    BOOST_TEST_CONTEXT(c.probe) {
      BOOST_TEST(names_dropped_deny(fs, c.probe), findings_report(fs));
    }
  }
}

// Red team A28C-2: under `loopback` an AF_INET socket of a protocol the kernel does not have
// built in makes it ask modprobe for a module; each of the two rules lost is named.
BOOST_AUTO_TEST_CASE(a_socket_the_kernel_would_load_a_module_for_is_a_dropped_deny) {
  const auto r = resolved(ir::Mode::WorkspaceWrite, ir::Network::Loopback);
  const std::string no_protocols = emitted_without(r, [](const ir::SyscallRule& rule) {
    return rule.name == "socket" && !rule.conditions.empty() && rule.conditions[0].index == 2;
  });
  auto fs = network_findings(r, no_protocols);
  BOOST_TEST(names_dropped_deny(fs, "x86_64 socket(0x2, 0x1, 0x84,"), findings_report(fs));
  const std::string no_packet = emitted_without(r, [](const ir::SyscallRule& rule) {
    return rule.name == "socket" && !rule.conditions.empty() && rule.conditions[0].index == 1;
  });
  fs = network_findings(r, no_packet);
  BOOST_TEST(names_dropped_deny(fs, "x86_64 socket(0x2, 0xa, 0,"), findings_report(fs));
}

// The protocols the kernel has built in stay allowed under `loopback`: TCP, UDP, ping
// sockets, MPTCP, each by number or as the type's default.
BOOST_AUTO_TEST_CASE(built_in_protocols_are_let_through_under_loopback) {
  const auto r = resolved(ir::Mode::WorkspaceWrite, ir::Network::Loopback);
  const auto prog = *zc::parse_bpf(es::emit_bpf(r.syscalls));
  const ir::SyscallInfo* socket = ir::find_syscall(ir::Arch::X86_64, "socket");
  BOOST_TEST_REQUIRE(socket);
  const std::array<uint64_t, 3> calls[] = {{2, 1, 0},   {2, 1, 6},   {10, 1, 6},
                                           {2, 2, 17},  {10, 2, 0},  {2, 2, 1},
                                           {10, 2, 58}, {2, 1, 262}, {2, 0x80801, 0}};
  for (const auto& c : calls) {
    zc::SeccompData call{};
    call.nr = socket->nr;
    call.arch = ir::audit_arch(ir::Arch::X86_64);
    call.args = {c[0], c[1], c[2], 0, 0, 0};
    BOOST_TEST(!zc::refuses(zc::run_bpf(prog, call).ret), c[0] << " " << c[1] << " " << c[2]);
  }
}

// The foreign ABIs answer kill; a program that let them through would let i386
// socketcall and x32 socketpair through as well.
BOOST_AUTO_TEST_CASE(foreign_abis_are_probed) {
  auto r = resolved(ir::Mode::WorkspaceWrite, ir::Network::None);
  ir::SyscallPolicy open = r.syscalls;
  open.foreign_abi_action = ir::Action::allow();
  const auto fs = network_findings(r, es::emit_bpf(open));
  BOOST_TEST(names_dropped_deny(fs, "i386 socketcall"), findings_report(fs));
  BOOST_TEST(names_dropped_deny(fs, "x32 socketpair("), findings_report(fs));
}

BOOST_AUTO_TEST_SUITE_END()
