#include <boost/test/unit_test.hpp>

#include "compiler/frontend/oci_import.hpp"
#include "compiler/analyzer/seccomp/syscall_decision.hpp"
#include "seccomp_test_support.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;

namespace {

std::vector<const ir::SyscallRule*> rules_for(const ir::SyscallSpec& s, std::string_view name) {
  std::vector<const ir::SyscallRule*> out;
  for (const auto& r : s.rules)
    if (r.name == name) out.push_back(&r);
  return out;
}

std::string import_error(const std::string& json) {
  ir::Diagnostics d;
  const auto spec = zc::import_oci_seccomp(json, "p.json", d);
  BOOST_TEST(!spec.has_value());
  return d.str();
}

ir::Action decide(const ir::SyscallPolicy& p, const char* name, std::array<uint64_t, 6> args = {}) {
  return zc::decide(p, {ir::Arch::X86_64, ir::find_syscall(ir::Arch::X86_64, name)->nr, args});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_oci_import)

BOOST_AUTO_TEST_CASE(docker_profile_becomes_an_allow_list) {
  const auto spec = zpolicy::test::docker_spec();
  BOOST_TEST((spec.style == ir::SyscallSpec::Style::AllowList));
  BOOST_TEST(spec.action.value == ir::Action::errno_(1));
  BOOST_TEST(spec.action.loc.line == 2);
  BOOST_TEST(rules_for(spec, "read").size() == 1u);
  BOOST_TEST(rules_for(spec, "arch_prctl").size() == 1u);   // includes.arches: amd64
  BOOST_TEST(rules_for(spec, "s390_pci_mmio_read").empty());  // another arch
  BOOST_TEST(rules_for(spec, "reboot").empty());  // needs CAP_SYS_BOOT, the sandbox has none
  BOOST_TEST(rules_for(spec, "socket").size() == 3u);
  const auto clone = rules_for(spec, "clone");
  BOOST_REQUIRE_EQUAL(clone.size(), 1u);  // the non-CAP_SYS_ADMIN, non-s390 one
  BOOST_TEST((clone[0]->conditions[0].op == ir::CmpOp::MaskedEq));
  BOOST_TEST(clone[0]->conditions[0].mask == 2114060288u);
  BOOST_TEST(clone[0]->conditions[0].value == 0u);
  const auto clone3 = rules_for(spec, "clone3");
  BOOST_REQUIRE_EQUAL(clone3.size(), 1u);
  BOOST_TEST(clone3[0]->action == ir::Action::errno_(38));
  BOOST_TEST(clone3[0]->loc.file == zpolicy::test::kDockerProfile);
  BOOST_TEST(clone3[0]->loc.line > 0);
}

BOOST_AUTO_TEST_CASE(capabilities_select_conditional_entries) {
  ir::Diagnostics d;
  zc::OciImportOptions opts;
  opts.capabilities = {"CAP_SYS_ADMIN"};
  const auto spec = zc::import_oci_seccomp(
      zpolicy::test::read_text(zpolicy::test::kDockerProfile), "docker.json", d, opts);
  BOOST_REQUIRE(spec.has_value());
  BOOST_TEST(rules_for(*spec, "mount").size() == 1u);
  for (const auto* r : rules_for(*spec, "clone")) BOOST_TEST(r->conditions.empty());
  BOOST_TEST(rules_for(*spec, "clone3").size() == 1u);
  BOOST_TEST(rules_for(*spec, "clone3")[0]->action == ir::Action::allow());
}

BOOST_AUTO_TEST_CASE(imported_profile_decides_like_docker_but_by_int_width) {
  const auto p = zpolicy::test::docker_only();
  BOOST_TEST(decide(p, "read") == ir::Action::allow());
  BOOST_TEST(decide(p, "mount") == ir::Action::errno_(1));
  BOOST_TEST(decide(p, "socket", {2}) == ir::Action::allow());
  BOOST_TEST(decide(p, "socket", {40}) == ir::Action::errno_(1));  // AF_VSOCK
  BOOST_TEST(decide(p, "socket", {40 | (uint64_t{1} << 32)}) == ir::Action::errno_(1));
  BOOST_TEST(decide(p, "personality", {0xffffffff}) == ir::Action::allow());
  BOOST_TEST(decide(p, "personality", {~uint64_t{0}}) == ir::Action::allow());  // int: low word
  BOOST_TEST(decide(p, "clone", {0x10000000}) == ir::Action::errno_(1));      // CLONE_NEWUSER
  BOOST_TEST(decide(p, "clone", {0x11}) == ir::Action::allow());
}

BOOST_AUTO_TEST_CASE(errors_point_at_the_offending_token) {
  BOOST_TEST(import_error(R"({"defaultAction": "SCMP_ACT_ERRNO", "bogus": 1})")
                 .find("p.json:1:46: error: unknown key 'bogus'") != std::string::npos);
  BOOST_TEST(import_error("{\"defaultAction\": \"SCMP_ACT_ERRNO\",\n \"defaultAction\": \"SCMP_ACT_ALLOW\"}")
                 .find("p.json:2:2: error: duplicate key 'defaultAction'") != std::string::npos);
  BOOST_TEST(import_error(R"({"defaultAction": "SCMP_ACT_TRAP"})").find("no zpolicy equivalent") !=
             std::string::npos);
  BOOST_TEST(import_error(R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"],
      "action": "SCMP_ACT_ALLOW", "args": [{"index": 6, "value": 1, "op": "SCMP_CMP_EQ"}]}]})")
                 .find("argument index 0..5") != std::string::npos);
  BOOST_TEST(import_error(R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"],
      "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_LIKE"}]}]})")
                 .find("unknown comparison") != std::string::npos);
  BOOST_TEST(import_error(R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": "read",
      "action": "SCMP_ACT_ALLOW"}]})").find("'names' must be an array") != std::string::npos);
  BOOST_TEST(import_error(R"({"defaultAction": "SCMP_ACT_ERRNO",)").find("p.json:1:36") !=
             std::string::npos);
  BOOST_TEST(import_error("[1, 2]").find("the profile must be an object") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(default_allow_profile_is_a_deny_list) {
  ir::Diagnostics d;
  const auto spec = zc::import_oci_seccomp(
      R"({"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
          "syscalls": [{"names": ["ptrace", "mount"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13},
                       {"name": "kill", "action": "SCMP_ACT_KILL_PROCESS",
                        "args": [{"index": 1, "value": 9, "op": "SCMP_CMP_EQ"}]}]})",
      "p.json", d);
  BOOST_REQUIRE_MESSAGE(spec.has_value(), d.str());
  BOOST_TEST((spec->style == ir::SyscallSpec::Style::DenyList));
  BOOST_REQUIRE_EQUAL(spec->rules.size(), 3u);
  BOOST_TEST(spec->rules[0].action == ir::Action::errno_(13));
  BOOST_TEST(spec->rules[2].action == ir::Action::kill());
  BOOST_TEST(spec->rules[2].loc.line == 3);
}

BOOST_AUTO_TEST_SUITE_END()
