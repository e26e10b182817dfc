// The public API (include/zpolicy/zpolicy.hpp and its C form zpolicy.h): the results an
// embedder sees, with the same exit codes and located diagnostics as the command line.
#include <boost/test/unit_test.hpp>

#include "zpolicy/zpolicy.h"
#include "zpolicy/zpolicy.hpp"

namespace {

std::vector<std::string> names_of(const zpolicy::Result& r) {
  std::vector<std::string> names;
  for (const auto& a : r.artifacts) names.push_back(a.name);
  return names;
}

zpolicy::Request text(const std::string& yaml) {
  zpolicy::Request r;
  r.policy_text = yaml;
  r.policy_name = "p.yaml";
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(api)

BOOST_AUTO_TEST_CASE(compile_gives_every_artifact_of_the_target_and_no_diagnostics) {
  auto for_linux = zpolicy::compile({}, zpolicy::Target::Linux);
  BOOST_TEST(for_linux.exit_code == 0);
  BOOST_TEST(for_linux.diagnostics.empty());
  BOOST_TEST(names_of(for_linux) == (std::vector<std::string>{"bwrap.args", "seccomp.bpf", "seccomp.txt"}),
             boost::test_tools::per_element());
  auto macos = zpolicy::compile(text(zpolicy::default_policy_text()), zpolicy::Target::Macos);
  BOOST_TEST(macos.exit_code == 0);
  BOOST_TEST(names_of(macos) == (std::vector<std::string>{"profile.sb", "params.txt"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_invalid_policy_is_exit_2_with_its_location_and_no_artifact) {
  auto r = zpolicy::compile(text("zpolicy: 1\nnetwrok: none\n"), zpolicy::Target::Linux);
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.artifacts.empty());
  BOOST_REQUIRE(!r.diagnostics.empty());
  const auto& d = r.diagnostics.front();
  BOOST_TEST(d.file == "p.yaml");
  BOOST_TEST(d.line == 2);
  BOOST_TEST(d.column == 1);
  BOOST_TEST((d.severity == zpolicy::Severity::Error));
  BOOST_TEST(d.str().rfind("p.yaml:2:1: error: unknown key 'netwrok'", 0) == 0, d.str());
  BOOST_TEST(zpolicy::compile(text("zpolicy: 1\nmode: workspace-write\n"), zpolicy::Target::Linux).exit_code == 0);
}

BOOST_AUTO_TEST_CASE(a_mode_wider_than_the_ceiling_is_refused) {
  zpolicy::Request r;
  r.mode = "danger-full-access";
  BOOST_TEST(zpolicy::compile(r, zpolicy::Target::Linux).exit_code == 2);
  r.mode = "read-only";
  BOOST_TEST(zpolicy::compile(r, zpolicy::Target::Linux).exit_code == 0);
}

BOOST_AUTO_TEST_CASE(check_reports_lints_with_their_codes_and_fails_on_errors) {
  auto home = zpolicy::check(text("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"~\"]\n"));
  BOOST_TEST(home.exit_code == 3);
  bool zp003 = false;
  for (const auto& d : home.diagnostics) zp003 |= d.code == "ZP003" && d.line == 4;
  BOOST_TEST(zp003);
  BOOST_TEST(zpolicy::check({}).exit_code == 0);
}

BOOST_AUTO_TEST_CASE(verify_judges_artifacts_by_what_they_do) {
  auto compiled = zpolicy::compile({}, zpolicy::Target::Linux);
  BOOST_TEST(zpolicy::verify({}, zpolicy::Target::Linux, compiled.artifacts).exit_code == 0);
  auto widened = compiled.artifacts;
  for (auto& a : widened)
    if (a.name == "bwrap.args") a.content += "--bind\n/\n/\n";
  auto r = zpolicy::verify({}, zpolicy::Target::Linux, widened);
  BOOST_TEST(r.exit_code == 3);
  BOOST_REQUIRE(!r.diagnostics.empty());
  bool traced_dropped_deny = false;
  for (const auto& d : r.diagnostics) {
    BOOST_TEST(d.code == "verify-linux");
    traced_dropped_deny |= d.message.find("dropped-deny: write /zpolicy-probe") != std::string::npos &&
                           !d.trace.empty();
  }
  BOOST_TEST(traced_dropped_deny);
}

BOOST_AUTO_TEST_CASE(the_c_api_gives_the_same_results) {
  BOOST_TEST(std::string(zpolicy_version()) == ZPOLICY_VERSION);
  zpolicy_request* req = zpolicy_request_new();
  BOOST_REQUIRE(req);
  auto* compiled = zpolicy_compile(req, ZPOLICY_TARGET_LINUX);
  BOOST_REQUIRE(compiled);
  BOOST_TEST(zpolicy_result_exit_code(compiled) == 0);
  BOOST_TEST(zpolicy_result_artifact_count(compiled) == 3u);
  size_t length = 0;
  const char* bpf = zpolicy_result_artifact_data(compiled, 1, &length);
  BOOST_TEST(std::string(zpolicy_result_artifact_name(compiled, 1)) == "seccomp.bpf");
  BOOST_TEST(bpf != nullptr);
  BOOST_TEST(length % 8 == 0u);
  BOOST_TEST(zpolicy_result_artifact_name(compiled, 3) == nullptr);

  const char* names[3];
  const char* contents[3];
  size_t lengths[3];
  for (size_t i = 0; i < 3; ++i) {
    names[i] = zpolicy_result_artifact_name(compiled, i);
    contents[i] = zpolicy_result_artifact_data(compiled, i, &lengths[i]);
  }
  auto* verified = zpolicy_verify(req, ZPOLICY_TARGET_LINUX, names, contents, lengths, 3);
  BOOST_TEST(zpolicy_result_exit_code(verified) == 0);
  zpolicy_result_free(verified);
  zpolicy_result_free(compiled);

  const std::string bad = "zpolicy: 1\nmode: sideways\n";
  BOOST_TEST(zpolicy_request_set_policy_text(req, bad.data(), bad.size(), "bad.yaml") == 0);
  BOOST_TEST(zpolicy_request_set_mode(req, nullptr) == -1);
  auto* invalid = zpolicy_check(req);
  BOOST_TEST(zpolicy_result_exit_code(invalid) == 2);
  BOOST_REQUIRE(zpolicy_result_diagnostic_count(invalid) >= 1u);
  BOOST_TEST(std::string(zpolicy_result_diagnostic_file(invalid, 0)) == "bad.yaml");
  BOOST_TEST(zpolicy_result_diagnostic_line(invalid, 0) == 2);
  BOOST_TEST(zpolicy_result_diagnostic_severity(invalid, 0) == ZPOLICY_ERROR);
  BOOST_TEST(std::string(zpolicy_result_diagnostic_text(invalid, 0)).rfind("bad.yaml:2:", 0) == 0);
  BOOST_TEST(zpolicy_result_diagnostic_line(invalid, 99) == -1);
  zpolicy_result_free(invalid);
  zpolicy_request_free(req);
  BOOST_TEST(zpolicy_compile(nullptr, ZPOLICY_TARGET_LINUX) == nullptr);
}

BOOST_AUTO_TEST_SUITE_END()
