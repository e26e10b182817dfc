// `zpolicy compile` as a user runs it: the built binary, a temp directory, real files.
// Every class of bad input exits 2 with the located message on stderr and leaves no
// trace: nothing on stdout, nothing in --out DIR.
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "compiler/frontend/default_policy.hpp"
#include "support/bad_policies.hpp"
#include "support/cli.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
namespace fs = std::filesystem;

namespace {

// Far below what an expanded alias bomb or unbounded recursion would take, far above
// what refusing a 2 MiB file takes (a few MiB).
constexpr long kMaxRssKb = 128 * 1024;
// What a forked child may touch between fork and exec (its stack, the argv it builds).
constexpr long kChildSlackKb = 4 * 1024;

const std::string kHead = "zpolicy: 1\nmode: workspace-write\n";

using test::Cli;

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n')
      out += "\\n";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string base64(std::string_view in) {
  const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = 0;
    size_t n = std::min<size_t>(3, in.size() - i);
    for (size_t k = 0; k < 3; ++k)
      v = (v << 8) | (k < n ? static_cast<unsigned char>(in[i + k]) : 0);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? t[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

void expect_refused(const Cli& cli, const std::vector<std::string>& args,
                    const std::string& expected, const std::string& what) {
  auto r = cli.run(args);
  BOOST_TEST(r.exit_code == 2, what);
  BOOST_TEST(r.signal == 0, what);
  BOOST_TEST(r.err == expected, what);
  BOOST_TEST(r.out == "", what);
  // A peak within the harness's own copy (test::ProcessResult) says only that the program
  // stayed below it: under ASan, below ~300 MiB rather than 128, still far below a bomb.
  BOOST_TEST((r.max_rss_kb < kMaxRssKb || r.max_rss_kb <= r.harness_rss_kb + kChildSlackKb),
             what << ": " << r.max_rss_kb << " KiB (harness " << r.harness_rss_kb << " KiB)");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_compile)

BOOST_AUTO_TEST_CASE(every_class_of_bad_input_exits_2_located_and_writes_nothing) {
  for (const auto& bad : test::bad_policies()) {
    Cli cli;
    cli.dir.write("bad.yaml", bad.content);
    cli.dir.mkdir("empty");
    expect_refused(cli, {"compile", "bad.yaml", "--target", "linux", "--out", "out"},
                   bad.expected_stderr, bad.name);
    expect_refused(
        cli, {"compile", "bad.yaml", "--target", "linux", "--out", "empty", "--format", "json"},
        bad.expected_stderr, bad.name);
    BOOST_TEST(!fs::exists(cli.dir / "out"), bad.name);
    BOOST_TEST(fs::is_empty(cli.dir / "empty"), bad.name);
  }
}

// `run` reads a policy through the same frontend: every bad input is refused before
// anything is started. (A danger-full-access policy is bad only for `compile`: `run`
// runs it, unconfined, as the explicit opt-out.)
BOOST_AUTO_TEST_CASE(run_refuses_every_bad_policy_and_runs_nothing) {
  for (const auto& bad : test::bad_policies()) {
    if (std::string_view(bad.name) == "danger-full-access has nothing to compile") continue;
    Cli cli;
    cli.dir.write("bad.yaml", bad.content);
    expect_refused(cli, {"run", "--policy", "bad.yaml", "--", "touch", "marker"},
                   bad.expected_stderr, bad.name);
    BOOST_TEST(!fs::exists(cli.dir / "marker"), bad.name);
  }
}

BOOST_AUTO_TEST_CASE(host_bound_refusal_writes_nothing) {
  Cli cli;
  cli.dir.mkdir("ws/elsewhere/agent-sessions");
  cli.dir.symlink("elsewhere", "ws/data");
  cli.dir.write("p.yaml", kHead + "filesystem:\n  protect: [data/agent-sessions]\n");
  const std::string ws = cli.dir / "ws";
  expect_refused(cli,
                 {"compile", "p.yaml", "--target", "linux", "--workspace", "ws", "--out", "out"},
                 "p.yaml:4:13: error: protected path '" + ws +
                     "/data/agent-sessions' crosses a symlink "
                     "inside a writable root ('" +
                     ws + "/data'); refusing to run\n",
                 "symlinked protected path");
  BOOST_TEST(!fs::exists(cli.dir / "out"));
  expect_refused(cli, {"compile", "p.yaml", "--target", "linux", "--workspace", "nowhere"},
                 "<host>: error: workspace 'nowhere' is not a directory\n", "missing workspace");
}

// A bound macOS profile names this host's paths; on a Linux host they would be
// Linux paths (a real /tmp, no /private), so binding the macos target is refused here.
BOOST_AUTO_TEST_CASE(macos_target_binds_only_on_macos) {
  Cli cli;
  cli.dir.mkdir("ws");
  cli.dir.write("p.yaml", kHead);
#if defined(__APPLE__)
  BOOST_TEST(cli.run({"compile", "p.yaml", "--target", "macos", "--workspace", "ws"}).exit_code == 0);
#else
  expect_refused(cli,
                 {"compile", "p.yaml", "--target", "macos", "--workspace", "ws", "--out", "out"},
                 "<command line>: error: --workspace binds the policy to this host's paths, and "
                 "this host is not macOS; compile the macos target without --workspace "
                 "(portable) instead\n",
                 "macos bound on another system");
  BOOST_TEST(!fs::exists(cli.dir / "out"));
#endif
}

// A Linux sandbox's /proc is a procfs of its own (docs/decisions.md): a deny root there is
// a located policy error for the linux target (it was exit 3, the verifier finding the
// sandbox's procfs where it expected the host's), bound or portable; macOS has no such
// mount and compiles it. /procfs is not below /proc.
BOOST_AUTO_TEST_CASE(a_deny_root_at_or_below_proc_is_a_located_error_for_linux) {
  Cli cli;
  cli.dir.mkdir("ws");
  for (const std::string deny : {"/proc", "/proc/sys", "/proc/1/environ", "/proc/x/y"}) {
    cli.dir.write("p.yaml", kHead + "filesystem:\n  deny: [/etc/shadow, \"" + deny + "\"]\n");
    const std::string error = "p.yaml:4:23: error: the deny root '" + deny +
                              "' is at or below /proc, which a Linux sandbox mounts as a "
                              "procfs of its own, read-only: the host's is not there to deny, "
                              "and zpolicy does not mask entries of the sandbox's own; remove it "
                              "(docs/decisions.md)\n";
    expect_refused(cli, {"compile", "p.yaml", "--target", "linux", "--out", "out"}, error, deny);
    BOOST_TEST(!fs::exists(cli.dir / "out"));
    BOOST_TEST(cli.run({"compile", "p.yaml", "--target", "macos"}).exit_code == 0, deny);
    const auto bound = cli.run({"compile", "p.yaml", "--target", "linux", "--workspace", "ws"});
    BOOST_TEST(bound.exit_code == 2, deny);
    BOOST_TEST(bound.err.find("p.yaml:4:23: error: the deny root '/proc") == 0, bound.err);
  }
  cli.dir.write("p.yaml", kHead + "filesystem:\n  deny: [/etc/shadow, /procfs]\n");
  BOOST_TEST(cli.run({"compile", "p.yaml", "--target", "linux"}).exit_code == 0);
}

BOOST_AUTO_TEST_CASE(mode_wider_than_the_ceiling_exits_2) {
  Cli cli;
  cli.dir.write("ro.yaml", "zpolicy: 1\nmode: read-only\n");
  cli.dir.write("ww.yaml", kHead);
  expect_refused(
      cli, {"compile", "ro.yaml", "--target", "linux", "--mode", "workspace-write", "--out", "out"},
      "ro.yaml:2:7: error: --mode workspace-write is wider than the policy's ceiling "
      "'read-only'; --mode may only narrow it\n",
      "read-only ceiling");
  expect_refused(cli, {"compile", "ww.yaml", "--target", "linux", "--mode", "danger_full_access"},
                 "ww.yaml:2:7: error: --mode danger-full-access is wider than the policy's ceiling "
                 "'workspace-write'; --mode may only narrow it\n",
                 "workspace-write ceiling");
  expect_refused(
      cli, {"compile", "ww.yaml", "--target", "linux", "--mode", "all"},
      "<command line>: error: invalid --mode 'all' (expected read-only, workspace-write or "
      "danger-full-access)\n",
      "invalid mode");
  BOOST_TEST(!fs::exists(cli.dir / "out"));

  auto narrowed = cli.run(
      {"compile", "ww.yaml", "--target", "linux", "--mode", "read-only", "--emit", "bwrap.args"});
  BOOST_TEST(narrowed.exit_code == 0);
  BOOST_TEST(narrowed.out.find("--ro-bind\n/\n/\n") != std::string::npos);
  BOOST_TEST(narrowed.out.find("--bind\n") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(command_line_errors_exit_2) {
  Cli cli;
  cli.dir.write("p.yaml", kHead);
  cli.dir.mkdir("adir");
  expect_refused(cli, {"compile", "p.yaml", "--target", "windows"},
                 "<command line>: error: invalid --target (expected linux or macos)\n",
                 "bad target");
  expect_refused(cli, {"compile", "missing.yaml", "--target", "linux"},
                 "missing.yaml: error: cannot read policy file: No such file or directory\n", "missing file");
  expect_refused(cli, {"compile", "adir", "--target", "linux"},
                 "adir: error: cannot read policy file: Is a directory\n", "directory");
  expect_refused(cli, {"compile", "p.yaml", "--target", "linux", "--format", "yaml"},
                 "<command line>: error: invalid --format (expected text or json)\n", "bad format");
  auto no_target = cli.run({"compile", "p.yaml"});
  BOOST_TEST(no_target.exit_code == 2);
  BOOST_TEST(no_target.out == "");
  BOOST_TEST(no_target.err.find("'--target' is required") != std::string::npos, no_target.err);
  auto no_artifact = cli.run({"compile", "p.yaml", "--target", "linux", "--emit", "profile.sb"});
  BOOST_TEST(no_artifact.exit_code == 2);
  BOOST_TEST(no_artifact.out == "");
  BOOST_TEST(no_artifact.err == "zpolicy: no artifact 'profile.sb' for target linux (one of: bwrap.args seccomp.bpf seccomp.txt)\n");
}

BOOST_AUTO_TEST_CASE(out_dir_emit_and_json_hold_the_same_artifacts) {
  Cli cli;
  cli.dir.write("p.yaml", compiler::default_policy_text());
  auto r = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  BOOST_TEST(r.out == "");
  BOOST_TEST(r.err == "");
  BOOST_TEST(cli.listing("out") ==
             (std::vector<std::string>{"bwrap.args", "seccomp.bpf", "seccomp.txt"}));

  std::map<std::string, std::string> files;
  for (const char* name : {"bwrap.args", "seccomp.bpf", "seccomp.txt"}) {
    files[name] = test::slurp(cli.dir / (std::string("out/") + name));
    auto emitted = cli.run({"compile", "p.yaml", "--target", "linux", "--emit", name});
    BOOST_TEST(emitted.exit_code == 0);
    BOOST_TEST(emitted.out == files[name], name);
  }
  BOOST_TEST(files["bwrap.args"].find("--bind\n${WORKSPACE}\n${WORKSPACE}\n") != std::string::npos);
  BOOST_TEST(files["bwrap.args"].find("--ro-bind\n${WORKSPACE}/.git\n${WORKSPACE}/.git\n") !=
             std::string::npos);
  BOOST_TEST(files["seccomp.bpf"].size() % 8 == 0u);  // struct sock_filter is 8 bytes
  BOOST_TEST(!files["seccomp.bpf"].empty());

  auto json = cli.run({"compile", "p.yaml", "--target", "linux", "--format", "json"});
  BOOST_TEST(json.exit_code == 0);
  BOOST_TEST(json.out == "{\"target\": \"linux\", \"artifacts\": {\"bwrap.args\": " +
                             json_string(files["bwrap.args"]) +
                             ", \"seccomp.bpf\": {\"base64\": \"" + base64(files["seccomp.bpf"]) +
                             "\"}, \"seccomp.txt\": " + json_string(files["seccomp.txt"]) + "}}\n");

  auto text = cli.run({"compile", "p.yaml", "--target", "linux"});
  BOOST_TEST(text.exit_code == 0);
  BOOST_TEST(text.out == "==> bwrap.args <==\n" + files["bwrap.args"] + "==> seccomp.txt <==\n" +
                             files["seccomp.txt"]);
}

BOOST_AUTO_TEST_CASE(output_is_byte_identical_across_runs_and_directories) {
  Cli cli;
  cli.dir.write("p.yaml", compiler::default_policy_text());
  for (const auto& format : {"text", "json"}) {
    auto a = cli.run({"compile", "p.yaml", "--target", "linux", "--format", format});
    auto b = cli.run({"compile", cli.dir / "p.yaml", "--target", "linux", "--format", format});
    BOOST_TEST(a.exit_code == 0);
    BOOST_TEST(a.out == b.out, format);
  }
  BOOST_TEST(cli.run({"compile", "p.yaml", "--target", "linux", "--out", "one"}).exit_code == 0);
  Cli other;
  other.dir.write("elsewhere.yaml", compiler::default_policy_text());
  BOOST_TEST(
      other.run({"compile", "elsewhere.yaml", "--target", "linux", "--out", "two"}).exit_code == 0);
  for (const char* name : {"bwrap.args", "seccomp.bpf", "seccomp.txt"})
    BOOST_TEST(test::slurp(cli.dir / (std::string("one/") + name)) ==
                   test::slurp(other.dir / (std::string("two/") + name)),
               name);
  // Portable artifacts name no host path.
  auto args = test::slurp(cli.dir / "one/bwrap.args");
  BOOST_TEST(args.find(cli.dir.str()) == std::string::npos);
}

// A workspace spelled through a symlink is refused (red team R3-E1s), naming the
// canonical form; given that way it binds the host path, deterministically.
BOOST_AUTO_TEST_CASE(workspace_binds_the_canonical_host_path) {
  Cli cli;
  cli.dir.write("p.yaml", compiler::default_policy_text());
  cli.dir.mkdir("real/ws/.git");
  cli.dir.symlink("real/ws", "ws");
  const std::string ws = cli.dir / "real/ws";
  auto linked = cli.run(
      {"compile", "p.yaml", "--target", "linux", "--workspace", "ws", "--emit", "bwrap.args"});
  BOOST_TEST(linked.exit_code == 2, linked.err);
  BOOST_TEST(linked.err.find("give it as --workspace " + ws + "\n") != std::string::npos,
             linked.err);
  BOOST_TEST(linked.out.empty());
  auto a = cli.run(
      {"compile", "p.yaml", "--target", "linux", "--workspace", ws, "--emit", "bwrap.args"});
  auto b = cli.run({"compile", "p.yaml", "--target", "linux", "--workspace", "real/ws", "--emit",
                    "bwrap.args"});
  BOOST_TEST_REQUIRE(a.exit_code == 0, a.err);
  BOOST_TEST(a.out == b.out);
  BOOST_TEST(a.out.find("--bind\n" + ws + "\n" + ws + "\n") != std::string::npos, a.out);
  BOOST_TEST(a.out.find("--ro-bind\n" + ws + "/.git\n" + ws + "/.git\n") != std::string::npos);
  BOOST_TEST(a.out.find("${WORKSPACE}") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
