#include <boost/test/unit_test.hpp>

#include "bench/seccomp/seccomp_cache_rule.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "seccomp_test_support.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;

namespace {

std::vector<zc::BpfInsn> program(const ir::SyscallPolicy& p) {
  auto prog = zc::parse_bpf(zpolicy::emitters::seccomp::emit_bpf(p));
  BOOST_REQUIRE_MESSAGE(prog.has_value(), prog.error().message);
  return *prog;
}

// From the IR alone: the call is allowed whatever its arguments.
bool always_allowed(const ir::SyscallPolicy& p, std::string_view name) {
  bool unconditional_allow = p.default_action == ir::Action::allow();
  for (const auto& r : p.rules) {
    if (r.name != name) continue;
    if (r.action != ir::Action::allow()) return false;
    if (r.conditions.empty()) unconditional_allow = true;
  }
  return unconditional_allow;
}

// Every syscall the policy allows unconditionally is one the kernel caches, and the
// kernel caches nothing else: not a call the policy restricts by argument, not an i386
// or x32 call.
void check_cache(const ir::SyscallPolicy& p, size_t at_least) {
  const auto prog = program(p);
  size_t cached = 0;
  for (const auto& s : ir::syscall_table(ir::Arch::X86_64)) {
    const bool want = always_allowed(p, s.name);
    const bool got = zc::seccomp_is_const_allow(prog, ir::kAuditArchX86_64, s.nr);
    BOOST_TEST(got == want, s.name << ": kernel cache " << got << ", IR always-allowed " << want);
    cached += got;
  }
  for (uint32_t nr = 0; nr < 1024; ++nr) {
    BOOST_TEST(!zc::seccomp_is_const_allow(prog, ir::kAuditArchI386, nr));
    BOOST_TEST(!zc::seccomp_is_const_allow(prog, ir::kAuditArchX86_64, nr | ir::kX32SyscallBit));
  }
  BOOST_TEST(cached >= at_least);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_cache)

BOOST_AUTO_TEST_CASE(default_policy_allowed_calls_are_cacheable) {
  check_cache(zpolicy::test::default_syscalls(), 300);
}

BOOST_AUTO_TEST_CASE(docker_profile_allowed_calls_are_cacheable) {
  check_cache(zpolicy::test::docker_only(), 250);
  check_cache(zpolicy::test::docker_in_sandbox(), 250);
}

BOOST_AUTO_TEST_CASE(overlapping_rules_are_cacheable_where_unconditional) {
  check_cache(zpolicy::test::tricky_syscalls(), 6);
}

// The port itself, on programs written by hand.
BOOST_AUTO_TEST_CASE(cache_rule_follows_the_kernel) {
  const uint32_t x86 = ir::kAuditArchX86_64;
  const std::vector<zc::BpfInsn> dispatch = {
      {0x20, 0, 0, 4},            // ld arch
      {0x15, 1, 0, x86},          // jeq x86_64
      {0x06, 0, 0, 0x80000000u},  // ret kill
      {0x20, 0, 0, 0},            // ld nr
      {0x54, 0, 0, 0xff},         // and #0xff
      {0x45, 2, 0, 0x100},        // jset 0x100 (never after the and)
      {0x15, 2, 0, 3},            // jeq 3
      {0x05, 0, 0, 1},            // ja +1
      {0x06, 0, 0, 0x50001},      // ret errno
      {0x06, 0, 0, 0x7fff0000u},  // ret allow
  };
  BOOST_TEST(zc::seccomp_is_const_allow(dispatch, x86, 3));
  BOOST_TEST(zc::seccomp_is_const_allow(dispatch, x86, 0x103));  // and #0xff makes it 3
  BOOST_TEST(zc::seccomp_is_const_allow(dispatch, x86, 4));      // ja lands on allow
  BOOST_TEST(!zc::seccomp_is_const_allow(dispatch, ir::kAuditArchI386, 3));
  std::vector<zc::BpfInsn> arg_first = dispatch;
  arg_first.insert(arg_first.begin(), {0x20, 0, 0, 16});  // ld args[0] before anything
  BOOST_TEST(!zc::seccomp_is_const_allow(arg_first, x86, 3));
  std::vector<zc::BpfInsn> by_x = {{0x20, 0, 0, 0}, {0x1d, 0, 0, 0}, {0x06, 0, 0, 0x7fff0000u}};
  BOOST_TEST(!zc::seccomp_is_const_allow(by_x, x86, 0));  // jeq x is not emulated
}

BOOST_AUTO_TEST_SUITE_END()
