// Every key of policy language version 1 lands in the right IR value, with the policy
// line:col that set it (DESIGN.md "Policy language (version 1)").
#include <boost/test/unit_test.hpp>

#include "compiler/frontend/policy_parser.hpp"
#include "support/parse.hpp"
#include "support/policy_dump.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
using test::dump;
using test::parse;

namespace {

ir::Policy parse_ok(const std::string& text) {
  auto r = parse(text);
  BOOST_TEST_REQUIRE(r.errors == "");
  BOOST_TEST_REQUIRE(r.policy.has_value());
  return *r.policy;
}

std::string header(const char* mode = "workspace-write") {
  return std::string("zpolicy: 1\nmode: ") + mode + "\n";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(frontend_keys)

BOOST_AUTO_TEST_CASE(full_policy_every_key_with_provenance) {
  const std::string text =
      "zpolicy: 1\n"
      "mode: workspace-write\n"
      "filesystem:\n"
      "  read: [\"/\", \"/opt/tools\"]\n"
      "  write: [\"${WORKSPACE}\", \"${TMPDIR}/build\", \"~/cache\"]\n"
      "  protect: [.git, \"data/agent-sessions\", \"${HOME}/.config\"]\n"
      "  deny: [\"~/.ssh\", \"${HOME}/.aws\", /etc/shadow]\n"
      "network: loopback\n"
      "syscalls:\n"
      "  deny: [ptrace, process_vm_readv]\n"
      "  action: kill\n"
      "process:\n"
      "  env: {keep: [PATH, LC_*], set: {EDITOR: vi, A_1: \"x y\"}}\n"
      "  timeout: 90s\n"
      "unavailable: run-unconfined\n";
  const std::string expected =
      "origin p.yaml\n"
      "mode workspace-write @p.yaml:2:7\n"
      "read / @p.yaml:4:10\n"
      "read /opt/tools @p.yaml:4:15\n"
      "write ${WORKSPACE} @p.yaml:5:11\n"
      "write ${TMPDIR}/build @p.yaml:5:27\n"
      "write ${HOME}/cache @p.yaml:5:46\n"
      "protect .git @p.yaml:6:13\n"
      "protect data/agent-sessions @p.yaml:6:19\n"
      "protect ${HOME}/.config @p.yaml:6:42\n"
      "deny ${HOME}/.ssh @p.yaml:7:10\n"
      "deny ${HOME}/.aws @p.yaml:7:20\n"
      "deny /etc/shadow @p.yaml:7:36\n"
      "network loopback @p.yaml:8:10\n"
      "syscalls deny-list action kill @p.yaml:11:11\n"
      "rule ptrace kill @p.yaml:10:10\n"
      "rule process_vm_readv kill @p.yaml:10:18\n"
      "keep PATH @p.yaml:13:16\n"
      "keep LC_* @p.yaml:13:22\n"
      "set A_1=x y @p.yaml:13:47\n"
      "set EDITOR=vi @p.yaml:13:35\n"
      "timeout 90000ms @p.yaml:14:12\n"
      "unavailable run-unconfined @p.yaml:15:14\n";
  BOOST_TEST(dump(parse_ok(text)) == expected);
}

BOOST_AUTO_TEST_CASE(variables_become_symbolic_roots) {
  auto p = parse_ok(header() +
                    "filesystem:\n"
                    "  deny: [\"${WORKSPACE}/a\", \"${HOME}\", \"~/b\", \"${TMPDIR}/c/d\", \"/e\", "
                    "\"${TMPDIR}\"]\n");
  BOOST_TEST_REQUIRE(p.deny.size() == 6u);
  const ir::PathRoot roots[] = {ir::PathRoot::Workspace, ir::PathRoot::Home,
                                ir::PathRoot::Home,      ir::PathRoot::Tmpdir,
                                ir::PathRoot::Absolute,  ir::PathRoot::Tmpdir};
  const std::vector<std::vector<std::string>> comps = {{"a"}, {}, {"b"}, {"c", "d"}, {"e"}, {}};
  for (size_t i = 0; i < 6; ++i) {
    BOOST_TEST((p.deny[i].value.root == roots[i]), "entry " << i);
    BOOST_TEST(p.deny[i].value.components == comps[i], "entry " << i);
  }
  auto tilde = parse_ok(header() + "filesystem:\n  deny: [\"~\"]\n");
  BOOST_TEST((tilde.deny.at(0).value == p.deny[1].value));
}

BOOST_AUTO_TEST_CASE(paths_are_normalized) {
  auto p = parse_ok(header() +
                    "filesystem:\n"
                    "  read: [\"/a/./b//c/\", \"//\"]\n"
                    "  protect: [\"./.git\", \"x//y/\"]\n");
  BOOST_TEST(p.read[0].value.str() == "/a/b/c");
  BOOST_TEST(p.read[1].value.str() == "/");
  BOOST_TEST(p.read[1].value.components.empty());
  BOOST_TEST(p.protect[0].value.str() == ".git");
  BOOST_TEST(p.protect[0].value.is_relative());
  BOOST_TEST(p.protect[1].value.str() == "x/y");
}

BOOST_AUTO_TEST_CASE(defaults_when_keys_are_omitted) {
  const std::string expected =
      "origin p.yaml\n"
      "mode workspace-write @p.yaml:2:7\n"
      "read / @<builtin>\n"
      "write ${WORKSPACE} @<builtin>\n"
      "protect .git @<builtin>\n"
      "protect .env @<builtin>\n"
      "protect .env.local @<builtin>\n"
      "protect node_modules @<builtin>\n"
      "protect .next @<builtin>\n"
      "protect data/agent-sessions @<builtin>\n"
      "protect-pattern **/.git @<builtin>\n"
      "protect-pattern **/.hg @<builtin>\n"
      "protect-pattern **/.sl @<builtin>\n"
      "protect-pattern **/.jj @<builtin>\n"
      "network none @<builtin>\n"
      "syscalls deny-list action errno(1) @<builtin>\n"
      "keep PATH @<builtin>\n"
      "keep HOME @<builtin>\n"
      "keep USER @<builtin>\n"
      "keep LOGNAME @<builtin>\n"
      "keep LANG @<builtin>\n"
      "keep LC_* @<builtin>\n"
      "keep TERM @<builtin>\n"
      "keep TZ @<builtin>\n"
      "keep SHELL @<builtin>\n"
      "unavailable deny @<builtin>\n";
  BOOST_TEST(dump(parse_ok(header())) == expected);
}

BOOST_AUTO_TEST_CASE(read_only_gets_no_default_writable_root) {
  auto p = parse_ok(header("read-only"));
  BOOST_TEST((p.mode.value == ir::Mode::ReadOnly));
  BOOST_TEST(p.write.empty());
  BOOST_TEST(p.read.size() == 1u);
}

BOOST_AUTO_TEST_CASE(every_mode_spelling) {
  const std::pair<const char*, ir::Mode> cases[] = {
      {"read-only", ir::Mode::ReadOnly},
      {"read_only", ir::Mode::ReadOnly},
      {"workspace-write", ir::Mode::WorkspaceWrite},
      {"workspace_write", ir::Mode::WorkspaceWrite},
      {"danger-full-access", ir::Mode::DangerFullAccess},
      {"danger_full_access", ir::Mode::DangerFullAccess},
      {"\"read_only\"", ir::Mode::ReadOnly},
  };
  for (const auto& [text, mode] : cases) {
    auto p = parse_ok(header(text));
    BOOST_TEST((p.mode.value == mode), text);
    BOOST_TEST(p.mode.loc.str() == "p.yaml:2:7", text);
  }
}

BOOST_AUTO_TEST_CASE(every_network_value) {
  const std::pair<const char*, ir::Network> cases[] = {{"none", ir::Network::None},
                                                       {"loopback", ir::Network::Loopback},
                                                       {"full", ir::Network::Full}};
  for (const auto& [text, net] : cases) {
    auto p = parse_ok(header() + "network: " + text + "\n");
    BOOST_TEST((p.network.value == net), text);
    BOOST_TEST(p.network.loc.str() == "p.yaml:3:10", text);
  }
}

BOOST_AUTO_TEST_CASE(every_unavailable_value) {
  auto deny = parse_ok(header() + "unavailable: deny\n");
  BOOST_TEST((deny.unavailable.value == ir::Unavailable::Deny));
  BOOST_TEST(deny.unavailable.loc.str() == "p.yaml:3:14");
  auto unconfined = parse_ok(header() + "unavailable: run-unconfined\n");
  BOOST_TEST((unconfined.unavailable.value == ir::Unavailable::RunUnconfined));
}

BOOST_AUTO_TEST_CASE(deny_list_action_applies_to_every_rule_whatever_the_key_order) {
  auto p = parse_ok(header() + "syscalls:\n  action: errno\n  deny: [ptrace, kexec_load]\n");
  BOOST_TEST((p.syscalls.style == ir::SyscallSpec::Style::DenyList));
  BOOST_TEST(p.syscalls.action.value.str() == "errno(1)");
  BOOST_TEST(p.syscalls.action.loc.str() == "p.yaml:4:11");
  BOOST_TEST_REQUIRE(p.syscalls.rules.size() == 2u);
  BOOST_TEST(test::dump_rule(p.syscalls.rules[0]) == "ptrace errno(1) @p.yaml:5:10");
  BOOST_TEST(test::dump_rule(p.syscalls.rules[1]) == "kexec_load errno(1) @p.yaml:5:18");

  auto k = parse_ok(header() + "syscalls:\n  deny: [ptrace]\n  action: kill\n");
  BOOST_TEST(test::dump_rule(k.syscalls.rules.at(0)) == "ptrace kill @p.yaml:4:10");
}

BOOST_AUTO_TEST_CASE(allow_list_with_default_action) {
  auto p = parse_ok(header() + "syscalls:\n  default: kill\n  allow: [read, write, exit_group]\n");
  BOOST_TEST((p.syscalls.style == ir::SyscallSpec::Style::AllowList));
  BOOST_TEST(p.syscalls.action.value.str() == "kill");
  BOOST_TEST(p.syscalls.action.loc.str() == "p.yaml:4:12");
  BOOST_TEST_REQUIRE(p.syscalls.rules.size() == 3u);
  BOOST_TEST(test::dump_rule(p.syscalls.rules[0]) == "read allow @p.yaml:5:11");
  BOOST_TEST(test::dump_rule(p.syscalls.rules[1]) == "write allow @p.yaml:5:17");
  BOOST_TEST(test::dump_rule(p.syscalls.rules[2]) == "exit_group allow @p.yaml:5:24");

  auto e = parse_ok(header() + "syscalls: {default: errno, allow: [read]}\n");
  BOOST_TEST(e.syscalls.action.value.str() == "errno(1)");
}

BOOST_AUTO_TEST_CASE(every_duration_unit) {
  const std::pair<const char*, long long> cases[] = {
      {"500ms", 500},  {"120s", 120000}, {"120", 120000},       {"10m", 600000},
      {"2h", 7200000}, {"\"5s\"", 5000}, {"168h", 604800000LL}, {"1ms", 1},
  };
  for (const auto& [text, ms] : cases) {
    auto p = parse_ok(header() + "process:\n  timeout: " + text + "\n");
    BOOST_TEST_REQUIRE(p.timeout.has_value(), text);
    BOOST_TEST(p.timeout->value.count() == ms, text);
    BOOST_TEST(p.timeout->loc.str() == "p.yaml:4:12", text);
  }
  BOOST_TEST(!parse_ok(header()).timeout.has_value());
}

BOOST_AUTO_TEST_CASE(env_keep_and_set) {
  auto p = parse_ok(header() +
                    "process:\n"
                    "  env:\n"
                    "    keep: [PATH, LC_*, _X9]\n"
                    "    set:\n"
                    "      GREETING: \"hello: world\"\n"
                    "      EMPTY: \"\"\n"
                    "      NUM: 42\n");
  BOOST_TEST_REQUIRE(p.env.keep.size() == 3u);
  BOOST_TEST(p.env.keep[2].value == "_X9");
  BOOST_TEST(p.env.keep[2].loc.str() == "p.yaml:5:24");
  BOOST_TEST(p.env.set.at("GREETING").value == "hello: world");
  BOOST_TEST(p.env.set.at("GREETING").loc.str() == "p.yaml:7:7");
  BOOST_TEST(p.env.set.at("EMPTY").value == "");
  BOOST_TEST(p.env.set.at("NUM").value == "42");
}

BOOST_AUTO_TEST_CASE(env_without_keep_keeps_the_default_list_and_empty_keep_keeps_nothing) {
  auto dflt = parse_ok(header() + "process:\n  env: {set: {A: b}}\n");
  std::vector<std::string> names;
  for (const auto& k : dflt.env.keep) names.push_back(k.value);
  BOOST_TEST(names == ir::default_env_keep());
  auto none = parse_ok(header() + "process:\n  env: {keep: []}\n");
  BOOST_TEST(none.env.keep.empty());
}

BOOST_AUTO_TEST_CASE(explicit_empty_lists_replace_the_defaults) {
  auto p = parse_ok(header() + "filesystem:\n  read: []\n  write: []\n  protect: []\n  deny: []\n");
  BOOST_TEST(p.read.empty());
  BOOST_TEST(p.write.empty());
  BOOST_TEST(p.protect.empty());
  BOOST_TEST(p.deny.empty());
}

BOOST_AUTO_TEST_CASE(block_style_and_flow_style_give_the_same_policy) {
  auto block = parse_ok(header() +
                        "filesystem:\n"
                        "  deny:\n"
                        "    - ~/.ssh\n"
                        "    - /srv\n");
  auto flow = parse_ok(header() + "filesystem: {deny: [~/.ssh, /srv]}\n");
  BOOST_TEST_REQUIRE(block.deny.size() == 2u);
  BOOST_TEST_REQUIRE(flow.deny.size() == 2u);
  for (size_t i = 0; i < 2; ++i) BOOST_TEST((block.deny[i].value == flow.deny[i].value));
  BOOST_TEST(block.deny[0].loc.str() == "p.yaml:5:7");
  BOOST_TEST(block.deny[1].loc.str() == "p.yaml:6:7");
}

BOOST_AUTO_TEST_CASE(comments_and_document_markers_are_accepted) {
  auto p = parse_ok("# a policy\n---\nzpolicy: 1  # version\nmode: read-only\n...\n");
  BOOST_TEST((p.mode.value == ir::Mode::ReadOnly));
  BOOST_TEST(p.mode.loc.str() == "p.yaml:4:7");
}

BOOST_AUTO_TEST_CASE(load_policy_file_locates_rules_with_the_file_path) {
  test::TempDir dir;
  auto path = dir.write("team/policy.yaml", "zpolicy: 1\nmode: read-only\nnetwork: loopback\n");
  ir::Diagnostics diags;
  auto p = compiler::load_policy_file(path, diags);
  BOOST_TEST_REQUIRE(p.has_value(), diags.str());
  BOOST_TEST(p->origin.str() == path);
  BOOST_TEST(p->network.loc.str() == path + ":3:10");
}

BOOST_AUTO_TEST_CASE(unreadable_policy_file_is_a_diagnostic) {
  test::TempDir dir;
  ir::Diagnostics diags;
  BOOST_TEST(!compiler::load_policy_file(dir / "missing.yaml", diags).has_value());
  BOOST_TEST(!compiler::load_policy_file(dir.str(), diags).has_value());
  BOOST_TEST(diags.str() == dir / "missing.yaml" + ": error: cannot read policy file: No such file or directory\n" +
                                dir.str() + ": error: cannot read policy file: Is a directory\n");
}

BOOST_AUTO_TEST_SUITE_END()
