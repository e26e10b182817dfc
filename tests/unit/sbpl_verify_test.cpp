#include "compiler/analyzer/sbpl/sbpl_verify.hpp"

#include <boost/test/unit_test.hpp>

#include "emitters/sbpl/profile.hpp"
#include "tests/unit/sbpl_fixtures.hpp"

using namespace zpolicy;
namespace fx = zpolicy::test::sbpl;

namespace {

std::vector<std::pair<std::string, ir::Resolved>> all_fixtures() {
  return {{"default-portable", fx::default_portable()},
          {"default-bound", fx::default_bound("/Users/u/proj")},
          {"injection-bound", fx::default_bound("/Users/u/x\")(allow default)(")},
          {"read-only", fx::read_only()},
          {"deny-roots-loopback", fx::deny_roots_loopback()},
          {"partial-read-full-network", fx::partial_read_full_network()},
          {"nested-roots", fx::nested_roots()},
          {"danger", fx::danger()}};
}

std::string all(const std::vector<ir::Diagnostic>& fs) {
  std::string out;
  for (const auto& f : fs) out += f.report() + "\n";
  return out;
}

const ir::Diagnostic* find(const std::vector<ir::Diagnostic>& fs, std::string_view k,
                        const std::string& op, const std::string& probe) {
  for (const auto& f : fs)
    if (f.kind == k && f.probe == op + " " + probe) return &f;
  return nullptr;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  BOOST_REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_verify)

BOOST_AUTO_TEST_CASE(every_emitted_profile_agrees_with_its_policy_on_every_probe) {
  for (const auto& [name, r] : all_fixtures()) {
    BOOST_TEST_CONTEXT(name) {
      auto p = emitters::sbpl::emit(r);
      auto findings = compiler::verify_sbpl(r, p.text, fx::views(p.params));
      BOOST_TEST(findings.empty(), all(findings));
      auto probes = compiler::sbpl_probes(r);
      int judged = 0;
      for (const auto& pr : probes) judged += pr.intent != compiler::Expect::Either;
      BOOST_TEST_MESSAGE(name << ": " << probes.size() << " probes, " << judged << " judged");
      BOOST_TEST(judged > 50);
    }
  }
}

BOOST_AUTO_TEST_CASE(probes_cover_roots_protected_paths_siblings_and_the_outside) {
  auto probes = compiler::sbpl_probes(fx::deny_roots_loopback());
  auto intent = [&](const std::string& op, const std::string& target) {
    for (const auto& p : probes)
      // A deny root's strictness is the bwrap verifier's concern; Seatbelt denies or not.
      if (p.operation == op && p.target == target)
        return p.intent == compiler::Expect::DenyStrict ? compiler::Expect::Deny : p.intent;
    BOOST_FAIL("no probe " + op + " " + target);
    return compiler::Expect::Either;
  };
  using I = compiler::Expect;
  BOOST_TEST((intent("file-write-create", "${WORKSPACE}/.git") == I::Deny));
  BOOST_TEST((intent("file-write-data", "${WORKSPACE}/.git/zp-probe") == I::Deny));
  BOOST_TEST((intent("file-write-create", "${WORKSPACE}/.github") == I::Allow));
  BOOST_TEST((intent("file-write-unlink", "${WORKSPACE}/data") == I::Deny));
  BOOST_TEST((intent("file-write-unlink", "${WORKSPACE}") == I::Deny));
  BOOST_TEST((intent("file-write-create", "${WORKSPACE}/data/zp-sibling") == I::Allow));
  BOOST_TEST((intent("file-read-data", "${HOME}/.ssh/zp-probe") == I::Deny));
  BOOST_TEST((intent("file-read-data", "${HOME}/.sshhub") == I::Allow));
  BOOST_TEST((intent("file-write-create", "${WORKSPACE}/secrets") == I::Deny));
  BOOST_TEST((intent("file-write-data", "/zp-outside") == I::Deny));
  BOOST_TEST((intent("file-read-data", "/zp-outside") == I::Allow));
  BOOST_TEST((intent("file-link", "${WORKSPACE}/.env") == I::Deny));
  BOOST_TEST((intent("network-outbound", "localhost:8080") == I::Allow));
  BOOST_TEST((intent("network-outbound", "192.0.2.1:8080") == I::Deny));
  BOOST_TEST((intent("network-outbound", "unix:/private/var/run/docker.sock") == I::Deny));
  BOOST_TEST((intent("signal", "host-process") == I::Deny));
  BOOST_TEST((intent("process-exec", "/bin/sh") == I::Allow));
  BOOST_TEST((intent("process-exec", "${HOME}/.ssh/zp-probe") == I::Deny));
}

BOOST_AUTO_TEST_CASE(a_dropped_protected_path_is_reported_with_its_policy_line_and_trace) {
  ir::Resolved r = fx::default_portable();
  auto p = emitters::sbpl::emit(r);
  // A hand-edited copy where .git (PROTECTED_WORKSPACE_GIT) lost both of its rules.
  std::string text =
      replace(p.text, "    (require-not (literal (param \"PROTECTED_WORKSPACE_GIT\")))\n", "");
  text = replace(text, "    (require-not (subpath (param \"PROTECTED_WORKSPACE_GIT\")))\n", "");
  text = replace(text,
                 "  (literal (param \"PROTECTED_WORKSPACE_GIT\"))\n  (subpath (param "
                 "\"PROTECTED_WORKSPACE_GIT\"))\n",
                 "");
  auto findings = compiler::verify_sbpl(r, text, fx::views(p.params));
  const auto* f = find(findings, "dropped-deny", "file-write-data",
                       "${WORKSPACE}/.git/zp-probe");
  BOOST_REQUIRE_MESSAGE(f, all(findings));
  BOOST_TEST(f->loc.str() == "policy.yaml:10:3");
  BOOST_TEST(f->report().find("protected path ${WORKSPACE}/.git") != std::string::npos, f->report());
  BOOST_TEST(f->expected == "deny (under protected path ${WORKSPACE}/.git)");
  BOOST_TEST(f->actual.starts_with("allow under last-match/subpath-includes-self"), f->actual);
  BOOST_TEST(
      joined(f->trace).find("(allow file-write* ...) via (subpath (param "
                            "\"WRITABLE_ROOT_WORKSPACE\")) = ${WORKSPACE}") != std::string::npos,
      joined(f->trace));
  BOOST_TEST(f->report().starts_with("policy.yaml:10:3: error: macos: dropped-deny: file-write-data "
                                  "${WORKSPACE}/.git/zp-probe: expected deny (under protected path "
                                  "${WORKSPACE}/.git), artifact gives allow under "),
             f->report());
}

BOOST_AUTO_TEST_CASE(a_bare_subpath_is_caught_by_the_strict_reading) {
  ir::Resolved r = fx::default_portable();
  auto p = emitters::sbpl::emit(r);
  std::string text =
      replace(p.text, "    (require-not (literal (param \"PROTECTED_WORKSPACE_ENV\")))\n", "");
  text = replace(text, "  (literal (param \"PROTECTED_WORKSPACE_ENV\"))\n", "");
  auto findings = compiler::verify_sbpl(r, text, fx::views(p.params));
  BOOST_REQUIRE_EQUAL(findings.size(), 1u);
  BOOST_TEST(findings[0].probe == "file-write-create ${WORKSPACE}/.env");
  BOOST_TEST(findings[0].actual.find("subpath-excludes-self-on-create") != std::string::npos);
  BOOST_TEST(findings[0].actual.find("subpath-includes-self") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_deny_that_only_the_rule_order_keeps_is_ambiguous_or_dropped) {
  ir::Resolved r = fx::read_only();
  auto p = emitters::sbpl::emit(r);
  // Without its require-not the full-read allow overlaps the deny root: the last
  // matching rule and any-deny-wins still deny, first-match does not.
  std::string text = replace(p.text,
                             "(allow file-read*\n"
                             "  (require-not (subpath (param \"DENY_ROOT_HOME_SSH\"))))",
                             "(allow file-read*)");
  auto findings = compiler::verify_sbpl(r, text, fx::views(p.params));
  const auto* f = find(findings, "dropped-deny", "file-read-data", "${HOME}/.ssh");
  BOOST_REQUIRE_MESSAGE(f, all(findings));
  BOOST_TEST(f->actual ==
             "allow under first-match/subpath-includes-self, "
             "first-match/subpath-excludes-self-on-create");
  BOOST_TEST(joined(f->trace).find("(allow file-read*)") != std::string::npos, joined(f->trace));
  BOOST_TEST(f->loc.str() == "policy.yaml:12:3");
}

BOOST_AUTO_TEST_CASE(parameters_are_checked_against_the_policy_not_trusted) {
  ir::Resolved r = fx::default_bound("/Users/u/proj");
  auto p = emitters::sbpl::emit(r);
  auto params = p.params;
  params[0].second = "/";  // the writable root widened to the whole disk
  auto findings = compiler::verify_sbpl(r, p.text, fx::views(params));
  BOOST_TEST(find(findings, "dropped-deny", "file-write-create", "/zp-outside"),
             all(findings));

  auto missing = p.params;
  missing.pop_back();
  auto bad = compiler::verify_sbpl(r, p.text, fx::views(missing));
  BOOST_REQUIRE_EQUAL(bad.size(), 1u);
  BOOST_TEST((bad[0].kind == "malformed-artifact"));
  BOOST_TEST((bad[0].report() + "\n") ==
             "params.txt: error: macos: malformed-artifact: parameter "
             "PROTECTED_USERS_U_PROJ_DATA_AGENT_SESSIONS: expected a definition (the profile reads "
             "it), artifact gives none\n");

  for (const char* bad : {"relative/x", "/Users/u/proj/", "/Users//u", "/Users/u/../x",
                          "/Users/./u", "/Users/u/.", "${WORKSPACE}x"}) {
    auto odd = p.params;
    odd[0].second = bad;
    auto f = compiler::verify_sbpl(r, p.text, fx::views(odd));
    BOOST_REQUIRE_MESSAGE(!f.empty(), bad);
    BOOST_TEST(f[0].expected == "a normalized absolute path", bad);
    BOOST_TEST(f[0].actual == bad);
  }

  auto twice = p.params;
  twice.push_back(twice.front());
  BOOST_TEST((compiler::verify_sbpl(r, p.text, fx::views(twice)).at(0).kind ==
              "malformed-artifact"));
  // Two paths under one name (a hand-edited params.txt): neither value is chosen.
  auto clash = p.params;
  clash.emplace_back(clash.front().first, "/Users/u/other");
  const auto clashed = compiler::verify_sbpl(r, p.text, fx::views(clash));
  BOOST_REQUIRE(!clashed.empty());
  BOOST_TEST((clashed[0].report() + "\n") == "params.txt: error: macos: malformed-artifact: parameter " +
                                     clash.front().first +
                                     ": expected one definition, artifact gives a second "
                                     "definition\n");
}

BOOST_AUTO_TEST_CASE(a_bound_path_through_a_macos_symlink_is_refused) {
  // /var/folders/... is what $TMPDIR says; Seatbelt sees /private/var/folders/...
  ir::Resolved r = fx::default_bound("/var/folders/zz/T/ws");
  r.deny.push_back(fx::rp("/etc/secrets", 12));
  auto p = emitters::sbpl::emit(r);
  auto findings = compiler::verify_sbpl(r, p.text, fx::views(p.params));
  BOOST_REQUIRE(!findings.empty());
  BOOST_TEST((findings[0].kind == "not-canonical"));
  BOOST_TEST(findings[0].probe == "parameter WRITABLE_ROOT_VAR_FOLDERS_ZZ_T_WS");
  BOOST_TEST(
      (findings[0].report() + "\n") ==
      "params.txt: error: macos: not-canonical: parameter WRITABLE_ROOT_VAR_FOLDERS_ZZ_T_WS: "
      "expected a "
      "canonical macOS path (/var is a symlink to /private/var; Seatbelt matches the "
      "resolved path), artifact gives /var/folders/zz/T/ws, on which a rule would never "
      "apply\n");
  bool etc = false;
  for (const auto& f : findings) {
    etc = etc || f.actual.starts_with("/etc/secrets");
    // The probes still run: the profile itself is right for the paths it was given.
    BOOST_TEST((f.kind == "not-canonical"), f.report());
  }
  BOOST_TEST(etc);
  // Canonical spellings, and look-alikes that are not the symlinks, pass.
  BOOST_TEST(
      compiler::verify_sbpl(
          fx::default_bound("/private/var/folders/zz/T/ws"),
          emitters::sbpl::emit(fx::default_bound("/private/var/folders/zz/T/ws")).text,
          fx::views(emitters::sbpl::emit(fx::default_bound("/private/var/folders/zz/T/ws")).params))
          .empty());
  auto look_alike = fx::default_bound("/variable/ws");
  auto lp = emitters::sbpl::emit(look_alike);
  BOOST_TEST(compiler::verify_sbpl(look_alike, lp.text, fx::views(lp.params)).empty());
}

BOOST_AUTO_TEST_CASE(a_foreign_profile_is_refused) {
  auto r = fx::default_portable();
  auto findings = compiler::verify_sbpl(
      r, "(version 1)\n(allow default)\n(deny file-write* (regex #\"^/\"))", {});
  BOOST_REQUIRE_EQUAL(findings.size(), 1u);
  BOOST_TEST((findings[0].kind == "malformed-artifact"));
  BOOST_TEST(findings[0].report().starts_with("profile.sb:3:"), findings[0].report());
  BOOST_TEST(findings[0].actual.find("regex") != std::string::npos, findings[0].actual);
}

BOOST_AUTO_TEST_CASE(a_profile_that_is_too_strict_misses_allows) {
  ir::Resolved r = fx::deny_roots_loopback();
  auto p = emitters::sbpl::emit(r);
  std::string text = replace(p.text, "(allow network-outbound (remote ip \"localhost:*\"))\n", "");
  auto findings = compiler::verify_sbpl(r, text, fx::views(p.params));
  const auto* f =
      find(findings, "missing-allow", "network-outbound", "localhost:8080");
  BOOST_REQUIRE_MESSAGE(f, all(findings));
  BOOST_TEST(f->expected == "allow (network: loopback)");
}

BOOST_AUTO_TEST_CASE(explain_names_the_policy_rule_and_the_profile_rule) {
  ir::Resolved r = fx::default_portable();
  auto p = emitters::sbpl::emit(r);
  auto git = compiler::explain_sbpl(r, p.text, fx::views(p.params), "write",
                                    "${WORKSPACE}/.git/config");
  BOOST_REQUIRE_MESSAGE(git, git.error().message);
  BOOST_TEST((git->policy.intent == compiler::Expect::Deny));
  BOOST_TEST(git->policy.why == "under protected path ${WORKSPACE}/.git");
  BOOST_TEST(git->policy.loc.str() == "policy.yaml:10:3");
  BOOST_TEST(!git->allowed);
  BOOST_TEST(git->models_agree);
  BOOST_TEST(
      joined(git->trace)
              .find("(deny file-write* ...) via (subpath (param \"PROTECTED_WORKSPACE_GIT\")) = "
                    "${WORKSPACE}/.git") != std::string::npos,
      joined(git->trace));

  auto src = compiler::explain_sbpl(r, p.text, fx::views(p.params), "create",
                                    "${WORKSPACE}/src/a.c");
  BOOST_REQUIRE_MESSAGE(src, src.error().message);
  BOOST_TEST((src->policy.intent == compiler::Expect::Allow));
  BOOST_TEST(src->allowed);
  BOOST_TEST(src->policy.loc.str() == "policy.yaml:4:3");

  const auto chmod = compiler::explain_sbpl(r, p.text, fx::views(p.params), "chmod", "/x");
  BOOST_TEST(!chmod);
  BOOST_TEST(chmod.error().message == "unknown operation 'chmod'");
  const auto unbound = compiler::explain_sbpl(r, p.text, {}, "read", "/x");
  BOOST_TEST(!unbound);
  BOOST_TEST(unbound.error().message.find("is not defined") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(params_text_round_trips_and_rejects_malformed_lines) {
  auto p = emitters::sbpl::emit(fx::deny_roots_loopback());
  const std::string text = emitters::sbpl::params_text(p);
  auto back = compiler::parse_params_text(text);
  BOOST_REQUIRE_MESSAGE(back, back.error().message);
  BOOST_TEST((*back == fx::views(p.params)));
  const auto no_value = compiler::parse_params_text("A=1\nB\n");
  BOOST_TEST(!no_value);
  BOOST_TEST(no_value.error().message == "params.txt:2: expected NAME=VALUE");
  const auto twice = compiler::parse_params_text("A=1\nA=2\n");
  BOOST_TEST(!twice);
  BOOST_TEST(twice.error().message == "params.txt:2: parameter A is defined twice");
  BOOST_TEST(!compiler::parse_params_text("=x\n"));
  // A value may hold '=' (only the first one separates).
  auto eq = compiler::parse_params_text("A=/x=y\n");
  BOOST_REQUIRE(eq);
  BOOST_TEST(eq->at(0).second == "/x=y");
}

BOOST_AUTO_TEST_SUITE_END()
