// Every class of invalid policy is refused with its exact `file:line:col: error: reason`
// and no IR at all (DESIGN.md: "nothing is compiled or run").
#include <boost/test/unit_test.hpp>

#include "support/parse.hpp"

using zpolicy::test::parse;

namespace {

void expect_errors(const std::string& text, const std::string& expected) {
  auto r = parse(text);
  BOOST_TEST(!r.policy.has_value());
  BOOST_TEST(r.errors == expected);
}

const std::string kHead = "zpolicy: 1\nmode: workspace-write\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(frontend_errors)

BOOST_AUTO_TEST_CASE(unknown_key_with_hint) {
  expect_errors(kHead + "netwrok: none\n",
                "p.yaml:3:1: error: unknown key 'netwrok'; did you mean 'network'?\n");
  expect_errors(kHead + "filesystem:\n  raed: [/]\n",
                "p.yaml:4:3: error: unknown key 'raed'; did you mean 'read'?\n");
  expect_errors(kHead + "syscalls:\n  deny: [ptrace]\n  acton: kill\n",
                "p.yaml:5:3: error: unknown key 'acton'; did you mean 'action'?\n");
  expect_errors(kHead + "process:\n  env: {kepe: [PATH]}\n",
                "p.yaml:4:9: error: unknown key 'kepe'; did you mean 'keep'?\n");
}

BOOST_AUTO_TEST_CASE(unknown_key_without_close_match_has_no_hint) {
  expect_errors(kHead + "colour: red\n", "p.yaml:3:1: error: unknown key 'colour'\n");
}

BOOST_AUTO_TEST_CASE(non_scalar_key) {
  expect_errors(kHead + "? [a, b]\n: x\n", "p.yaml:3:3: error: keys must be plain names\n");
}

BOOST_AUTO_TEST_CASE(wrong_type) {
  expect_errors(kHead + "network: [none]\n",
                "p.yaml:3:10: error: 'network' must be a scalar, not a list\n");
  expect_errors(kHead + "filesystem: [/]\n",
                "p.yaml:3:13: error: 'filesystem' must be a mapping, not a list\n");
  expect_errors(kHead + "filesystem:\n  read: /\n",
                "p.yaml:4:9: error: 'read' must be a list, not a scalar\n");
  expect_errors(kHead + "filesystem:\n  deny: [[/a]]\n",
                "p.yaml:4:10: error: each entry of 'deny' must be a string, not a list\n");
  expect_errors(kHead + "filesystem:\n  deny: [~]\n",
                "p.yaml:4:10: error: each entry of 'deny' must be a string, not nothing\n");
  expect_errors(kHead + "syscalls: deny\n",
                "p.yaml:3:11: error: 'syscalls' must be a mapping, not a scalar\n");
  expect_errors(kHead + "process:\n  timeout: {s: 1}\n",
                "p.yaml:4:12: error: 'timeout' must be a scalar, not a mapping\n");
  expect_errors(kHead + "process:\n  env: {set: {A: [1]}}\n",
                "p.yaml:4:18: error: the value of 'A' must be a string, not a list\n");
  expect_errors(kHead + "unavailable:\n",
                "p.yaml:3:1: error: 'unavailable' must be a scalar, not nothing\n");
  expect_errors("- zpolicy: 1\n", "p.yaml:1:1: error: the policy must be a mapping, not a list\n");
}

BOOST_AUTO_TEST_CASE(duplicate_key) {
  expect_errors(kHead + "mode: read-only\n",
                "p.yaml:3:1: error: duplicate key 'mode' (first set at line 2)\n");
  expect_errors(kHead + "filesystem:\n  deny: [/a]\n  read: [/]\n  deny: [/b]\n",
                "p.yaml:6:3: error: duplicate key 'deny' (first set at line 4)\n");
  expect_errors(kHead + "process:\n  env:\n    set: {A: x, A: y}\n",
                "p.yaml:5:17: error: duplicate key 'A' (first set at line 5)\n");
}

BOOST_AUTO_TEST_CASE(duplicate_list_entries) {
  expect_errors(kHead + "filesystem:\n  deny: [\"~/.ssh\", \"${HOME}/.ssh\"]\n",
                "p.yaml:4:20: error: '${HOME}/.ssh' is listed twice in 'deny'\n");
  expect_errors(kHead + "syscalls:\n  deny: [ptrace, ptrace]\n",
                "p.yaml:4:18: error: syscall 'ptrace' is listed twice\n");
}

BOOST_AUTO_TEST_CASE(bad_enum) {
  expect_errors("zpolicy: 1\nmode: readonly\n",
                "p.yaml:2:7: error: invalid mode 'readonly' (expected one of: read-only, "
                "workspace-write, danger-full-access); did you mean 'read-only'?\n");
  expect_errors(
      kHead + "network: nnoe\n",
      "p.yaml:3:10: error: invalid network 'nnoe' (expected one of: none, loopback, full); "
      "did you mean 'none'?\n");
  expect_errors(
      kHead + "network: internet\n",
      "p.yaml:3:10: error: invalid network 'internet' (expected one of: none, loopback, full)\n");
  expect_errors(kHead + "syscalls:\n  action: erno\n",
                "p.yaml:4:11: error: invalid action 'erno' (expected errno or kill); did you mean "
                "'errno'?\n");
  expect_errors(kHead + "syscalls:\n  default: allow\n  allow: [read]\n",
                "p.yaml:4:12: error: invalid default 'allow' (expected errno or kill)\n");
  expect_errors(kHead + "unavailable: run_unconfined\n",
                "p.yaml:3:14: error: invalid unavailable 'run_unconfined' (expected one of: deny, "
                "run-unconfined); did you mean 'run-unconfined'?\n");
}

BOOST_AUTO_TEST_CASE(missing_or_unsupported_version) {
  expect_errors("mode: read-only\n",
                "p.yaml:1:1: error: missing required key 'zpolicy' (the schema version; write "
                "'zpolicy: 1')\n");
  expect_errors(
      "zpolicy: 2\nmode: read-only\n",
      "p.yaml:1:10: error: unsupported schema version 2 (this zpolicy reads version 1)\n");
  expect_errors("zpolicy: \"1\"\nmode: read-only\n",
                "p.yaml:1:10: error: 'zpolicy' must be the schema version number 1, not '1'\n");
  expect_errors("zpolicy: 1.0\nmode: read-only\n",
                "p.yaml:1:10: error: 'zpolicy' must be the schema version number 1, not '1.0'\n");
  expect_errors("zpolicy: [1]\nmode: read-only\n",
                "p.yaml:1:10: error: 'zpolicy' must be a scalar, not a list\n");
}

BOOST_AUTO_TEST_CASE(missing_mode) {
  expect_errors("zpolicy: 1\n",
                "p.yaml:1:1: error: missing required key 'mode' (read-only, workspace-write or "
                "danger-full-access)\n");
}

BOOST_AUTO_TEST_CASE(unknown_variable) {
  expect_errors(
      kHead + "filesystem:\n  write: [\"${WORKDIR}/x\"]\n",
      "p.yaml:4:11: error: in 'write': unknown variable '${WORKDIR}' (known: ${WORKSPACE}, "
      "${HOME}, ${TMPDIR}, ~)\n");
  expect_errors(kHead + "filesystem:\n  deny: [\"${HOME\"]\n",
                "p.yaml:4:10: error: in 'deny': unterminated variable in '${HOME'\n");
  expect_errors(kHead + "filesystem:\n  deny: [\"/a/${HOME}\"]\n",
                "p.yaml:4:10: error: in 'deny': a variable may only start a path\n");
  expect_errors(
      kHead + "filesystem:\n  deny: [\"${HOME}x\"]\n",
      "p.yaml:4:10: error: in 'deny': a variable must be followed by '/' or end the path\n");
  expect_errors(
      kHead + "filesystem:\n  deny: [\"~root/.ssh\"]\n",
      "p.yaml:4:10: error: in 'deny': '~user' paths are not supported; use ~/ or ${HOME}\n");
}

BOOST_AUTO_TEST_CASE(dot_dot_component) {
  expect_errors(kHead + "filesystem:\n  write: [\"${WORKSPACE}/../x\"]\n",
                "p.yaml:4:11: error: in 'write': '..' is not allowed in a path\n");
  expect_errors(kHead + "filesystem:\n  protect: [../.git]\n",
                "p.yaml:4:13: error: in 'protect': '..' is not allowed in a path\n");
  expect_errors(kHead + "filesystem:\n  read: [/usr/..]\n",
                "p.yaml:4:10: error: in 'read': '..' is not allowed in a path\n");
}

BOOST_AUTO_TEST_CASE(relative_path_where_absolute_is_required) {
  expect_errors(
      kHead + "filesystem:\n  read: [etc]\n",
      "p.yaml:4:10: error: in 'read': relative path 'etc'; an absolute path or a variable "
      "is required\n");
  expect_errors(kHead + "filesystem:\n  write: [build]\n",
                "p.yaml:4:11: error: in 'write': relative path 'build'; an absolute path or a "
                "variable is required\n");
  expect_errors(
      kHead + "filesystem:\n  deny: [.ssh]\n",
      "p.yaml:4:10: error: in 'deny': relative path '.ssh'; an absolute path or a variable "
      "is required\n");
}

BOOST_AUTO_TEST_CASE(a_shell_variable_is_named_as_one_not_as_a_relative_path) {
  expect_errors(kHead + "filesystem:\n  write: [\"$HOME/.cache\"]\n",
                "p.yaml:4:11: error: in 'write': '$HOME/.cache': shell variables are not expanded "
                "in a policy; the variables are ${WORKSPACE}, ${HOME}, ${TMPDIR} and ~\n");
}

BOOST_AUTO_TEST_CASE(empty_or_dot_path) {
  expect_errors(kHead + "filesystem:\n  deny: [\"\"]\n",
                "p.yaml:4:10: error: in 'deny': empty path\n");
  expect_errors(kHead + "filesystem:\n  protect: [\".\"]\n",
                "p.yaml:4:13: error: in 'protect': relative path names nothing\n");
}

BOOST_AUTO_TEST_CASE(nul_or_newline_in_a_path) {
  expect_errors(kHead + "filesystem:\n  write: [\"/a\\0b\"]\n",
                "p.yaml:4:11: error: in 'write': path contains a NUL byte\n");
  expect_errors(kHead + "filesystem:\n  deny: [\"/a\\nb\"]\n",
                "p.yaml:4:10: error: in 'deny': path contains a newline\n");
  expect_errors(kHead + "filesystem:\n  protect: [\".git\\r\"]\n",
                "p.yaml:4:13: error: in 'protect': path contains a newline\n");
}

BOOST_AUTO_TEST_CASE(user_text_cannot_break_the_one_line_diagnostic) {
  auto r = parse("zpolicy: 1\nmode: \"read\\nonly\\u0000\"\n");
  BOOST_TEST(!r.policy.has_value());
  BOOST_TEST(r.errors ==
             "p.yaml:2:7: error: invalid mode 'read\\nonly\\x00' (expected one of: read-only, "
             "workspace-write, danger-full-access); did you mean 'read-only'?\n");
}

BOOST_AUTO_TEST_CASE(unknown_syscall) {
  expect_errors(kHead + "syscalls:\n  deny: [ptrace, frobnicate]\n",
                "p.yaml:4:18: error: unknown syscall 'frobnicate'\n");
  expect_errors(kHead + "syscalls:\n  default: errno\n  allow: [read, rite]\n",
                "p.yaml:5:17: error: unknown syscall 'rite'; did you mean 'write'?\n");
  expect_errors(kHead + "syscalls:\n  deny: [ptrac]\n",
                "p.yaml:4:10: error: unknown syscall 'ptrac'; did you mean 'ptrace'?\n");
}

// Found by tests/fuzz (a 64 KiB name took seconds): a hint is looked for only among names
// of about the same length, the nearest ones still found at the edge of that window.
BOOST_AUTO_TEST_CASE(unknown_syscall_of_any_length) {
  const std::string huge(1 << 19, 'x');
  expect_errors(kHead + "syscalls:\n  deny: [" + huge + "]\n",
                "p.yaml:4:10: error: unknown syscall '" + huge + "'\n");
  expect_errors(kHead + "syscalls:\n  deny: [ptracexy]\n",
                "p.yaml:4:10: error: unknown syscall 'ptracexy'; did you mean 'ptrace'?\n");
  expect_errors(kHead + "syscalls:\n  deny: [ptracexyz]\n",
                "p.yaml:4:10: error: unknown syscall 'ptracexyz'\n");
}

BOOST_AUTO_TEST_CASE(malformed_duration) {
  const std::pair<const char*, const char*> cases[] = {
      {"12x", "malformed duration '12x' (expected e.g. 500ms, 120s, 10m, 2h)"},
      {"1.5s", "malformed duration '1.5s' (expected e.g. 500ms, 120s, 10m, 2h)"},
      {"-1s", "malformed duration '-1s' (expected e.g. 500ms, 120s, 10m, 2h)"},
      {"s", "malformed duration 's' (expected e.g. 500ms, 120s, 10m, 2h)"},
      {"\"\"", "malformed duration '' (expected e.g. 500ms, 120s, 10m, 2h)"},
      {"5 s", "malformed duration '5 s' (expected e.g. 500ms, 120s, 10m, 2h)"},
      {"2d", "malformed duration '2d' (expected e.g. 500ms, 120s, 10m, 2h)"},
      {"0s", "timeout '0s' is out of range (more than 0, at most 7 days)"},
      {"169h", "timeout '169h' is out of range (more than 0, at most 7 days)"},
      {"99999999999999999999s",
       "malformed duration '99999999999999999999s' (expected e.g. 500ms, "
       "120s, 10m, 2h)"},
  };
  for (const auto& [text, message] : cases)
    expect_errors(kHead + "process:\n  timeout: " + text + "\n",
                  std::string("p.yaml:4:12: error: ") + message + "\n");
}

BOOST_AUTO_TEST_CASE(invalid_environment_names) {
  expect_errors(kHead + "process:\n  env: {keep: [PATH, 1A, \"A B\", \"*\"]}\n",
                "p.yaml:4:22: error: invalid environment variable name '1A'\n"
                "p.yaml:4:26: error: invalid environment variable name 'A B'\n"
                "p.yaml:4:33: error: invalid environment variable name '*'\n");
  expect_errors(kHead + "process:\n  env: {set: {\"B-C\": x}}\n",
                "p.yaml:4:15: error: invalid environment variable name 'B-C'\n");
}

BOOST_AUTO_TEST_CASE(deny_list_and_allow_list_mixed) {
  expect_errors(
      kHead + "syscalls:\n  deny: [ptrace]\n  default: errno\n  allow: [read]\n",
      "p.yaml:4:3: error: 'syscalls' is either a deny-list (deny, action) or an allow-list "
      "(default, allow), not both\n");
  expect_errors(
      kHead + "syscalls:\n  action: kill\n  allow: [read]\n",
      "p.yaml:4:3: error: 'syscalls' is either a deny-list (deny, action) or an allow-list "
      "(default, allow), not both\n");
  expect_errors(kHead + "syscalls:\n  allow: [read]\n",
                "p.yaml:4:3: error: an allow-list needs both 'default' and 'allow'\n");
}

BOOST_AUTO_TEST_CASE(write_under_read_only) {
  expect_errors("zpolicy: 1\nmode: read-only\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n",
                "p.yaml:4:10: error: writable roots need mode workspace-write; this policy is "
                "read-only\n");
  expect_errors("zpolicy: 1\nmode: read_only\nfilesystem:\n  write:\n    - /srv\n",
                "p.yaml:5:5: error: writable roots need mode workspace-write; this policy is "
                "read-only\n");
}

BOOST_AUTO_TEST_CASE(run_unconfined_outside_workspace_write) {
  expect_errors("zpolicy: 1\nmode: read-only\nunavailable: run-unconfined\n",
                "p.yaml:3:14: error: 'unavailable: run-unconfined' is only allowed with mode "
                "workspace-write\n");
  expect_errors("zpolicy: 1\nmode: danger-full-access\nunavailable: run-unconfined\n",
                "p.yaml:3:14: error: 'unavailable: run-unconfined' is only allowed with mode "
                "workspace-write\n");
}

BOOST_AUTO_TEST_CASE(several_errors_in_one_run) {
  const std::string text =
      "zpolicy: 1\n"
      "mode: workspace-write\n"
      "netwrok: none\n"
      "filesystem:\n"
      "  write: [\"${FOO}\", build]\n"
      "  deny: [\"/a/../b\"]\n"
      "syscalls:\n"
      "  deny: [frobnicate]\n"
      "process:\n"
      "  timeout: 10y\n"
      "unavailable: maybe\n";
  expect_errors(
      text,
      "p.yaml:3:1: error: unknown key 'netwrok'; did you mean 'network'?\n"
      "p.yaml:5:11: error: in 'write': unknown variable '${FOO}' (known: ${WORKSPACE}, "
      "${HOME}, ${TMPDIR}, ~)\n"
      "p.yaml:5:21: error: in 'write': relative path 'build'; an absolute path or a "
      "variable is required\n"
      "p.yaml:6:10: error: in 'deny': '..' is not allowed in a path\n"
      "p.yaml:8:10: error: unknown syscall 'frobnicate'\n"
      "p.yaml:10:12: error: malformed duration '10y' (expected e.g. 500ms, 120s, 10m, 2h)\n"
      "p.yaml:11:14: error: invalid unavailable 'maybe' (expected one of: deny, "
      "run-unconfined)\n");
}

BOOST_AUTO_TEST_CASE(yaml_syntax_error_is_located) {
  auto r = parse("zpolicy: 1\nmode: [read-only\n");
  BOOST_TEST(!r.policy.has_value());
  BOOST_TEST(r.errors.rfind("p.yaml:3:1: error: YAML syntax error: ", 0) == 0, r.errors);
  BOOST_TEST(std::count(r.errors.begin(), r.errors.end(), '\n') == 1);
}

BOOST_AUTO_TEST_SUITE_END()
