// `zpolicy diff` and `check --within` on the command line: exit codes, --fail-on, the
// formats, and git's diff driver (docs/review.md).
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

namespace {

struct Cli {
  zpolicy::test::TempDir dir;

  zpolicy::test::ProcessResult run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {ZPOLICY_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return zpolicy::test::run_process(argv, dir.str(), dir.str());
  }
  zpolicy::test::ProcessResult sh(const std::string& script) const {
    return zpolicy::test::run_process({"/bin/sh", "-c", script}, dir.str(), dir.str());
  }
};

std::string golden(const std::string& name) {
  std::ifstream in(std::string(ZPOLICY_SOURCE_DIR) + "/golden/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_review)

BOOST_AUTO_TEST_CASE(diff_exits_0_1_2_and_fail_on_widen_ignores_narrowings) {
  Cli cli;
  const std::string wide = golden("default.yaml");
  const std::string narrow = replaced(wide, "deny: []", R"(deny: ["~/.ssh"])");
  cli.dir.write("wide.yaml", wide);
  cli.dir.write("narrow.yaml", narrow);
  cli.dir.write("same.yaml", "# same policy\n" + wide);
  cli.dir.write("bad.yaml", "zpolicy: 1\nnetwork: sideways\n");

  auto same = cli.run({"diff", "wide.yaml", "same.yaml"});
  BOOST_TEST(same.exit_code == 0, same.err);
  BOOST_TEST(same.out == "wide.yaml -> same.yaml: no semantic difference\n");

  auto narrowing = cli.run({"diff", "wide.yaml", "narrow.yaml"});
  BOOST_TEST(narrowing.exit_code == 1);
  BOOST_TEST(narrowing.out.find("narrowing  [linux, macos] filesystem: read ${HOME}/.ssh and 2 paths probed below it\n") !=
                 std::string::npos,
             narrowing.out);
  BOOST_TEST(cli.run({"diff", "wide.yaml", "narrow.yaml", "--fail-on", "widen"}).exit_code == 0);
  auto widening = cli.run({"diff", "narrow.yaml", "wide.yaml", "--fail-on", "widen"});
  BOOST_TEST(widening.exit_code == 1);
  BOOST_TEST(widening.out.find("WIDENING") != std::string::npos, widening.out);
  BOOST_TEST(widening.out.find("before: denied — under deny root ${HOME}/.ssh (narrow.yaml:9:10)") !=
                 std::string::npos,
             widening.out);

  auto bad = cli.run({"diff", "wide.yaml", "bad.yaml"});
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(bad.err.find("bad.yaml:2:10: error:") != std::string::npos, bad.err);
  BOOST_TEST(bad.out == "");
  BOOST_TEST(cli.run({"diff", "wide.yaml", "missing.yaml"}).exit_code == 2);
  BOOST_TEST(cli.run({"diff", "wide.yaml"}).exit_code == 2);
  BOOST_TEST(cli.run({"diff", "wide.yaml", "same.yaml", "--format", "yaml"}).exit_code == 2);
  BOOST_TEST(cli.run({"diff", "wide.yaml", "same.yaml", "--fail-on", "never"}).exit_code == 2);
  auto help = cli.run({"diff", "--help"});
  BOOST_TEST(help.exit_code == 0);
  BOOST_TEST(help.out.starts_with("usage: zpolicy diff"));
}

BOOST_AUTO_TEST_CASE(check_within_exits_3_on_an_escape_with_both_lines) {
  Cli cli;
  const std::string org = golden("default.yaml");
  cli.dir.write("org.yaml", org);
  cli.dir.write("project.yaml", replaced(org, "network: none", "network: full"));
  cli.dir.write("narrower.yaml", replaced(org, "deny: []", R"(deny: ["~/.ssh"])"));
  auto escape = cli.run({"check", "project.yaml", "--within", "org.yaml"});
  BOOST_TEST(escape.exit_code == 3, escape.err);
  BOOST_TEST(escape.out.find("project.yaml within org.yaml: ") == 0, escape.out);
  BOOST_TEST(escape.out.find("ceiling: none — network (org.yaml:10:10)") != std::string::npos, escape.out);
  BOOST_TEST(escape.out.find("policy : full — network (project.yaml:10:10)") != std::string::npos,
             escape.out);
  auto within = cli.run({"check", "narrower.yaml", "--within", "org.yaml"});
  BOOST_TEST(within.exit_code == 0, within.out);
  BOOST_TEST(within.out == "narrower.yaml within org.yaml: within the ceiling\n");
  BOOST_TEST(cli.run({"check", "project.yaml", "--within", "org.yaml", "--mode", "read-only"}).exit_code == 0);
  auto json = cli.run({"check", "project.yaml", "--within", "org.yaml", "--format", "json"});
  BOOST_TEST(json.exit_code == 3);
  BOOST_TEST(json.out.starts_with(R"({"kind": "within", "before": "org.yaml", "after": "project.yaml")"), json.out);
  BOOST_TEST(cli.run({"check", "project.yaml", "--within", "missing.yaml"}).exit_code == 2);
  BOOST_TEST(cli.run({"check", "project.yaml", "--mode", "read-only"}).exit_code == 2);
  BOOST_TEST(cli.run({"check", "project.yaml", "--within", "org.yaml", "--workspace", "."}).exit_code == 2);
  BOOST_TEST(cli.run({"check", "project.yaml", "--within", "org.yaml", "--format", "sarif"}).exit_code == 2);
}

BOOST_AUTO_TEST_CASE(git_diff_shows_the_semantic_table_through_the_driver) {
  Cli cli;
  const std::string policy = golden("default.yaml");
  cli.dir.write("zpolicy.yaml", policy);
  cli.dir.write(".gitattributes", "zpolicy.yaml diff=zpolicy\n");
  auto setup = cli.sh(
      "git init -q . && git config user.email t@example.invalid && git config user.name t && "
      "git config diff.zpolicy.command '" ZPOLICY_BINARY " diff --git' && "
      "git add . && git commit -qm policy");
  BOOST_TEST_REQUIRE(setup.exit_code == 0, setup.err);
  cli.dir.write("zpolicy.yaml", replaced(policy, "protect: [.git, ", "protect: ["));
  auto shown = cli.sh("git diff");
  BOOST_TEST(shown.exit_code == 0, shown.err);
  BOOST_TEST(shown.out.find("zpolicy diff a/zpolicy.yaml b/zpolicy.yaml\n") != std::string::npos,
             shown.out);
  BOOST_TEST(shown.out.find("WIDENING   [linux, macos] filesystem: write ${WORKSPACE}/.git and 2 paths probed below it\n") !=
                 std::string::npos,
             shown.out);
  // Lines are named by the paths git shows, not by git's temporary files.
  BOOST_TEST(shown.out.find("(a/zpolicy.yaml:8:13)") != std::string::npos, shown.out);
  BOOST_TEST(shown.out.find("(b/zpolicy.yaml:6:11)") != std::string::npos, shown.out);
  // What the README shows is what a user gets, byte for byte.
  const std::string readme = zpolicy::test::slurp(std::string(ZPOLICY_SOURCE_DIR) + "/README.md");
  const std::string intro = "Dropping `.git` from `protect` in `golden/default.yaml`, as `git diff` then shows it:\n\n```\n";
  const auto at = readme.find(intro);
  BOOST_TEST_REQUIRE(at != std::string::npos);
  const auto start = at + intro.size();
  BOOST_TEST(readme.substr(start, readme.find("```\n", start) - start) == shown.out);
  // git show and git log run a diff driver only with --ext-diff, as the README says.
  auto committed = cli.sh("git commit -qam edit && git show --ext-diff --format= && "
                          "git log -p --ext-diff -1 --format=");
  BOOST_TEST(committed.exit_code == 0, committed.err);
  BOOST_TEST(committed.out == shown.out + shown.out, committed.out);
  // A side that is not a policy is said in the diff, and git carries on.
  cli.dir.write("zpolicy.yaml", "zpolicy: 1\nmode: sideways\n");
  auto broken = cli.sh("git diff");
  BOOST_TEST(broken.exit_code == 0, broken.err);
  BOOST_TEST(broken.out.find("cannot compare") != std::string::npos, broken.out);
}

// A review resolves both policies as compile does, so it refuses what compile refuses:
// pins past the budget (verify_bwrap_bounded/protected_paths_past_the_pin_budget_are_
// refused_at_their_line) are exit 2 at the entry that crosses it, whichever side holds it.
BOOST_AUTO_TEST_CASE(a_policy_past_the_pin_budget_is_refused_at_its_line) {
  Cli cli;
  std::string deep =
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
      "  write: [\"${WORKSPACE}\"]\n  protect:\n";
  for (int i = 100; i < 140; ++i) {
    deep += "    - d" + std::to_string(i);
    for (int j = 0; j < 399; ++j) deep += "/a";
    deep += "\n";
  }
  deep += "network: none\n";
  cli.dir.write("deep.yaml", deep);
  cli.dir.write("default.yaml", golden("default.yaml"));
  const std::string refusal = "deep.yaml:32:7: error: the directories between this path";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"diff", "default.yaml", "deep.yaml"},
        {"diff", "deep.yaml", "default.yaml"},
        {"diff", "deep.yaml", "default.yaml", "--format", "json"},
        {"check", "deep.yaml", "--within", "default.yaml"},
        {"check", "default.yaml", "--within", "deep.yaml"}}) {
    const auto r = cli.run(args);
    BOOST_TEST(r.exit_code == 2, args[1] << " " << args[2] << ": " << r.err.substr(0, 2000));
    BOOST_TEST(r.err.find(refusal) != std::string::npos, r.err.substr(0, 2000));
    BOOST_TEST(r.err.find("pin budget of 4 MiB") != std::string::npos, r.err.substr(0, 2000));
  }
}

BOOST_AUTO_TEST_SUITE_END()
