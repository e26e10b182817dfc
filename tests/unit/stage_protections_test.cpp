// Which read-only mounts the bind stage makes in the writable roots' copies
// (runner/stage_protections.hpp, red team E1d): every protected path and deny root below
// a writable bind, once per bind that holds it, at its place relative to that bind.
#include <boost/test/unit_test.hpp>

#include "runner/stage_protections.hpp"

using zpolicy::ir::HostIdentity;
using zpolicy::ir::Resolved;
using zpolicy::ir::ResolvedPath;
using zpolicy::runner::stage_protections;
using zpolicy::runner::WritableBind;

namespace {

ResolvedPath at(const std::string& path, std::uint64_t ino) {
  ResolvedPath p;
  p.path = path;
  p.identity = HostIdentity{7, ino};
  return p;
}

// "fd beneath path ino", one per protection, in order.
std::vector<std::string> listed(const std::vector<WritableBind>& writable, const Resolved& r) {
  std::vector<std::string> out;
  for (const auto& p : stage_protections(writable, r))
    out.push_back(std::to_string(p.copy) + " " + p.beneath + " " + p.path + " " +
                  std::to_string(p.dev) + ":" + std::to_string(p.ino));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(runner_stage_protections)

BOOST_AUTO_TEST_CASE(a_protected_path_below_a_pin_is_protected_in_both_copies) {
  Resolved r;
  r.protect = {at("/w/.git", 11), at("/w/data/agent-sessions", 12)};
  r.deny = {at("/w/secrets", 13), at("/home/u/.ssh", 14)};
  const std::vector<WritableBind> writable = {{6, "/w"}, {7, "/w/data"}};
  const std::vector<std::string> want = {
      "6 .git /w/.git 7:11", "6 data/agent-sessions /w/data/agent-sessions 7:12",
      "6 secrets /w/secrets 7:13", "7 agent-sessions /w/data/agent-sessions 7:12"};
  BOOST_TEST(listed(writable, r) == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(nothing_outside_a_writable_root_nor_the_root_itself_nor_a_missing_path) {
  Resolved r;
  ResolvedPath missing;
  missing.path = "/w/.env";
  r.protect = {at("/w", 1), missing, at("/wx/.git", 2)};
  r.deny = {at("/home/u/.aws", 3)};
  BOOST_TEST(listed({{6, "/w"}}, r).empty());
}

BOOST_AUTO_TEST_CASE(below_a_writable_root_at_the_top_the_place_has_no_leading_slash) {
  Resolved r;
  r.protect = {at("/w/.git", 5)};
  const std::vector<std::string> want = {"9 w/.git /w/.git 7:5"};
  BOOST_TEST(listed({{9, "/"}}, r) == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
