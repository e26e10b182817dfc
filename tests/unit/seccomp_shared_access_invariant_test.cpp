#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <string>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/invariant_probes.hpp"
#include "compiler/analyzer/seccomp/shared_access_invariant.hpp"
#include "compiler/resolve/seccomp_baseline.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "seccomp_test_support.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;
namespace es = zpolicy::emitters::seccomp;
using zpolicy::test::baseline_syscalls;
using zpolicy::test::expect_allow_all_caught;
using zpolicy::test::expect_every_baseline_holds;
using zpolicy::test::findings_report;
using zpolicy::test::names_dropped_deny;

namespace {

std::vector<ir::Diagnostic> shared_findings(const ir::SyscallPolicy& policy) {
  return zc::check_shared_access_invariant(*zc::parse_bpf(es::emit_bpf(policy)));
}

}  // namespace

// Red team A27B-1: no call of the sandbox may give other local users write access to
// what the caller owns (the workspace, the directories holding protected paths).
BOOST_AUTO_TEST_SUITE(seccomp_shared_access_invariant)

BOOST_AUTO_TEST_CASE(emitted_filters_hold_it_in_every_confined_mode_and_action) {
  expect_every_baseline_holds(shared_findings);
}

BOOST_AUTO_TEST_CASE(an_allow_all_program_is_caught_on_every_call_and_abi) {
  expect_allow_all_caught(shared_findings, {"chmod", "fchmod", "fchmodat", "fchmodat2", "setxattr",
                                            "lsetxattr", "fsetxattr", "setxattrat", "removexattr",
                                            "lremovexattr", "fremovexattr", "removexattrat"});
}

// A baseline that lost one rule lets that call through: the check names it.
BOOST_AUTO_TEST_CASE(each_lost_rule_is_named) {
  for (const auto& call : zc::kModeChanges) {
    ir::SyscallPolicy weakened = baseline_syscalls(ir::Mode::WorkspaceWrite);
    const auto before = weakened.rules.size();
    std::erase_if(weakened.rules, [&](const ir::SyscallRule& r) {
      return r.name == call.name && r.conditions.size() == 1 &&
             r.conditions[0].value == zc::kS_IWOTH;
    });
    BOOST_TEST_REQUIRE(weakened.rules.size() == before - 1);
    const auto fs = shared_findings(weakened);
    BOOST_TEST_CONTEXT(call.name) {
      BOOST_TEST(names_dropped_deny(fs, "x86_64 " + std::string(call.name) + "("),
                 findings_report(fs));
    }
  }
  for (auto name : zc::kAttributeChanges) {
    ir::SyscallPolicy weakened = baseline_syscalls(ir::Mode::WorkspaceWrite);
    std::erase_if(weakened.rules, [&](const ir::SyscallRule& r) { return r.name == name; });
    const auto fs = shared_findings(weakened);
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(names_dropped_deny(fs, "x86_64 " + std::string(name) + "("), findings_report(fs));
    }
  }
}

// Modes without S_IWOTH stay allowed: `chmod +x` after a umask of 002 (0775), 0700.
BOOST_AUTO_TEST_CASE(modes_without_write_for_others_are_let_through) {
  const auto prog = *zc::parse_bpf(es::emit_bpf(baseline_syscalls(ir::Mode::WorkspaceWrite)));
  const ir::SyscallInfo* fchmodat = ir::find_syscall(ir::Arch::X86_64, "fchmodat");
  BOOST_TEST_REQUIRE(fchmodat);
  for (uint64_t mode : {0775u, 0755u, 0700u, 0644u, 01775u}) {
    zc::SeccompData call{};
    call.nr = fchmodat->nr;
    call.arch = ir::audit_arch(ir::Arch::X86_64);
    call.args[0] = 0xffffff9c;
    call.args[1] = 0x1000;
    call.args[2] = mode;
    BOOST_TEST(!zc::refuses(zc::run_bpf(prog, call).ret), std::oct << mode);
  }
}

BOOST_AUTO_TEST_SUITE_END()
