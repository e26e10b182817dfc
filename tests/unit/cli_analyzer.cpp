// The static analyzer as a user meets it: `zpolicy check`, `explain` and `verify` on
// the built binary, policies copied into a temp directory so that file names in the
// output are stable, and artifacts weakened by hand the way a careless edit would.
#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "compiler/lint/lint_catalog.hpp"
#include <cstring>
#include <filesystem>
#include <fstream>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/analyzer/verify.hpp"
#include "golden_support.hpp"
#include "support/parse.hpp"
#include "support/cli.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
namespace fs = std::filesystem;

namespace {

using test::Cli;

std::vector<std::string> golden_policies() {
  std::vector<std::string> names;
  for (const auto& f : test::golden_policy_files()) names.push_back(f.filename().string());
  return names;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(s.substr(start, nl - start));
  if (start < s.size()) out.push_back(s.substr(start));
  return out;
}

// Findings lines only (the indented trace lines under them left out).
std::vector<std::string> headlines(const std::string& s) {
  std::vector<std::string> out;
  for (auto& l : lines(s))
    if (!l.empty() && l[0] != ' ') out.push_back(l);
  return out;
}

void replace_once(std::string& s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, "not found: " + from);
  s.replace(at, from.size(), to);
}

void edit(const std::string& path, const std::string& from, const std::string& to) {
  std::string s = test::slurp(path);
  replace_once(s, from, to);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << s;
}

// A policy that trips five lints, one of them at error level (ZP003).
const std::string kLinty =
    "zpolicy: 1\n"
    "mode: workspace-write\n"
    "filesystem:\n"
    "  write: [\"${WORKSPACE}\", \"${WORKSPACE}/build\", \"${HOME}\"]\n"
    "  protect: [.git, /etc/passwd]\n"
    "  deny: [\"~/.ssh\", \"~/.aws\", \"${WORKSPACE}/.git/hooks\"]\n"
    "network: full\n";

struct Expected {
  const char* id;
  const char* severity;
  int line, col;
  const char* message;
};
const std::vector<Expected> kLintyFindings = {
    {"ZP002", "warning", 4, 27,
     "writable root '${WORKSPACE}/build' is nested in writable root '${WORKSPACE}' (line 4)"},
    {"ZP003", "error", 4, 49,
     "writable root '${HOME}' holds the home directory: shell start-up files (~/.bashrc, "
     "~/.profile) and ~/.ssh become writable, which outlives the sandbox"},
    {"ZP001", "warning", 5, 19,
     "protected path '/etc/passwd' is under no writable root; it is read-only anyway"},
    {"ZP008", "warning", 6, 30,
     "deny root '${WORKSPACE}/.git/hooks' lies inside protected path '${WORKSPACE}/.git'; it is "
     "denied, and the protection above it is read-only"},
    {"ZP007", "warning", 7, 10,
     "network: full in a policy with 3 deny roots: secrets kept from the filesystem can still "
     "leave through the network"},
};

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_analyzer)

BOOST_AUTO_TEST_CASE(check_text_lists_every_lint_in_source_order) {
  Cli cli;
  cli.dir.write("linty.yaml", kLinty);
  auto r = cli.run({"check", "linty.yaml"});
  std::vector<std::string> expected;
  for (const auto& e : kLintyFindings)
    expected.push_back("linty.yaml:" + std::to_string(e.line) + ":" + std::to_string(e.col) + ": " +
                       e.severity + ": " + e.message + " [" + e.id + "]");
  expected.push_back("linty.yaml: 5 findings, check failed");
  auto got = lines(r.out);
  BOOST_TEST(got == expected, boost::test_tools::per_element());
  BOOST_TEST(r.err == "");
  BOOST_TEST(r.exit_code == 3);
}

BOOST_AUTO_TEST_CASE(check_json_is_the_findings_as_objects) {
  Cli cli;
  cli.dir.write("linty.yaml", kLinty);
  auto r = cli.run({"check", "linty.yaml", "--format", "json"});
  std::string expected = "{\"findings\": [";
  for (size_t i = 0; i < kLintyFindings.size(); ++i) {
    const auto& e = kLintyFindings[i];
    expected += std::string(i ? ", " : "") + "{\"id\": \"" + e.id + "\", \"severity\": \"" +
                e.severity + "\", \"file\": \"linty.yaml\", \"line\": " + std::to_string(e.line) +
                ", \"column\": " + std::to_string(e.col) + ", \"message\": \"" +
                json_escape(e.message) + "\"}";
  }
  expected += "]}\n";
  BOOST_TEST(r.out == expected);
  BOOST_TEST(r.exit_code == 3);
}

