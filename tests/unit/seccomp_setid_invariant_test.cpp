#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "compiler/analyzer/seccomp/setid_invariant.hpp"
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

std::vector<ir::Diagnostic> setid_findings(const ir::SyscallPolicy& policy) {
  return zc::check_setid_invariant(*zc::parse_bpf(es::emit_bpf(policy)));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_setid_invariant)

BOOST_AUTO_TEST_CASE(emitted_filters_hold_it_in_every_confined_mode_and_action) {
  expect_every_baseline_holds(setid_findings);
}

BOOST_AUTO_TEST_CASE(an_allow_all_program_is_caught_on_every_call_and_abi) {
  expect_allow_all_caught(setid_findings,
                          {"chmod", "fchmod", "fchmodat", "fchmodat2", "open", "openat", "creat",
                           "mknod", "mknodat", "mkdir", "mkdirat", "openat2"});
}

// A baseline that lost one rule (one call, one bit) lets that call through with that
// bit: the check names it, and the IR comparison sees the same dropped deny.
BOOST_AUTO_TEST_CASE(each_lost_rule_is_named) {
  for (const auto& call : zc::kModeArguments)
    for (uint64_t bit : {zc::kS_ISUID, zc::kS_ISGID}) {
      ir::SyscallPolicy weakened = baseline_syscalls(ir::Mode::WorkspaceWrite);
      const auto before = weakened.rules.size();
      std::erase_if(weakened.rules, [&](const ir::SyscallRule& r) {
        return r.name == call.name && r.conditions.size() == 1 && r.conditions[0].value == bit;
      });
      BOOST_TEST_REQUIRE(weakened.rules.size() == before - 1);
      const auto fs = setid_findings(weakened);
      BOOST_TEST_CONTEXT(call.name << " " << bit) {
        BOOST_TEST(names_dropped_deny(fs, "x86_64 " + std::string(call.name) + "("),
                   findings_report(fs));
      }
    }
  ir::SyscallPolicy weakened = baseline_syscalls(ir::Mode::WorkspaceWrite);
  std::erase_if(weakened.rules, [](const ir::SyscallRule& r) { return r.name == "openat2"; });
  BOOST_TEST(
      names_dropped_deny(setid_findings(weakened), "x86_64 openat2("));
}

// A rule that compares the whole 64-bit mode (or the mode with the file type bits) for
// equality holds for 04755 but misses the same bit with high garbage or S_IFREG set,
// which the kernel reads as the same mode.
BOOST_AUTO_TEST_CASE(an_exact_value_rule_is_caught_by_the_odd_encodings) {
  ir::SyscallPolicy weakened = baseline_syscalls(ir::Mode::WorkspaceWrite);
  std::erase_if(weakened.rules, [](const ir::SyscallRule& r) { return r.name == "mknod"; });
  for (uint64_t m : {04000, 02000, 06000, 04755, 02755, 06755})
    weakened.rules.push_back({"mknod", ir::Action::errno_(1), {{1, ir::CmpOp::Eq, m, ~0ull}}, {}});
  const auto fs = setid_findings(weakened);
  BOOST_TEST(names_dropped_deny(fs, "x86_64 mknod("), findings_report(fs));
}

BOOST_AUTO_TEST_CASE(ordinary_modes_stay_allowed) {
  // The rules refuse only the two bits: chmod 0755 and an ordinary creat pass, and so do
  // creat and mkdir with 01777 (chmod with it gives others write, A27B-1's rule).
  const auto p = baseline_syscalls(ir::Mode::WorkspaceWrite);
  const std::string bpf = es::emit_bpf(p);
  const auto program = zc::parse_bpf(bpf);
  BOOST_TEST_REQUIRE(program.has_value(), program.error().message);
  auto answer = [&](const char* name, std::array<uint64_t, 6> args) {
    const auto* info = ir::find_syscall(ir::Arch::X86_64, name);
    const auto run = zc::run_bpf(*program, {info->nr, ir::kAuditArchX86_64, 0, args}, nullptr);
    const auto action = zc::decode_seccomp_ret(run.ret);
    return action ? action->str() : std::string("undecodable");
  };
  for (uint64_t mode : {0755, 0644, 0100755, 0})
    for (const char* call : {"chmod", "fchmod", "creat", "mkdir"})
      BOOST_TEST(answer(call, {0x1000, mode}) == "allow");
  for (const char* call : {"creat", "mkdir"}) BOOST_TEST(answer(call, {0x1000, 01777}) == "allow");
  BOOST_TEST(answer("openat", {0xffffff9c, 0x1000, 0101, 0644}) == "allow");
  BOOST_TEST(answer("openat", {0xffffff9c, 0x1000, 0, 0}) == "allow");
  BOOST_TEST(answer("openat2", {}) == "errno(38)");
}

BOOST_AUTO_TEST_SUITE_END()
