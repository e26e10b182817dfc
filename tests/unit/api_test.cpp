// The public API (include/zpolicy/zpolicy.hpp and its C form zpolicy.h): the results an
// embedder sees, with the same exit codes and located diagnostics as the command line.
#include <boost/test/unit_test.hpp>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "zpolicy/json.hpp"
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

// The review in C: the table as the one artifact, diff's and check --within's exit codes.
BOOST_AUTO_TEST_CASE(the_c_api_diffs_and_checks_a_ceiling) {
  const std::string old_text = zpolicy::default_policy_text();
  std::string new_text = old_text;
  new_text.replace(new_text.find("network: none"), 13, "network: full");
  auto* before = zpolicy_request_new();
  auto* after = zpolicy_request_new();
  BOOST_TEST(zpolicy_request_set_policy_text(before, old_text.data(), old_text.size(), "old.yaml") == 0);
  BOOST_TEST(zpolicy_request_set_policy_text(after, new_text.data(), new_text.size(), "new.yaml") == 0);
  auto* same = zpolicy_diff(before, before, nullptr, 0);
  BOOST_TEST(zpolicy_result_exit_code(same) == 0);
  BOOST_TEST(std::string(zpolicy_result_artifact_name(same, 0)) == "diff.txt");
  zpolicy_result_free(same);
  auto* widened = zpolicy_diff(before, after, "json", 1);
  BOOST_TEST(zpolicy_result_exit_code(widened) == 1);
  size_t length = 0;
  const std::string json = zpolicy_result_artifact_data(widened, 0, &length);
  BOOST_TEST(std::string(zpolicy_result_artifact_name(widened, 0)) == "diff.json");
  BOOST_TEST(json.find("\"widening\"") != std::string::npos, json);
  zpolicy_result_free(widened);
  auto* narrowed = zpolicy_diff(after, before, "markdown", 1);
  BOOST_TEST(zpolicy_result_exit_code(narrowed) == 0);
  BOOST_TEST(std::string(zpolicy_result_artifact_name(narrowed, 0)) == "diff.md");
  zpolicy_result_free(narrowed);
  auto* escapes = zpolicy_check_within(after, before, "text");
  BOOST_TEST(zpolicy_result_exit_code(escapes) == 3);
  zpolicy_result_free(escapes);
  auto* bad_format = zpolicy_diff(before, after, "yaml", 0);
  BOOST_TEST(zpolicy_result_exit_code(bad_format) == 2);
  BOOST_TEST(std::string(zpolicy_result_diagnostic_message(bad_format, 0)) ==
             "invalid format 'yaml' (expected text, json or markdown)");
  BOOST_TEST(zpolicy_result_artifact_count(bad_format) == 0u);
  zpolicy_result_free(bad_format);
  BOOST_TEST(zpolicy_diff(nullptr, after, nullptr, 0) == nullptr);
  zpolicy_request_free(before);
  zpolicy_request_free(after);
}

BOOST_AUTO_TEST_CASE(explain_answers_each_target_with_the_rule_and_the_trace) {
  auto e = zpolicy::explain({}, "${WORKSPACE}/.git/config", "write");
  BOOST_TEST(e.exit_code == 0);
  BOOST_TEST(e.query == "write ${WORKSPACE}/.git/config");
  BOOST_REQUIRE(e.answers.size() == 2u);
  BOOST_TEST(std::string(to_string(e.answers[0].target)) == "linux");
  BOOST_TEST(e.answers[0].rule.find("protected path ${WORKSPACE}/.git") != std::string::npos,
             e.answers[0].rule);
  BOOST_TEST(!e.answers[0].trace.empty());
  BOOST_TEST(std::string(to_string(e.answers[1].target)) == "macos");
  auto bad = zpolicy::explain({}, "a/../b", "sideways", std::string("plan9"));
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(bad.answers.empty());
  BOOST_TEST(bad.diagnostics.size() == 3u);
  // A shell variable quoted by mistake is named as one; the name itself stays askable.
  auto shell = zpolicy::explain({}, "$HOME/.git/config", "write");
  BOOST_TEST(shell.exit_code == 2);
  BOOST_REQUIRE(shell.diagnostics.size() == 1u);
  BOOST_TEST(shell.diagnostics[0].message.find("spelled ${NAME}") != std::string::npos,
             shell.diagnostics[0].message);
}

