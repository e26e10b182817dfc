#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <string>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/invariant_probes.hpp"
#include "compiler/analyzer/seccomp/keyring_invariant.hpp"
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

std::vector<ir::Diagnostic> keyring_findings(const ir::SyscallPolicy& policy) {
  return zc::check_keyring_invariant(*zc::parse_bpf(es::emit_bpf(policy)));
}

zc::SeccompData ioctl_call(uint64_t command) {
  const ir::SyscallInfo* ioctl = ir::find_syscall(ir::Arch::X86_64, "ioctl");
  BOOST_TEST_REQUIRE(ioctl);
  zc::SeccompData call{};
  call.nr = ioctl->nr;
  call.arch = ir::audit_arch(ir::Arch::X86_64);
  call.args[0] = 3;
  call.args[1] = command;
  call.args[2] = 0x1000;
  return call;
}

}  // namespace

// Red team A28C-1: no kernel key outlives the sandbox through it, a filesystem's
// encryption keyring (reached by ioctl on any file, a read-only one too) included.
BOOST_AUTO_TEST_SUITE(seccomp_keyring_invariant)

BOOST_AUTO_TEST_CASE(emitted_filters_hold_it_in_every_confined_mode_and_action) {
  expect_every_baseline_holds(keyring_findings);
}

BOOST_AUTO_TEST_CASE(an_allow_all_program_is_caught_on_every_call_and_abi) {
  expect_allow_all_caught(keyring_findings, {"keyctl", "add_key", "request_key", "ioctl"});
}

// A baseline that lost one fscrypt rule lets that command through: the check names it.
BOOST_AUTO_TEST_CASE(each_lost_fscrypt_rule_is_named) {
  for (uint64_t command : zc::kFscryptChanges) {
    ir::SyscallPolicy weakened = baseline_syscalls(ir::Mode::ReadOnly);
    const auto before = weakened.rules.size();
    std::erase_if(weakened.rules, [&](const ir::SyscallRule& r) {
      return r.name == "ioctl" && r.conditions.size() == 1 && r.conditions[0].value == command;
    });
    BOOST_TEST_REQUIRE(weakened.rules.size() == before - 1);
    const auto fs = keyring_findings(weakened);
    char hex[24];
    std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(command));
    BOOST_TEST_CONTEXT(hex) {
      BOOST_TEST(names_dropped_deny(fs, "x86_64 ioctl(0x3, " + std::string(hex)),
                 findings_report(fs));
    }
  }
}

// Reading the encryption state stays allowed: FS_IOC_GET_ENCRYPTION_POLICY(_EX),
// FS_IOC_GET_ENCRYPTION_KEY_STATUS, FS_IOC_GET_ENCRYPTION_NONCE (what `ls`, `fscrypt
// status` and backup tools ask); the changes answer EOPNOTSUPP in every action.
BOOST_AUTO_TEST_CASE(reads_pass_and_changes_answer_eopnotsupp) {
  for (auto deny : {ir::Action::errno_(1), ir::Action::kill()}) {
    const auto prog = *zc::parse_bpf(es::emit_bpf(baseline_syscalls(ir::Mode::ReadOnly, deny)));
    for (uint64_t read : {0x400c6615u, 0xc0096616u, 0xc080661au, 0x8010661bu})
      BOOST_TEST(!zc::refuses(zc::run_bpf(prog, ioctl_call(read)).ret), std::hex << read);
    for (uint64_t change : zc::kFscryptChanges)
      BOOST_TEST(zc::run_bpf(prog, ioctl_call(change)).ret == (0x00050000u | zc::kEOPNOTSUPP),
                 std::hex << change);
  }
}

BOOST_AUTO_TEST_SUITE_END()
