// verify_sbpl over the regions the profile's own filters name (docs/verify.md, "The SBPL
// proof"): grants on paths, operations and ports the policy never mentions are found,
// and forms outside the verified subset are refused with their location.
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "golden_support.hpp"
#include "support/cli.hpp"

using namespace zpolicy;

namespace {

struct Golden {
  ir::Resolved policy;
  std::string profile, params;
};

Golden golden(const std::string& name) {
  for (auto& g : test::golden_compiles(compiler::Target::Macos))
    if (g.name == name)
      return {g.compiled.resolved, g.artifact("profile.sb"), g.artifact("params.txt")};
  BOOST_FAIL("no golden " + name);
  return {};
}

std::vector<ir::Diagnostic> verify(const Golden& g, const std::string& profile,
                                   const std::string& params) {
  auto list = compiler::parse_params_text(params);
  BOOST_REQUIRE_MESSAGE(list, list.error().message);
  return compiler::verify_sbpl(g.policy, profile, *list);
}

std::vector<ir::Diagnostic> verify(const Golden& g, const std::string& profile) {
  return verify(g, profile, g.params);
}

std::string all(const std::vector<ir::Diagnostic>& fs) {
  std::string out;
  for (const auto& f : fs) out += f.report() + "\n";
  return out;
}

int line_count(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// The golden text with `rule` on a line of its own after (deny default), where every
// precedence but last-match lets it decide; `line` is set to that line.
std::string with_rule_first(const std::string& text, const std::string& rule, int* line) {
  const std::string anchor = "(deny default)\n";
  const auto at = text.find(anchor);
  BOOST_REQUIRE(at != std::string::npos);
  const std::string head = text.substr(0, at + anchor.size());
  *line = line_count(head) + 1;
  return head + rule + "\n" + text.substr(at + anchor.size());
}

// The golden text with `rule` appended, where last-match lets it decide.
std::string with_rule_last(const std::string& text, const std::string& rule, int* line) {
  *line = line_count(text) + 1;
  return text + rule + "\n";
}

// The first finding of `kind` whose probe starts with `probe`.
const ir::Diagnostic* find(const std::vector<ir::Diagnostic>& fs, std::string_view kind,
                           const std::string& probe) {
  for (const auto& f : fs)
    if (f.kind == kind && f.probe.starts_with(probe)) return &f;
  return nullptr;
}

bool traces_line(const ir::Diagnostic& f, int line) {
  const std::string needle = "(profile.sb line " + std::to_string(line) + ")";
  for (const auto& t : f.trace)
    if (t.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_verify_regions)

BOOST_AUTO_TEST_CASE(the_golden_profiles_verify_clean_over_their_own_regions) {
  for (const char* name : {"default", "deny-roots", "large", "loopback", "read-only"}) {
    const Golden g = golden(name);
    BOOST_TEST(verify(g, g.profile).empty(), name << ":\n" << all(verify(g, g.profile)));
  }
}

// The issue's reproductions: grants on paths the policy never names.
BOOST_AUTO_TEST_CASE(a_write_grant_on_a_path_the_policy_never_names_is_found) {
  const Golden g = golden("default");
  struct Case {
    std::string rule, probe;
  };
  for (const Case& c : std::vector<Case>{
           {"(allow file-write* (subpath \"/Users\"))", "file-write-data /Users/zp-probe"},
           {"(allow file-write* (literal \"/etc/passwd\"))", "file-write-data /etc/passwd"},
           {"(allow file-write-xattr (subpath \"/Library/LaunchAgents\"))",
            "file-write-xattr /Library/LaunchAgents"},
           {"(allow file-write-owner file-write-flags (subpath \"/opt\"))",
            "file-write-flags /opt"},
           {"(allow file-ioctl (literal \"/dev/ttys000\"))", "file-ioctl /dev/ttys000"},
           {"(allow file-write-data (subpath \"/dev\"))", "file-write-data /dev/zp-probe"},
           {"(allow file-write* (require-any (literal \"/opt/x\") (subpath "
            "\"/Library/Keychains\")))",
            "file-write-data /Library/Keychains"},
           {"(allow file-write* (require-all (subpath \"/private\") (require-not (subpath "
            "\"/private/tmp\"))))",
            "file-write-data /private/zp-probe"},
           {"(allow file-write* (require-all (subpath \"/Library\") (require-not (require-any "
            "(subpath \"/Library/Apple\") (subpath \"/Library/Preferences\")))))",
            "file-write-data /Library/zp-probe"},
       }) {
    for (const bool first : {false, true}) {
      BOOST_TEST_CONTEXT(c.rule << (first ? " first" : " last")) {
        int line = 0;
        const std::string text = first ? with_rule_first(g.profile, c.rule, &line)
                                       : with_rule_last(g.profile, c.rule, &line);
        const auto findings = verify(g, text);
        const ir::Diagnostic* f = find(findings, "dropped-deny", c.probe);
        BOOST_REQUIRE_MESSAGE(f, all(findings));
        // The rule that grants, by its line; the policy line that makes it read-only
        // (`read: ["/"]` at line 5 of golden/default.yaml).
        BOOST_TEST(traces_line(*f, line), f->report());
        BOOST_TEST(f->loc.line == 5, f->report());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_grant_through_a_parameter_equal_to_a_deny_root_is_found) {
  const Golden g = golden("deny-roots");
  const auto params = compiler::parse_params_text(g.params);
  BOOST_REQUIRE(params);
  std::string deny_root;
  for (const auto& [name, value] : *params)
    if (name == "DENY_ROOT_HOME_AWS") deny_root = value;
  BOOST_REQUIRE(!deny_root.empty());
  // The policy's own parameter, and a new one holding the same path.
  for (const char* param : {"DENY_ROOT_HOME_AWS", "EXTRA"}) {
    for (const char* op : {"file-read*", "process-exec"}) {
      BOOST_TEST_CONTEXT(param << " " << op) {
        int line = 0;
        const std::string text = with_rule_first(
            g.profile, std::string("(allow ") + op + " (subpath (param \"" + param + "\")))",
            &line);
        const auto findings = verify(g, text, g.params + "EXTRA=" + deny_root + "\n");
        const std::string probe = std::string(op) == "process-exec" ? "process-exec " + deny_root
                                                                    : "file-read-data " + deny_root;
        const ir::Diagnostic* f = find(findings, "dropped-deny", probe);
        BOOST_REQUIRE_MESSAGE(f, all(findings));
        BOOST_TEST(traces_line(*f, line), f->report());
        BOOST_TEST(f->loc.line > 0, f->report());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_network_grant_on_a_port_the_policy_never_names_is_found) {
  for (const char* name : {"default", "loopback"}) {
    const Golden g = golden(name);
    for (const auto& [rule, probe] : std::vector<std::pair<std::string, std::string>>{
             {"(allow network-outbound (remote ip \"*:443\"))", "network-outbound 192.0.2.1:443"},
             {"(allow network-bind network-inbound (local ip \"*:22\"))",
              "network-bind 192.0.2.1:22"}}) {
      BOOST_TEST_CONTEXT(name << " " << rule) {
        int line = 0;
        const auto findings = verify(g, with_rule_last(g.profile, rule, &line));
        const ir::Diagnostic* f = find(findings, "dropped-deny", probe);
        BOOST_REQUIRE_MESSAGE(f, all(findings));
        BOOST_TEST(traces_line(*f, line), f->report());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_mach_service_or_system_socket_the_design_does_not_grant_is_found) {
  for (const char* name : {"default", "read-only"}) {
    const Golden g = golden(name);
    struct Case {
      std::string rule, probe;
    };
    for (const Case& c : std::vector<Case>{
             {"(allow mach-lookup (global-name \"com.apple.security.authtrampoline\"))",
              "mach-lookup com.apple.security.authtrampoline"},
             {"(allow mach-lookup)", "mach-lookup org.zpolicy.probe.0"},
             {"(allow mach-lookup (global-name \"com.apple.trustd.agent\"))",
              "mach-lookup com.apple.trustd.agent"},
             {"(allow system-socket)", "system-socket"},
         }) {
      BOOST_TEST_CONTEXT(name << " " << c.rule) {
        int line = 0;
        const auto findings = verify(g, with_rule_last(g.profile, c.rule, &line));
        const ir::Diagnostic* f = find(findings, "dropped-deny", c.probe);
        BOOST_REQUIRE_MESSAGE(f, all(findings));
        BOOST_TEST(traces_line(*f, line), f->report());
      }
    }
  }
  std::string many = golden("default").profile;
  for (int i = 0; i < 65; ++i)
    many += "(deny mach-lookup (global-name \"org.example." + std::to_string(i) + "\"))\n";
  const auto findings = verify(golden("default"), many);
  BOOST_REQUIRE_EQUAL(findings.size(), 1u);
  BOOST_TEST(findings.front().actual.find("more than 64 distinct Mach services") !=
             std::string::npos);
}

// Reading sysctls beyond the design's list shows the host's processes (`kern.proc.all`)
// and another process's arguments and environment (`kern.procargs2`): accepted before
// 2026-12-06, when no sysctl was probed (red team verify18).
BOOST_AUTO_TEST_CASE(a_sysctl_the_design_does_not_grant_is_found) {
  for (const char* name : {"default", "read-only"}) {
    const Golden g = golden(name);
    struct Case {
      std::string rule, probe;
    };
    for (const Case& c : std::vector<Case>{
             {"(allow sysctl-read)", "sysctl-read kern.proc.all"},
             {"(allow sysctl-read (sysctl-name \"kern.procargs2\"))", "sysctl-read kern.procargs2"},
             {"(allow sysctl-read (sysctl-name-prefix \"kern.proc.\"))",
              "sysctl-read kern.proc.zpolicy-probe"},
             {"(allow sysctl-read (sysctl-name \"security.mac.x\"))", "sysctl-read security.mac.x"},
         }) {
      BOOST_TEST_CONTEXT(name << " " << c.rule) {
        int line = 0;
        const auto findings = verify(g, with_rule_last(g.profile, c.rule, &line));
        const ir::Diagnostic* f = find(findings, "dropped-deny", c.probe);
        BOOST_REQUIRE_MESSAGE(f, all(findings));
        BOOST_TEST(traces_line(*f, line), f->report());
      }
    }
    BOOST_TEST(verify(g, g.profile).empty());
  }
}

// Under (allow default) every operation the subset cannot name is granted (AppleEvents,
// LaunchServices, IOKit, ...), and no probe asks for one: a profile that denies the
// subset's operations wherever the golden one does was accepted before (red team fuzz19,
// Z19-1). It is refused at the default rule, whatever the rules after it say.
BOOST_AUTO_TEST_CASE(allow_default_is_refused_at_its_line) {
  const Golden g = golden("default");
  const std::string deny_default = "(deny default)";
  const size_t at = g.profile.find(deny_default);
  BOOST_REQUIRE(at != std::string::npos);
  const int line = line_count(g.profile.substr(0, at)) + 1;
  // The golden rules, and denials of everything they leave to the default.
  const std::string complement =
      "(allow default)\n"
      "(deny signal (require-not (target same-sandbox)))\n"
      "(deny process-info* (require-not (target same-sandbox)))\n"
      "(deny sysctl-read (require-all (require-not (sysctl-name-prefix \"hw.\"))"
      " (require-not (sysctl-name-prefix \"kern.\")) (require-not (sysctl-name-prefix \"vm.\"))"
      " (require-not (sysctl-name-prefix \"machdep.\"))"
      " (require-not (sysctl-name-prefix \"sysctl.\"))))\n"
      "(deny mach-lookup (require-all"
      " (require-not (global-name \"com.apple.system.opendirectoryd.libinfo\"))"
      " (require-not (global-name \"com.apple.cfprefsd.daemon\"))"
      " (require-not (global-name \"com.apple.cfprefsd.agent\"))))\n"
      "(deny network*)\n(deny system-socket)\n(deny file-link)\n"
      "(deny file-ioctl (require-not (literal \"/dev/ptmx\")))\n"
      "(deny file-write* (require-all (require-not (subpath (param \"WRITABLE_ROOT_WORKSPACE\")))"
      " (require-not (literal \"/dev/ptmx\")) (require-not (literal \"/dev/null\"))"
      " (require-not (literal \"/dev/zero\")) (require-not (subpath \"/dev/fd\"))))\n"
      "(deny file-write-create file-write-unlink file-write-mode file-write-xattr"
      " file-write-times file-write-flags file-write-owner (literal \"/dev/ptmx\")"
      " (literal \"/dev/null\") (literal \"/dev/zero\") (subpath \"/dev/fd\"))";
  for (const std::string& replacement : {std::string("(allow default)"), complement}) {
    std::string text = g.profile;
    text.replace(at, deny_default.size(), replacement);
    const auto findings = verify(g, text);
    BOOST_REQUIRE_EQUAL(findings.size(), 1u);
    BOOST_TEST((findings[0].kind == "malformed-artifact"), all(findings));
    BOOST_TEST(findings[0].report().starts_with("profile.sb:" + std::to_string(line) + ":1:"),
               all(findings));
  }
}

// file-write* grants Seatbelt's file-write-acl, file-write-setugid and
// file-write-finderinfo too, which no rule of the subset can name: a profile that
// allows file-write* and denies every other file-write operation one by one left them
// granted on a protected path, and outside every writable root, unseen (red team fuzz19,
// Z19-2).
BOOST_AUTO_TEST_CASE(file_write_star_is_asked_for_the_operations_no_rule_names) {
  const Golden g = golden("default");
  const std::string modeled =
      "file-write-data file-write-create file-write-unlink file-write-mode file-write-xattr "
      "file-write-times file-write-flags file-write-owner";
  struct Case {
    std::string filter, probe;
  };
  for (const Case& c : std::vector<Case>{
           {"(subpath (param \"PROTECTED_WORKSPACE_GIT\"))", "${WORKSPACE}/.git"},
           {"(subpath \"/Users\")", "/Users"},
       }) {
    BOOST_TEST_CONTEXT(c.filter) {
      // The denial first and last, so that it decides under every precedence.
      const std::string deny = "(deny " + modeled + " " + c.filter + ")";
      int first = 0, line = 0;
      const std::string text =
          with_rule_last(with_rule_first(g.profile, deny, &first),
                         "(allow file-write* " + c.filter + ")", &line) +
          deny + "\n";
      const auto findings = verify(g, text);
      for (const char* op : {"file-write-acl ", "file-write-setugid ", "file-write-finderinfo "}) {
        const ir::Diagnostic* f = find(findings, "dropped-deny", op + c.probe);
        BOOST_REQUIRE_MESSAGE(f, op << c.probe << " in\n" << all(findings));
        BOOST_TEST(traces_line(*f, line), f->report());
      }
      for (const auto& f : findings)
        BOOST_TEST((f.probe.starts_with("file-write-acl ") ||
                    f.probe.starts_with("file-write-setugid ") ||
                    f.probe.starts_with("file-write-finderinfo ")),
                   f.report());
    }
  }
}

// Past 1 024 findings the rest are not explained: the profile is refused all the same, and
// explaining each costs a pass over every rule.
BOOST_AUTO_TEST_CASE(findings_stop_at_1024) {
  const Golden g = golden("default");
  std::string text = g.profile;
  for (int i = 0; i < 300; ++i)
    text += "(allow file-write* (subpath \"/w" + std::to_string(i) + "\"))\n";
  const auto findings = verify(g, text);
  BOOST_TEST(findings.size() == 1024u);
  for (const auto& f : findings) BOOST_TEST((f.kind == "dropped-deny"), f.report());
}

// Forms outside the verified subset are refused where they stand, never ignored.
BOOST_AUTO_TEST_CASE(forms_outside_the_subset_are_refused_with_their_location) {
  const Golden g = golden("default");
  struct Case {
    std::string rule, message;
    int col;
  };
  for (const Case& c : std::vector<Case>{
           {"(allow file-write* (prefix \"/Users\"))", "'prefix' is not a filter zpolicy emits",
            20},
           {"(allow file-write* (regex #\"^/Users/\"))", "'#' (regex literals", 27},
           {"(allow file-write* (regex \"^/Users/\"))", "'regex' is not a filter zpolicy emits",
            20},
           {"(allow file-write* (subpath \"/Users/\"))", "absolute and normalized", 20},
           {"(allow file-write* (literal \"/Users/../etc\"))", "absolute and normalized", 20},
           {"(allow file-write* (sysctl-name-prefix \"/\"))", "does not act on", 1},
           {"(allow sysctl-read (subpath \"/\"))", "does not act on", 1},
           {"(allow network-outbound (remote ip \"*:0443\"))", "PORT * or 0-65535", 25},
           {"(allow file-write* (require-any (vnode-type REGULAR-FILE)))",
            "'vnode-type' is not a filter zpolicy emits", 33},
           {"(allow file-write-setugid (subpath \"/\"))", "unknown or unsupported operation", 1},
           {"(allow file-write* (literal (string-append (param \"WRITABLE_ROOT_0\") \"/x\")))",
            "takes a string or (param", 20},
           {"(allow file-write* (literal \"/" + std::string(1023, 'a') + "\"))",
            "longer than 1023 bytes (macOS MAXPATHLEN)", 20},
       }) {
    BOOST_TEST_CONTEXT(c.rule) {
      int line = 0;
      const auto findings = verify(g, with_rule_last(g.profile, c.rule, &line));
      BOOST_REQUIRE_EQUAL(findings.size(), 1u);
      const ir::Diagnostic& f = findings.front();
      BOOST_TEST((f.kind == "malformed-artifact"));
      BOOST_TEST(f.loc.file == "profile.sb");
      BOOST_TEST(f.loc.line == line);
      BOOST_TEST(f.loc.col == c.col, f.report());
      BOOST_TEST(f.actual.find(c.message) != std::string::npos, f.report());
    }
  }
}

BOOST_AUTO_TEST_CASE(more_than_64_distinct_ports_are_refused_at_the_rule_that_names_one_too_many) {
  const Golden g = golden("default");
  std::string text = g.profile;
  const int first = line_count(text) + 1;
  for (int port = 1000; port < 1065; ++port)
    text += "(deny network-outbound (remote ip \"*:" + std::to_string(port) + "\"))\n";
  // Naming a port again adds nothing.
  const auto findings = verify(g, text);
  BOOST_REQUIRE_EQUAL(findings.size(), 1u);
  BOOST_TEST(findings.front().loc.line == first + 64);
  BOOST_TEST(findings.front().actual.find("more than 64 distinct ports") != std::string::npos);
  std::string repeated = g.profile;
  for (int n = 0; n < 200; ++n)
    repeated += "(deny network-outbound (remote ip \"*:" + std::to_string(1000 + n % 64) + "\"))\n";
  BOOST_TEST(verify(g, repeated).empty(), all(verify(g, repeated)));
}

BOOST_AUTO_TEST_CASE(parameters_and_policy_paths_longer_than_maxpathlen_are_refused) {
  Golden g = golden("default");
  const std::string long_path = "/" + std::string(1100, 'x');
  auto findings = verify(g, g.profile, g.params + "EXTRA=" + long_path + "\n");
  BOOST_REQUIRE_EQUAL(findings.size(), 1u);
  BOOST_TEST(findings.front().loc.file == "params.txt");
  BOOST_TEST(findings.front().actual == "1101 bytes");
  g.policy.deny.push_back({long_path, ir::HostKind::Unknown, {"p.yaml", 9, 5}});
  findings = verify(g, g.profile);
  BOOST_REQUIRE_EQUAL(findings.size(), 1u);
  BOOST_TEST(findings.front().loc.str() == "p.yaml:9:5");
}

// Nesting is bounded by the reader, with a located error, at any depth.
BOOST_AUTO_TEST_CASE(deeply_nested_filters_are_refused_with_their_location) {
  const Golden g = golden("default");
  for (const int depth : {20, 3000, 200000}) {
    std::string rule = "(allow file-write* ";
    for (int i = 0; i < depth; ++i) rule += "(require-any ";
    rule += "(subpath \"/Users\")";
    rule += std::string(static_cast<size_t>(depth), ')') + ")";
    int line = 0;
    const auto findings = verify(g, with_rule_last(g.profile, rule, &line));
    BOOST_REQUIRE_EQUAL(findings.size(), 1u);
    BOOST_TEST(findings.front().loc.line == line);
    BOOST_TEST(findings.front().actual.find("nested deeper than 16") != std::string::npos,
               findings.front().report());
  }
}

// Exit 3 at the command line, for the first two reproductions of the issue.
BOOST_AUTO_TEST_CASE(verify_exits_3_on_the_issue_reproductions) {
  for (const char* rule : {"(allow file-write* (subpath \"/Users\"))",
                           "(allow file-write* (literal \"/etc/passwd\"))"}) {
    test::Cli cli;
    cli.copy_golden("default.yaml", "p.yaml");
    cli.copy_golden("default.macos/params.txt", "out/params.txt");
    const std::string profile =
        test::slurp(std::string(ZPOLICY_SOURCE_DIR) + "/golden/default.macos/profile.sb");
    cli.dir.write("out/profile.sb", profile + rule + "\n");
    const auto r = cli.run({"verify", "p.yaml", "out", "--target", "macos"});
    BOOST_TEST(r.exit_code == 3, rule << "\n" << r.err);
    BOOST_TEST(r.err.find("dropped-deny: file-write-data") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("(profile.sb line " + std::to_string(line_count(profile) + 1) + ")") !=
                   std::string::npos,
               r.err);
  }
}

BOOST_AUTO_TEST_SUITE_END()