// What an executor reads: one strict JSON document, and bytes that are not UTF-8 as
// base64 so that an argv or environment entry reaches the backend exactly.
BOOST_AUTO_TEST_CASE(plan_json_is_strict_json_with_exact_bytes) {
  zpolicy::Plan plan;
  plan.backend = "bwrap";
  plan.exe = "/usr/bin/bwrap";
  plan.argv = {"/usr/bin/bwrap", "--bind", "/ws\xff", "/ws\xff", "--", "/bin/true"};
  plan.env = {"PATH=/usr/bin", "LANG=C.UTF-8"};
  plan.cwd = "/ws\xff";
  plan.exe_env = {};
  plan.fds = {{3, "seccomp.bpf", std::string("\x06\x00\x00\x00\xff", 5), "release"},
              {7, "environment", std::string("--clearenv\0", 11), "start"}};
  plan.status_fd = 4;
  plan.placeholders = {{"/ws\xff/.git", "/ws\xff"}};
  plan.timeout_ms = 1500;
  plan.binds = {{5, "/ws\xff", 2049, 77}, {6, "/ws\xff/.git", std::nullopt, std::nullopt}};
  plan.watches = {{"/ws\xff", ".git", "/ws\xff/.git", "replaced"}};
  plan.missing_deny_roots = {"/h\xff/.aws"};
  plan.notify_share = zpolicy::PlanNotifyShare{32, 2048, 32, 4096};
  plan.private_mounts = true;
  zpolicy::test::TempDir dir;
  dir.write("plan.json", zpolicy::plan_json(plan));
  auto r = zpolicy::test::run_process(
      {"/usr/bin/python3", "-c",
       "import base64,json,sys\n"
       "p=json.loads(open(sys.argv[1],'rb').read().decode('utf-8','strict'))\n"
       "raw=lambda v: base64.b64decode(v['base64']) if isinstance(v,dict) else v.encode()\n"
       "print(p['zpolicy_plan'], p['backend'], raw(p['cwd']), [raw(a) for a in p['argv'][2:4]],"
       " raw(p['fds'][0]['content']), p['fds'][0]['fd'], p['status_fd'], p['timeout_ms'],"
       " raw(p['placeholders'][0]['path']), p['env'], p['exe_env'],"
       " [(f['artifact'], f['when'], raw(f['content'])) for f in p['fds']],"
       " [(b['fd'], raw(b['path']), b['dev'], b['ino']) for b in p['binds']],"
       " [(raw(w['directory']), w['name'], raw(w['protects']), w['on']) for w in p['watches']],"
       " [raw(d) for d in p['missing_deny_roots']], p['notify_share'], p['private_mounts'])\n",
       dir.str() + "/plan.json"},
      dir.str(), dir.str());
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out ==
             "7 bwrap b'/ws\\xff' [b'/ws\\xff', b'/ws\\xff'] b'\\x06\\x00\\x00\\x00\\xff' 3 4 1500 "
             "b'/ws\\xff/.git' ['PATH=/usr/bin', 'LANG=C.UTF-8'] [] "
             "[('seccomp.bpf', 'release', b'\\x06\\x00\\x00\\x00\\xff'), "
             "('environment', 'start', b'--clearenv\\x00')] "
             "[(5, b'/ws\\xff', 2049, 77), (6, b'/ws\\xff/.git', None, None)] "
             "[(b'/ws\\xff', '.git', b'/ws\\xff/.git', 'replaced')] [b'/h\\xff/.aws'] "
             "{'inotify_instances': 32, 'inotify_watches': 2048, 'fanotify_groups': 32, "
             "'fanotify_marks': 4096} True\n");
}

// Under an allow list the plan says that a proxy is needed, what it admits and where it
// listens (docs/embedding.md "The network proxy"); without one, network_proxy is null.
BOOST_AUTO_TEST_CASE(a_c_plan_under_an_allow_list_describes_its_proxy) {
  zpolicy::test::TempDir dir;
  std::filesystem::create_directories(dir / "ws");
  const std::string policy =
      dir.write("allow.yaml",
                "zpolicy: 1\nmode: workspace-write\nnetwork:\n"
                "  allow: [pypi.org, \"*.pythonhosted.org:443\", \"localhost:5432\"]\n");
  auto plan_json_of = [&](const char* policy_file) {
    auto* req = zpolicy_request_new();
    BOOST_TEST(zpolicy_request_set_policy_file(req, policy_file) == 0);
    BOOST_TEST(zpolicy_request_set_workspace(req, (dir / "ws").c_str()) == 0);
    const char* command[] = {"/bin/true"};
    auto* planned = zpolicy_plan(req, command, 1);
    zpolicy_request_free(req);
    std::pair<int, std::string> out{zpolicy_result_exit_code(planned), ""};
    if (zpolicy_result_artifact_count(planned) == 1) {
      size_t length = 0;
      const char* data = zpolicy_result_artifact_data(planned, 0, &length);
      out.second.assign(data, length);
    }
    zpolicy_result_free(planned);
    return out;
  };
  const auto [code, json] = plan_json_of(policy.c_str());
  if (code == zpolicy::kExitUnavailable) {  // no usable bwrap here: no Linux plan to look at
    BOOST_TEST_MESSAGE("no sandbox backend on this host: the proxy plan is not checked");
    return;
  }
  BOOST_TEST_REQUIRE(code == 0, json);
  BOOST_TEST(json.rfind("{\"zpolicy_plan\": 7, ", 0) == 0u, json);
  BOOST_TEST(json.find(", \"network_proxy\": {\"port\": 3128, \"allow\": [\"pypi.org:80\", "
                       "\"pypi.org:443\", \"*.pythonhosted.org:443\", \"localhost:5432\"], "
                       "\"forwards\": [5432]}}\n") != std::string::npos,
             json);
  BOOST_TEST(json.find("\"HTTPS_PROXY=http://127.0.0.1:3128\"") != std::string::npos, json);
  const std::string none = dir.write("none.yaml", "zpolicy: 1\nmode: workspace-write\n");
  const auto [none_code, none_json] = plan_json_of(none.c_str());
  BOOST_TEST_REQUIRE(none_code == 0, none_json);
  BOOST_TEST(none_json.find(", \"network_proxy\": null}\n") != std::string::npos, none_json);
}

