// `zpolicy compile` as a user runs it: the built binary, a temp directory, real files.
// Every class of bad input exits 2 with the located message on stderr and leaves no
// trace: nothing on stdout, nothing in --out DIR.
#define BOOST_TEST_DYN_LINK
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "compiler/default_policy.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
namespace fs = std::filesystem;

namespace {

// Far below what an expanded alias bomb or unbounded recursion would take, far above
// what refusing a 2 MiB file takes (a few MiB).
constexpr long kMaxRssKb = 128 * 1024;

const std::string kHead = "zpolicy: 1\nmode: workspace-write\n";

struct Cli {
  test::TempDir dir;

  test::ProcessResult run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {ZPOLICY_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, dir.str(), dir.str());
  }
  std::vector<std::string> listing(const std::string& rel) const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir / rel))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

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

struct BadInput {
  const char* name;
  std::string content;
  std::string expected_stderr;  // with the policy named "bad.yaml"
};

std::string billion_laughs() {
  std::string t =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    t += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) t += std::string(i ? "," : "") + "*" + static_cast<char>(c - 1);
    t += "]\n";
  }
  return t;
}

std::vector<BadInput> bad_inputs() {
  std::string deep_block;
  for (int i = 0; i < 1400; ++i) deep_block += std::string(i, ' ') + "a:\n";
  std::string garbage(
      "\x7f"
      "ELF\x02\x01\x01\x00",
      8);
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 2654435761u) >> 13);
  return {
      {"unknown key", kHead + "netwrok: none\n",
       "bad.yaml:3:1: error: unknown key 'netwrok'; did you mean 'network'?\n"},
      {"wrong type", kHead + "filesystem:\n  read: /\n",
       "bad.yaml:4:9: error: 'read' must be a list, not a scalar\n"},
      {"duplicate key", kHead + "mode: read-only\n",
       "bad.yaml:3:1: error: duplicate key 'mode' (first set at line 2)\n"},
      {"bad enum", kHead + "network: nnoe\n",
       "bad.yaml:3:10: error: invalid network 'nnoe' (expected one of: none, loopback, full); did "
       "you mean 'none'?\n"},
      {"missing version", "mode: read-only\n",
       "bad.yaml:1:1: error: missing required key 'zpolicy' (the schema version; write 'zpolicy: "
       "1')\n"},
      {"unsupported version", "zpolicy: 2\nmode: read-only\n",
       "bad.yaml:1:10: error: unsupported schema version 2 (this zpolicy reads version 1)\n"},
      {"unknown variable", kHead + "filesystem:\n  write: [\"${WORKDIR}\"]\n",
       "bad.yaml:4:11: error: in 'write': unknown variable '${WORKDIR}' (known: ${WORKSPACE}, "
       "${HOME}, ${TMPDIR}, ~)\n"},
      {"dot-dot", kHead + "filesystem:\n  protect: [../.git]\n",
       "bad.yaml:4:13: error: in 'protect': '..' is not allowed in a path\n"},
      {"relative path", kHead + "filesystem:\n  deny: [.ssh]\n",
       "bad.yaml:4:10: error: in 'deny': relative path '.ssh'; an absolute path or a variable is "
       "required\n"},
      {"NUL in a path", kHead + "filesystem:\n  write: [\"/a\\0b\"]\n",
       "bad.yaml:4:11: error: in 'write': path contains a NUL byte\n"},
      {"newline in a path", kHead + "filesystem:\n  deny: [\"/a\\nb\"]\n",
       "bad.yaml:4:10: error: in 'deny': path contains a newline\n"},
      {"unknown syscall", kHead + "syscalls:\n  deny: [ptrace, frobnicate]\n",
       "bad.yaml:4:18: error: unknown syscall 'frobnicate'\n"},
      {"malformed duration", kHead + "process:\n  timeout: 12x\n",
       "bad.yaml:4:12: error: malformed duration '12x' (expected e.g. 500ms, 120s, 10m, 2h)\n"},
      {"deny-list and allow-list",
       kHead + "syscalls:\n  deny: [ptrace]\n  default: errno\n  allow: [read]\n",
       "bad.yaml:4:3: error: 'syscalls' is either a deny-list (deny, action) or an allow-list "
       "(default, allow), not both\n"},
      {"write under read-only",
       "zpolicy: 1\nmode: read-only\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n",
       "bad.yaml:4:10: error: writable roots need mode workspace-write; this policy is "
       "read-only\n"},
      {"run-unconfined with read-only",
       "zpolicy: 1\nmode: read-only\nunavailable: run-unconfined\n",
       "bad.yaml:3:14: error: 'unavailable: run-unconfined' is only allowed with mode "
       "workspace-write\n"},
      {"several errors", kHead + "netwrok: none\nsyscalls:\n  deny: [frobnicate]\n",
       "bad.yaml:3:1: error: unknown key 'netwrok'; did you mean 'network'?\n"
       "bad.yaml:5:10: error: unknown syscall 'frobnicate'\n"},
      {"YAML syntax", "zpolicy: 1\nmode: [\n",
       "bad.yaml:3:1: error: YAML syntax error: end of sequence flow not found\n"},
      {"not a mapping", "- zpolicy: 1\n",
       "bad.yaml:1:1: error: the policy must be a mapping, not a list\n"},
      {"danger-full-access has nothing to compile", "zpolicy: 1\nmode: danger-full-access\n",
       "bad.yaml:2:7: error: nothing to compile: danger-full-access runs without a sandbox (use "
       "--mode to compile a narrower mode)\n"},
      {"alias bomb", billion_laughs(),
       "bad.yaml:1:4: error: YAML anchors are not allowed in a policy\n"},
      {"10000-deep flow nesting", std::string(10000, '[') + std::string(10000, ']'),
       "bad.yaml:1:33: error: nesting deeper than 32 levels\n"},
      {"deep block mapping", deep_block, "bad.yaml:33:33: error: nesting deeper than 32 levels\n"},
      {"2 MiB file", kHead + "#" + std::string(2 << 20, 'x') + "\n",
       "bad.yaml: error: policy file is larger than the limit of 1048576 bytes\n"},
      {"binary garbage", garbage,
       "bad.yaml:1:1: error: control character in policy file (binary input?)\n"},
      {"invalid UTF-8", "zpolicy: 1\nmode: \"\xed\xa0\x80\"\n",
       "bad.yaml:2:8: error: policy file is not valid UTF-8\n"},
      {"NUL byte", std::string("zpolicy: 1\nmode: read-only\0\n", 28),
       "bad.yaml:2:16: error: NUL byte in policy file\n"},
      {"YAML tag", "zpolicy: !!python/object/apply:os.system [\"id\"]\nmode: read-only\n",
       "bad.yaml:1:10: error: YAML tags are not allowed "
       "('tag:yaml.org,2002:python/object/apply:os.system')\n"},
      {"empty file", "", "bad.yaml: error: policy file is empty\n"},
      {"two documents", "zpolicy: 1\nmode: read-only\n---\nzpolicy: 1\nmode: read-only\n",
       "bad.yaml: error: policy file holds more than one YAML document\n"},
  };
}

