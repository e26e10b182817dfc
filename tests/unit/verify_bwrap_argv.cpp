#include <boost/test/unit_test.hpp>
#include <string>
#include <utility>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "verify_bwrap_fixture.hpp"

using namespace zpolicy::compiler;

BOOST_AUTO_TEST_SUITE(verify_bwrap_argv)

BOOST_AUTO_TEST_CASE(parses_the_expected_shape_into_ordered_ops_and_flags) {
  auto r = parse_bwrap_args(zpolicy::test::render(zpolicy::test::workspace_argv()));
  BOOST_TEST_REQUIRE(r.has_value());
  const auto& a = *r;
  BOOST_TEST(a.flags.new_session);
  BOOST_TEST(a.flags.die_with_parent);
  BOOST_TEST(a.flags.unshare_user);
  BOOST_TEST(!a.flags.unshare_user_try);
  BOOST_TEST(a.flags.unshare_ipc);
  BOOST_TEST(a.flags.unshare_pid);
  BOOST_TEST(a.flags.unshare_uts);
  BOOST_TEST(a.flags.unshare_cgroup_try);
  BOOST_TEST(a.flags.unshare_net);
  BOOST_TEST(a.flags.disable_userns);
  BOOST_TEST(a.flags.cap_drop_all);
  BOOST_TEST((a.flags.seccomp_fd == std::optional<int>(3)));
  BOOST_TEST(a.flags.chdir->str() == "${WORKSPACE}");
  BOOST_TEST_REQUIRE(a.ops.size() == 13u);
  BOOST_TEST((a.ops[0].kind == BwrapOpKind::RoBind));
  BOOST_TEST(a.paths->path(*a.ops[0].source).str() == "/");
  BOOST_TEST(a.ops[0].line == 12);
  BOOST_TEST(a.ops[0].text == "--ro-bind / /");
  BOOST_TEST((a.ops[1].kind == BwrapOpKind::Dev));
  BOOST_TEST((a.ops[3].kind == BwrapOpKind::Tmpfs));
  BOOST_TEST(!a.ops[3].perms.has_value());
  BOOST_TEST((a.ops[9].kind == BwrapOpKind::Tmpfs));
  BOOST_TEST((a.ops[9].perms == std::optional<unsigned>(0)));
  BOOST_TEST(a.paths->path(a.ops[9].dest).str() == "${HOME}/.ssh");
  BOOST_TEST((a.ops[10].kind == BwrapOpKind::RemountRo));
  BOOST_TEST(a.paths->path(*a.ops[11].source).str() == "/dev/null");
}

BOOST_AUTO_TEST_CASE(try_variants_and_network_precedence) {
  auto r =
      parse_bwrap_args("--unshare-net\n--share-net\n--bind-try\n/a\n/b\n--ro-bind-try\n/c\n/d\n");
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST(!r->flags.unshare_net);
  BOOST_TEST(r->ops[0].try_source);
  BOOST_TEST((r->ops[0].kind == BwrapOpKind::Bind));
  BOOST_TEST((r->ops[1].kind == BwrapOpKind::RoBind));
  auto again = parse_bwrap_args("--share-net\n--unshare-net\n");
  BOOST_TEST(again->flags.unshare_net);
  auto all = parse_bwrap_args("--unshare-all\n");
  BOOST_TEST(all->flags.unshare_user_try);
  BOOST_TEST(!all->flags.unshare_user);
  BOOST_TEST(all->flags.unshare_net);
}

BOOST_AUTO_TEST_CASE(perms_apply_only_to_the_next_tmpfs_or_dir) {
  auto r = parse_bwrap_args(
      "--perms\n0700\n--size\n4096\n--tmpfs\n/a\n--tmpfs\n/b\n--perms\n0750\n--dir\n/c\n");
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST((r->ops[0].perms == std::optional<unsigned>(0700)));
  BOOST_TEST(!r->ops[1].perms.has_value());
  BOOST_TEST((r->ops[2].perms == std::optional<unsigned>(0750)));
  auto chmod = parse_bwrap_args("--chmod\n0644\n/x\n--symlink\n../t\n/l\n");
  BOOST_TEST_REQUIRE(chmod.has_value());
  BOOST_TEST((chmod->ops[0].perms == std::optional<unsigned>(0644)));
  BOOST_TEST(chmod->ops[1].link_target == "../t");
}

struct Bad {
  const char* text;
  int line;
  const char* message_part;
};

BOOST_AUTO_TEST_CASE(rejects_what_it_does_not_understand_with_the_line) {
  const Bad cases[] = {
      {"--ro-bind\n/\n", 1, "missing argument"},
      {"--bind\n/a\nrelative\n", 3, "not an absolute path"},
      {"--bind-data\n3\n/x\n", 1, "outside the subset"},
      {"--cap-add\nALL\n", 1, "outside the subset"},
      {"--setenv\nA\nB\n", 1, "outside the subset"},
      {"/stray\n", 1, "not an option"},
      {"--perms\n0000\n--bind\n/a\n/a\n", 1, "--perms must be followed"},
      {"--perms\n0000\n", 1, "--perms must be followed"},
      {"--perms\n0800\n--tmpfs\n/a\n", 2, "octal"},
      {"--perms\n000\n--perms\n000\n--tmpfs\n/a\n", 3, "twice"},
      {"--size\n10\n--dir\n/a\n", 1, "--size must be followed"},
      {"--disable-userns\n--unshare-user-try\n", 1, "requires --unshare-user"},
      {"--seccomp\nthree\n", 2, "file descriptor"},
      {"--cap-drop\nsys_admin\n", 2, "unknown capability"},
      {"--tmpfs\n/a/../b\n", 2, "not an absolute path"},
      {"--new-session\n--\n/bin/sh\n", 2, "'--'"},
      {"--tmpfs\n/a\r\n", 2, "control character"},
      {"--chdir\n\n", 2, "not an absolute path"},
  };
  for (const auto& c : cases) {
    auto r = parse_bwrap_args(c.text);
    BOOST_TEST_CONTEXT(c.text) {
      BOOST_TEST_REQUIRE(!r.has_value());
      BOOST_TEST(r.error().loc.line == c.line);
      BOOST_TEST(r.error().message.find(c.message_part) != std::string::npos, r.error().message);
    }
  }
}

// The first control character, of either kind, names the line; one in a last line
// without its newline counts too.
BOOST_AUTO_TEST_CASE(a_control_character_is_reported_at_its_line) {
  using namespace std::string_literals;
  const std::pair<std::string, int> cases[] = {
      {"--tmpfs\n/a\n--dir\n/b\0c\n--tmpfs\n/c\r\n"s, 4},
      {"--tmpfs\n/a\n--dir\n/b\rc\n--tmpfs\n/c\0\n"s, 4},
      {"--tmpfs\n/a\n--dir\n/b\r"s, 4},
      {"\0--tmpfs\n/a\n"s, 1},
  };
  for (const auto& [text, line] : cases) {
    auto r = parse_bwrap_args(text);
    BOOST_TEST_REQUIRE(!r.has_value());
    BOOST_TEST(r.error().loc.line == line);
    BOOST_TEST(r.error().message.find("control character") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(empty_artifact_has_no_ops) {
  auto r = parse_bwrap_args("");
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST(r->ops.empty());
  BOOST_TEST(!r->flags.new_session);
}

BOOST_AUTO_TEST_SUITE_END()