BOOST_AUTO_TEST_CASE(the_c_plan_needs_a_policy_file_and_a_command) {
  auto* req = zpolicy_request_new();
  const char* command[] = {"/bin/true"};
  BOOST_TEST(zpolicy_plan(req, command, 0) == nullptr);
  const std::string text = zpolicy::default_policy_text();
  BOOST_TEST(zpolicy_request_set_policy_text(req, text.data(), text.size(), "p.yaml") == 0);
  auto* refused = zpolicy_plan(req, command, 1);
  BOOST_TEST(zpolicy_result_exit_code(refused) == 2);
  BOOST_TEST(zpolicy_result_artifact_count(refused) == 0u);
  BOOST_TEST(std::string(zpolicy_result_diagnostic_message(refused, 0)).find("policy as a file") !=
             std::string::npos);
  zpolicy_result_free(refused);
  BOOST_TEST(zpolicy_request_set_mode(req, "sideways") == 0);
  BOOST_TEST(zpolicy_request_set_policy_file(req, "/nonexistent/p.yaml") == 0);
  auto* invalid = zpolicy_plan(req, command, 1);
  BOOST_TEST(zpolicy_result_exit_code(invalid) == 2);
  BOOST_TEST(std::string(zpolicy_result_diagnostic_message(invalid, 0)).find("invalid --mode 'sideways'") !=
             std::string::npos);
  zpolicy_result_free(invalid);
  zpolicy_request_free(req);
}

// `inspect` through the API: the program's disassembly, one call's verdict, and the
// reason a malformed program or call is refused, located as the command line prints it.
BOOST_AUTO_TEST_CASE(inspect_reads_a_seccomp_program_back) {
  auto compiled = zpolicy::compile({}, zpolicy::Target::Linux);
  BOOST_REQUIRE(compiled.exit_code == 0);
  std::string bpf;
  for (const auto& a : compiled.artifacts)
    if (a.name == "seccomp.bpf") bpf = a.content;
  auto listing = zpolicy::inspect("seccomp.bpf", bpf);
  BOOST_TEST(listing.exit_code == 0);
  BOOST_TEST(listing.text.find("; kill\n") != std::string::npos, listing.text);
  BOOST_TEST(zpolicy::inspect("bwrap.args", "--ro-bind\n/\n/\n").text == "--ro-bind\n/\n/\n");
  auto truncated = zpolicy::inspect("x.bpf", bpf.substr(0, 5));
  BOOST_TEST(truncated.exit_code == 2);
  BOOST_REQUIRE(truncated.diagnostics.size() == 1u);
  BOOST_TEST(truncated.diagnostics[0].str().rfind("x.bpf: error: ", 0) == 0u, truncated.diagnostics[0].str());

  auto ptrace = zpolicy::evaluate_syscall("seccomp.bpf", bpf, {"ptrace", "x86_64", {}});
  BOOST_TEST(ptrace.exit_code == 0);
  BOOST_TEST(ptrace.text.rfind("ptrace (x86_64 #101): ", 0) == 0u, ptrace.text);
  auto getpid = zpolicy::evaluate_syscall("seccomp.bpf", bpf, {"39", "x86_64", {}});
  BOOST_TEST(getpid.text.rfind("39 (x86_64 #39): allow (ret 0x7fff0000, ", 0) == 0u, getpid.text);
  auto wide = zpolicy::evaluate_syscall("seccomp.bpf", bpf, {"read", "i386", {"0x100000000"}});
  BOOST_TEST(wide.exit_code == 2);
  BOOST_TEST(wide.text.empty());
  BOOST_REQUIRE(wide.diagnostics.size() == 1u);
  BOOST_TEST(wide.diagnostics[0].str() ==
             "<command line>: error: invalid --args '0x100000000' (at most 6 numbers, decimal "
             "or 0x hex, 32 bits each for i386)\n");
  BOOST_TEST(zpolicy::evaluate_syscall("seccomp.bpf", bpf, {"read", "arm64", {}}).exit_code == 2);
  BOOST_TEST(zpolicy::evaluate_syscall("seccomp.bpf", bpf, {"frobnicate", "x86_64", {}})
                 .diagnostics.at(0)
                 .message == "unknown syscall 'frobnicate' for x86_64");
}

BOOST_AUTO_TEST_SUITE_END()