size_t rule_index(std::string_view id) {
  const auto& rules = zpolicy::compiler::lint_catalog();
  for (size_t i = 0; i < rules.size(); ++i)
    if (rules[i].id == id) return i;
  throw std::runtime_error("no rule " + std::string(id));
}

BOOST_AUTO_TEST_CASE(check_sarif_is_version_2_1_0_with_rule_ids_levels_and_lines) {
  Cli cli;
  cli.dir.write("linty.yaml", kLinty);
  auto r = cli.run({"check", "linty.yaml", "--format", "sarif"});
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.out.find("\"version\": \"2.1.0\"") != std::string::npos);
  BOOST_TEST(r.out.find("\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\"") !=
             std::string::npos);
  // Results appear in order; each names its rule, level, file and region.
  size_t at = 0;
  for (const auto& e : kLintyFindings) {
    std::string result = std::string("{\"ruleId\": \"") + e.id + "\", \"ruleIndex\": " +
                         std::to_string(rule_index(e.id)) + ", \"level\": \"" + e.severity +
                         "\", \"message\": {\"text\": \"" + json_escape(e.message) +
                         "\"}, \"locations\": [{\"physicalLocation\": {\"artifactLocation\": "
                         "{\"uri\": \"linty.yaml\"}, \"region\": {\"startLine\": " +
                         std::to_string(e.line) + ", \"startColumn\": " + std::to_string(e.col) +
                         "}}}]}";
    auto found = r.out.find(result, at);
    BOOST_TEST(found != std::string::npos, e.id);
    if (found != std::string::npos) at = found + result.size();
  }
  BOOST_TEST(r.out.find("\"ruleId\"", at) == std::string::npos, "no result beyond the five");
}

BOOST_AUTO_TEST_CASE(check_passes_every_golden_policy) {
  for (const auto& name : golden_policies()) {
    Cli cli;
    cli.copy_golden(name, name);
    auto r = cli.run({"check", name});
    BOOST_TEST(r.exit_code == 0, name << ": " << r.out << r.err);
    BOOST_TEST(r.out.ends_with(", check passed\n"), name << ": " << r.out);
  }
}

BOOST_AUTO_TEST_CASE(check_with_only_warnings_exits_0) {
  Cli cli;
  cli.dir.write("warn.yaml",
                "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${WORKSPACE}\", "
                "\"${WORKSPACE}/out\"]\n");
  auto r = cli.run({"check", "warn.yaml"});
  BOOST_TEST(r.out ==
             "warn.yaml:4:27: warning: writable root '${WORKSPACE}/out' is nested in writable "
             "root '${WORKSPACE}' (line 4) [ZP002]\n"
             "warn.yaml: 1 finding, check passed\n");
  BOOST_TEST(r.exit_code == 0);
}

