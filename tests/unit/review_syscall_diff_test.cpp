// The policy-level syscall comparison (compiler/review/syscall_diff.hpp) on filters built
// by hand: a row is worded by the stricter side's rule only when that rule's words are
// exactly what changed (issue 16: "what was denied and is now allowed").
#include <boost/test/unit_test.hpp>

#include "compiler/review/syscall_diff.hpp"

using namespace zpolicy;
using compiler::review::Difference;
using compiler::review::Direction;

namespace {

ir::SyscallPolicy socket_denied_when(ir::CmpOp op, uint64_t domain, int line) {
  ir::SyscallPolicy p;
  p.rules.push_back({"socket", ir::Action::errno_(1), {{0, op, domain}}, {"p.yaml", line, 3}});
  return p;
}

std::string subjects(const std::vector<Difference>& ds) {
  std::string out;
  for (const auto& d : ds) out += d.subject + "\n";
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(review_syscall_diff)

// Before: socket refused for every domain from AF_INET up; after: for AF_INET6 only. The
// widening is every such domain but AF_INET6, so "socket(domain >= AF_INET)" would say
// AF_INET6 is allowed now, which it is not.
BOOST_AUTO_TEST_CASE(a_narrower_rule_is_not_worded_by_the_wider_one) {
  const auto before = socket_denied_when(ir::CmpOp::Ge, 2, 4);
  const auto after = socket_denied_when(ir::CmpOp::Eq, 10, 5);
  const auto ds =
      compiler::review::diff_syscalls({before, {"p.yaml", 1, 1}}, {after, {"p.yaml", 1, 1}});
  BOOST_TEST_REQUIRE(ds.size() == 1u, subjects(ds));
  BOOST_TEST((ds[0].direction == Direction::Widening));
  BOOST_TEST(ds[0].subject.find("AF_INET6") == std::string::npos, ds[0].subject);
  BOOST_TEST(ds[0].subject.find("socket(AF_INET)") != std::string::npos, ds[0].subject);
  BOOST_TEST(ds[0].before.loc.line == 4);
  // The other way round the narrower rule is the stricter side of nothing: the same
  // values, narrowing.
  const auto back =
      compiler::review::diff_syscalls({after, {"p.yaml", 1, 1}}, {before, {"p.yaml", 1, 1}});
  BOOST_TEST_REQUIRE(back.size() == 1u, subjects(back));
  BOOST_TEST(back[0].subject == ds[0].subject);
}

// Where the rule's words are exactly what changed they are used: the rule dropped.
BOOST_AUTO_TEST_CASE(a_rule_dropped_is_worded_by_its_condition) {
  const auto before = socket_denied_when(ir::CmpOp::Ge, 2, 4);
  const ir::SyscallPolicy after;
  const auto ds =
      compiler::review::diff_syscalls({before, {"p.yaml", 1, 1}}, {after, {"p.yaml", 1, 1}});
  BOOST_TEST_REQUIRE(ds.size() == 1u, subjects(ds));
  BOOST_TEST(
      (ds[0].subject.starts_with("socket(") && ds[0].subject.find(">=") != std::string::npos),
      ds[0].subject);
}

BOOST_AUTO_TEST_SUITE_END()
