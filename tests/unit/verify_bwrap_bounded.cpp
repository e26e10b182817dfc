// Issue 19 §2: deep and repetitive inputs under 1 MiB are answered, not crashed on or
// hung on. The shapes of bench/hostile_bwrap.py (which measures them against the time
// and memory budget); here only the answers are asserted.
#include <boost/test/unit_test.hpp>

#include "support/cli.hpp"

using namespace zpolicy;

namespace {

std::string repeat(const std::string& part, size_t n, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? sep : "") + part;
  return out;
}

std::string deny_policy(const std::string& deny) {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
         "  write: [\"${WORKSPACE}\"]\n  deny: [\"" +
         deny + "\"]\nnetwork: none\n";
}

// `zpolicy verify` of the golden default policy on its artifacts with `extra` argv
// lines inserted before --chdir.
test::ProcessResult verify_golden_with(const std::vector<std::string>& extra) {
  test::Cli cli;
  for (const char* f : {"bwrap.args", "seccomp.bpf", "seccomp.txt"})
    cli.dir.write(std::string("out/") + f,
                  test::slurp(std::string(ZPOLICY_SOURCE_DIR) + "/golden/default.linux/" + f));
  std::string args = test::slurp(cli.dir / "out/bwrap.args");
  std::string lines;
  for (const auto& e : extra) lines += e + "\n";
  const auto at = args.find("--chdir\n");
  BOOST_REQUIRE(at != std::string::npos);
  args.insert(at, lines);
  BOOST_REQUIRE(args.size() < (1u << 20));
  cli.dir.write("out/bwrap.args", args);
  return cli.run({"verify", std::string(ZPOLICY_SOURCE_DIR) + "/golden/default.yaml", "out",
                  "--target", "linux"});
}

std::vector<std::string> times(const std::vector<std::string>& option, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.insert(out.end(), option.begin(), option.end());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_bounded)

// Creations the emitter never makes are refused before the mount table is built (R3-V2..V4),
// whatever their depth or count, with a message that quotes the option briefly.
void expect_refused_creation(const test::ProcessResult& r) {
  BOOST_TEST(r.signal == 0);
  BOOST_TEST(r.exit_code == 3, r.err);
  BOOST_TEST(r.err.find("outside the subset zpolicy verifies") != std::string::npos, r.err);
  BOOST_TEST(r.err.size() < 4096u, r.err.size());
}

BOOST_AUTO_TEST_CASE(a_tmpfs_100000_components_deep_is_refused) {
  expect_refused_creation(verify_golden_with({"--tmpfs", "/" + repeat("t", 100000, "/")}));
}

BOOST_AUTO_TEST_CASE(sixty_thousand_tmpfs_at_one_place_are_refused) {
  const auto r = verify_golden_with(times({"--tmpfs", "/t"}, 60000));
  expect_refused_creation(r);
  BOOST_TEST(r.err.find("59999 more such operations") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(repeated_chmod_and_links_are_refused) {
  expect_refused_creation(verify_golden_with(times({"--chmod", "0755", "/tmp"}, 30000)));
  expect_refused_creation(verify_golden_with(times({"--symlink", "/etc", "/tmp/l"}, 20000)));
}

BOOST_AUTO_TEST_CASE(thirty_thousand_aliases_of_etc_are_each_a_region) {
  std::vector<std::string> extra;
  for (int i = 0; i < 30000; ++i)
    extra.insert(extra.end(), {"--bind", "/etc", "/e" + std::to_string(i)});
  const auto r = verify_golden_with(extra);
  BOOST_TEST(r.signal == 0);
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.err.find("dropped-deny: write /etc:") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(a_deny_root_200000_components_deep_compiles) {
  test::Cli cli;
  cli.dir.write("p.yaml", deny_policy("/x/" + repeat("a", 200000, "/")));
  const auto r = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
  BOOST_TEST(r.signal == 0);
  BOOST_TEST(r.exit_code == 0, r.err.substr(0, 2000));
}

BOOST_AUTO_TEST_CASE(explain_answers_for_a_15000_component_path) {
  test::Cli cli;
  const std::string deep = "/proc/" + repeat("a", 15000, "/");
  cli.dir.write("p.yaml", deny_policy(deep));
  const auto r = cli.run({"explain", "--policy", "p.yaml", "--portable", deep, "--target", "linux"});
  BOOST_TEST(r.signal == 0);
  BOOST_TEST(r.exit_code == 0, r.err.substr(0, 2000));
  BOOST_TEST(r.out.find("deny root") != std::string::npos, r.out.substr(0, 2000));
}

BOOST_AUTO_TEST_SUITE_END()
