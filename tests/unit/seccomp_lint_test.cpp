#include <boost/test/unit_test.hpp>

#include "compiler/lint/syscall_lint.hpp"
#include "seccomp_test_support.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;

namespace {

std::string lint(ir::SyscallSpec::Style style, std::vector<ir::SyscallRule> rules) {
  ir::SyscallSpec spec;
  spec.style = style;
  spec.rules = std::move(rules);
  ir::Diagnostics d;
  zc::lint_syscall_rules(spec, d);
  return d.str();
}

const ir::SourceLoc kAt{"policy.yaml", 7, 9};
const uint64_t kAll = ~uint64_t{0};

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_lint)

BOOST_AUTO_TEST_CASE(a_deny_of_an_unknown_call_is_an_error) {
  const auto deny = ir::SyscallSpec::Style::DenyList;
  BOOST_TEST(lint(deny, {{"ptrace", ir::Action::errno_(1), {}, kAt}}) == "");
  BOOST_TEST(lint(deny, {{"ptarce", ir::Action::errno_(1), {}, kAt}}) ==
             "policy.yaml:7:9: error: 'ptarce' is not an x86_64 syscall; this deny would match nothing\n");
  // An allow-list may name other arches' calls (Docker's profile does).
  BOOST_TEST(lint(ir::SyscallSpec::Style::AllowList, {{"chown32", ir::Action::allow(), {}, kAt}}) == "");
}

BOOST_AUTO_TEST_CASE(conditions_are_checked_against_the_prototype) {
  const auto deny = ir::SyscallSpec::Style::DenyList;
  BOOST_TEST(lint(deny, {{"getpid", ir::Action::errno_(1), {{0, ir::CmpOp::Eq, 1, kAll}}, kAt}})
                 .find("error: getpid has no argument 0") != std::string::npos);
  BOOST_TEST(lint(deny, {{"socket", ir::Action::errno_(1), {{0, ir::CmpOp::Eq, 40 | (1ull << 32), kAll}}, kAt}})
                 .find("warning: socket argument 0 is 32-bit") != std::string::npos);
  BOOST_TEST(lint(deny, {{"clone", ir::Action::errno_(1), {{0, ir::CmpOp::Eq, 1ull << 40, kAll}}, kAt}}) == "");
  BOOST_TEST(lint(deny, {{"clone", ir::Action::errno_(1), {{0, ir::CmpOp::MaskedEq, 3, 1}}, kAt}})
                 .find("never holds") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_builtin_and_docker_rules_are_clean) {
  BOOST_TEST(lint(ir::SyscallSpec::Style::DenyList, zpolicy::test::default_syscalls().rules) == "");
  const auto docker = zpolicy::test::docker_spec();
  BOOST_TEST(lint(docker.style, docker.rules) == "");
}

BOOST_AUTO_TEST_SUITE_END()