void expect_refused(const Cli& cli, const std::vector<std::string>& args,
                    const std::string& expected, const std::string& what) {
  auto r = cli.run(args);
  BOOST_TEST(r.exit_code == 2, what);
  BOOST_TEST(r.signal == 0, what);
  BOOST_TEST(r.err == expected, what);
  BOOST_TEST(r.out == "", what);
  BOOST_TEST(r.max_rss_kb < kMaxRssKb, what << ": " << r.max_rss_kb << " KiB");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_compile)

BOOST_AUTO_TEST_CASE(every_class_of_bad_input_exits_2_located_and_writes_nothing) {
  for (const auto& bad : bad_inputs()) {
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
                 "missing.yaml: error: cannot read policy file\n", "missing file");
  expect_refused(cli, {"compile", "adir", "--target", "linux"},
                 "adir: error: cannot read policy file\n", "directory");
  expect_refused(cli, {"compile", "p.yaml", "--target", "linux", "--format", "yaml"},
                 "<command line>: error: invalid --format (expected text or json)\n", "bad format");
  auto no_target = cli.run({"compile", "p.yaml"});
  BOOST_TEST(no_target.exit_code == 2);
  BOOST_TEST(no_target.out == "");
  BOOST_TEST(no_target.err.find("'--target' is required") != std::string::npos, no_target.err);
  auto no_artifact = cli.run({"compile", "p.yaml", "--target", "linux", "--emit", "profile.sb"});
  BOOST_TEST(no_artifact.exit_code == 2);
  BOOST_TEST(no_artifact.out == "");
  BOOST_TEST(no_artifact.err == "zpolicy: no artifact 'profile.sb' for target linux\n");
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

BOOST_AUTO_TEST_CASE(workspace_binds_the_canonical_host_path) {
  Cli cli;
  cli.dir.write("p.yaml", compiler::default_policy_text());
  cli.dir.mkdir("real/ws/.git");
  cli.dir.symlink("real/ws", "ws");
  auto a = cli.run(
      {"compile", "p.yaml", "--target", "linux", "--workspace", "ws", "--emit", "bwrap.args"});
  auto b = cli.run(
      {"compile", "p.yaml", "--target", "linux", "--workspace", "ws", "--emit", "bwrap.args"});
  BOOST_TEST_REQUIRE(a.exit_code == 0, a.err);
  BOOST_TEST(a.out == b.out);
  const std::string ws = cli.dir / "real/ws";
  BOOST_TEST(a.out.find("--bind\n" + ws + "\n" + ws + "\n") != std::string::npos, a.out);
  BOOST_TEST(a.out.find("--ro-bind\n" + ws + "/.git\n" + ws + "/.git\n") != std::string::npos);
  BOOST_TEST(a.out.find("${WORKSPACE}") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