// Every finding points at a policy line: mounts the sandbox needs that a deny root masks
// are blamed on that deny root.
BOOST_AUTO_TEST_CASE(check_blames_a_deny_root_for_the_mounts_it_masks) {
  Cli cli;
  cli.dir.write("all.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  deny: [\"/\"]\n");
  auto r = cli.run({"check", "all.yaml"});
  BOOST_TEST(r.exit_code == 3);
  std::vector<std::string> heads;
  for (const auto& line : headlines(r.out)) heads.push_back(line.substr(0, line.find(": error: ")));
  // ZP009, three missing mounts per confined mode on Linux, and on macOS per mode the 23
  // platform-device grants (/dev/null, /dev/fd, ...) that first-match and most-specific
  // let through the deny root; then the summary.
  BOOST_TEST_REQUIRE(heads.size() == 54u, r.out);
  for (size_t i = 0; i + 1 < heads.size(); ++i) BOOST_TEST(heads[i] == "all.yaml:4:10", r.out);
  BOOST_TEST(r.out.find("    deny root / masks /proc\n") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(check_of_an_invalid_policy_exits_2) {
  Cli cli;
  cli.dir.write("bad.yaml", "zpolicy: 1\nmode: workspace-write\nnetwrok: none\n");
  auto r = cli.run({"check", "bad.yaml"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.out == "");
  BOOST_TEST(r.err == "bad.yaml:3:1: error: unknown key 'netwrok'; did you mean 'network'?\n");
}

BOOST_AUTO_TEST_CASE(every_compiled_golden_artifact_verifies) {
  for (const auto& name : golden_policies())
    for (const char* target : {"linux", "macos"}) {
      Cli cli;
      cli.copy_golden(name, name);
      auto c = cli.run({"compile", name, "--target", target, "--out", "out"});
      BOOST_REQUIRE_MESSAGE(c.exit_code == 0, name + " " + target + ": " + c.err);
      auto v = cli.run({"verify", name, "out", "--target", target});
      BOOST_TEST(v.exit_code == 0, name << " " << target << ": " << v.err);
      BOOST_TEST(v.out ==
                 "verified: out (" + std::string(target) + ") does what the policy says\n");
    }
}

namespace {

// deny-roots.yaml compiled into `out`, ready to be weakened.
struct Compiled : Cli {
  explicit Compiled(const char* target) {
    copy_golden("deny-roots.yaml", "p.yaml");
    auto c = run({"compile", "p.yaml", "--target", target, "--out", "out"});
    BOOST_REQUIRE_MESSAGE(c.exit_code == 0, c.err);
    this->target = target;
  }
  test::ProcessResult verify() const {
    return run({"verify", "p.yaml", "out", "--target", target});
  }
  std::string target;
};

}  // namespace

BOOST_AUTO_TEST_CASE(verify_finds_a_protected_path_bound_writable) {
  Compiled c("linux");
  edit(c.dir / "out/bwrap.args", "--ro-bind\n${WORKSPACE}/.git\n", "--bind\n${WORKSPACE}/.git\n");
  auto r = c.verify();
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.out == "");
  auto heads = headlines(r.err);
  BOOST_REQUIRE(!heads.empty());
  BOOST_TEST(heads.front() ==
             "p.yaml:7:13: error: linux: dropped-deny: write ${WORKSPACE}/.git: expected no "
             "access to the host object (under protected path ${WORKSPACE}/.git), artifact gives "
             "allowed on the host object");
  for (size_t i = 0; i + 1 < heads.size(); ++i)
    BOOST_TEST(heads[i].starts_with("p.yaml:7:13: error: linux: dropped-deny: "), heads[i]);
  BOOST_TEST(heads.back() == "zpolicy: verification failed: 7 findings");
  BOOST_TEST(r.err.find("    bwrap.args:54: --bind ${WORKSPACE}/.git ${WORKSPACE}/.git covers "
                        "${WORKSPACE}/.git\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(verify_finds_the_network_namespace_gone) {
  Compiled c("linux");
  edit(c.dir / "out/bwrap.args", "--unshare-net\n", "");
  auto r = c.verify();
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(headlines(r.err) ==
                 std::vector<std::string>(
                     {"p.yaml:9:10: error: linux: missing-hardening: --unshare-net: expected "
                      "present: network none, artifact gives absent: the host network is "
                      "reachable",
                      "zpolicy: verification failed: 1 finding"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(verify_finds_a_seccomp_errno_patched_to_allow) {
  Compiled c("linux");
  const std::string path = c.dir / "out/seccomp.bpf";
  std::string bytes = test::slurp(path);
  auto program = compiler::parse_bpf(bytes);
  BOOST_REQUIRE_MESSAGE(program, program.error().message);
  // The return instruction that decides personality (135) on x86_64: the policy's own deny.
  compiler::SeccompData call;
  call.arch = 0xc000003e;
  call.nr = 135;
  std::vector<uint32_t> trace;
  auto run = compiler::run_bpf(*program, call, &trace);
  BOOST_REQUIRE(run.ret == 0x00050001u);
  const uint32_t ret_insn = trace.back();
  const uint32_t allow = 0x7fff0000u;
  std::memcpy(&bytes[ret_insn * sizeof(compiler::BpfInsn) + 4], &allow, sizeof allow);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  auto r = c.verify();
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.err.find("p.yaml:11:55: error: linux: dropped-deny: x86_64 (arch 0xc000003e) nr "
                        "135 personality") != std::string::npos,
             r.err);
}

BOOST_AUTO_TEST_CASE(verify_finds_a_deleted_sbpl_deny) {
  Compiled c("macos");
  const std::string path = c.dir / "out/profile.sb";
  // The final deny of ~/.ssh and the first rule's exclusion of it (process-exec), both gone.
  edit(path, "  (literal (param \"DENY_ROOT_HOME_SSH\"))\n  (subpath (param \"DENY_ROOT_HOME_SSH\"))\n", "");
  edit(path,
       "    (require-not (subpath (param \"DENY_ROOT_HOME_GNUPG\")))\n"
       "    (require-not (subpath (param \"DENY_ROOT_HOME_SSH\")))\n"
       "    (require-not (subpath (param \"DENY_ROOT_WORKSPACE_SECRETS\")))\n    (require-not (subpath (param "
       "\"DENY_ROOT_ETC_SHADOW\")))))",
       "    (require-not (subpath (param \"DENY_ROOT_HOME_GNUPG\")))\n"
       "    (require-not (subpath (param \"DENY_ROOT_WORKSPACE_SECRETS\")))\n    (require-not (subpath (param "
       "\"DENY_ROOT_ETC_SHADOW\")))))");
  auto r = c.verify();
  BOOST_TEST(r.exit_code == 3);
  auto heads = headlines(r.err);
  BOOST_REQUIRE_MESSAGE(heads.size() == 4u, r.err);
  for (const char* probe :
       {"${HOME}/.ssh:", "${HOME}/.ssh/zp-dir/zp-probe:", "${HOME}/.ssh/zp-probe:"})
    BOOST_TEST(
        std::count(heads.begin(), heads.end(),
                   std::string("p.yaml:8:10: error: macos: dropped-deny: process-exec ") + probe +
                       " expected deny (under deny root ${HOME}/.ssh), artifact gives allow under "
                       "last-match/subpath-includes-self, deny-wins/subpath-includes-self, "
                       "first-match/subpath-includes-self, most-specific/subpath-includes-self, "
                       "last-match/subpath-excludes-self-on-create, "
                       "deny-wins/subpath-excludes-self-on-create, "
                       "first-match/subpath-excludes-self-on-create, "
                       "most-specific/subpath-excludes-self-on-create") == 1,
        probe);
  BOOST_TEST(heads.back() == "zpolicy: verification failed: 3 findings");
}

BOOST_AUTO_TEST_CASE(verify_finds_a_missing_artifact) {
  for (const char* target : {"linux", "macos"}) {
    Compiled c(target);
    // The files the sandbox is built from (seccomp.txt, the readable listing, is not one).
    const std::vector<std::string> enforced =
        std::string(target) == "linux" ? std::vector<std::string>{"bwrap.args", "seccomp.bpf"}
                                       : std::vector<std::string>{"profile.sb", "params.txt"};
    for (const auto& name : enforced) {
      const std::string path = c.dir / ("out/" + name);
      const std::string kept = test::slurp(path);
      fs::remove(path);
      auto r = c.verify();
      BOOST_TEST(r.exit_code == 3, target << " without " << name);
      BOOST_TEST(r.out == "");
      BOOST_TEST(r.err.starts_with(name + ": error: " + target + ": malformed-artifact: " + name +
                                   ": expected a valid artifact, artifact gives missing\n"),
                 target << " without " << name << ": " << r.err);
      c.dir.write("out/" + name, kept);
    }
    BOOST_TEST(c.verify().exit_code == 0, target);
  }
}

// `compile` refuses to hand out artifacts its verifier rejects. The emitters cannot be
// made wrong from outside, so this is the library call the CLI makes, on artifacts
// corrupted after emission.
BOOST_AUTO_TEST_CASE(compile_result_with_a_corrupted_artifact_has_findings) {
  auto parsed =
      test::parse(test::slurp(std::string(ZPOLICY_SOURCE_DIR) + "/golden/deny-roots.yaml"));
  BOOST_REQUIRE(parsed.policy);
  for (auto target : {compiler::Target::Linux, compiler::Target::Macos}) {
    ir::Diagnostics diags;
    auto c =
        compiler::compile(*parsed.policy, target, ir::Mode::WorkspaceWrite, std::nullopt, diags);
    BOOST_REQUIRE(c);
    BOOST_TEST(c->findings.empty());
    BOOST_TEST(compiler::verify_artifacts(c->resolved, target, c->artifacts).empty());
    auto corrupted = c->artifacts;
    for (auto& a : corrupted) {
      if (a.name == "bwrap.args")
        replace_once(a.content, "--ro-bind\n${WORKSPACE}/.git\n", "--bind\n${WORKSPACE}/.git\n");
      if (a.name == "profile.sb")
        replace_once(a.content, "(deny file-write*\n", "(allow file-write*\n");
    }
    auto findings = compiler::verify_artifacts(c->resolved, target, corrupted);
    BOOST_TEST(!findings.empty(), compiler::to_string(target));
    bool names_protect_line = false;
    for (const auto& f : findings)
      names_protect_line |= f.loc.line == 7 && f.kind == "dropped-deny";
    BOOST_TEST(names_protect_line, compiler::to_string(target));
  }
}

BOOST_AUTO_TEST_SUITE_END()
