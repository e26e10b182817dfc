#include <boost/test/unit_test.hpp>

#include <cstring>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "seccomp_test_support.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;
namespace es = zpolicy::emitters::seccomp;

BOOST_AUTO_TEST_SUITE(seccomp_verify)

BOOST_AUTO_TEST_CASE(emitted_filters_verify) {
  for (const auto& p : {zpolicy::test::default_syscalls(), zpolicy::test::docker_only(),
                        zpolicy::test::docker_in_sandbox(), zpolicy::test::tricky_syscalls()}) {
    const std::string bpf = es::emit_bpf(p);
    const auto v = zc::verify_seccomp(p, bpf);
    BOOST_TEST_REQUIRE(v.has_value(), v.error().message);
    BOOST_TEST(v->ok(), (v->findings.empty() ? "" : v->findings[0].report()));
    // The proof accepts them, so verify_seccomp runs no probes; the sweep, its oracle,
    // accepts them too.
    BOOST_TEST(v->probes == 0u);
    const auto sweep = zc::sweep_seccomp(p, *zc::parse_bpf(bpf));
    BOOST_TEST(sweep.ok(), (sweep.findings.empty() ? "" : sweep.findings[0].report()));
    BOOST_TEST(sweep.probes > 4096u);
  }
}

BOOST_AUTO_TEST_CASE(a_filter_that_allows_a_denied_call_is_caught) {
  const auto policy = zpolicy::test::default_syscalls();
  std::string bpf = es::emit_bpf(policy);
  // Turn every errno(1) return into allow.
  for (size_t i = 0; i < bpf.size(); i += 8) {
    uint16_t code;
    uint32_t k;
    std::memcpy(&code, bpf.data() + i, 2);
    std::memcpy(&k, bpf.data() + i + 4, 4);
    if (code == 0x06 && k == 0x00050001u) {
      k = 0x7fff0000u;
      std::memcpy(bpf.data() + i + 4, &k, 4);
    }
  }
  const auto v = zc::verify_seccomp(policy, bpf);
  BOOST_TEST_REQUIRE(v.has_value());
  BOOST_TEST(!v->ok());
  bool ptrace_named = false;
  for (const auto& f : v->findings) {
    BOOST_TEST(f.kind == "dropped-deny");
    BOOST_TEST(f.probe.find("; path 0 ") != std::string::npos, f.probe);
    ptrace_named |= f.probe.find(" ptrace args ") != std::string::npos;
  }
  BOOST_TEST(ptrace_named);
}

BOOST_AUTO_TEST_CASE(a_filter_that_is_not_a_program_is_reported) {
  const auto v = zc::verify_seccomp(zpolicy::test::default_syscalls(), "garbage");
  BOOST_TEST_REQUIRE(!v.has_value());
  BOOST_TEST(!v.error().message.empty());
}

BOOST_AUTO_TEST_SUITE_END()
