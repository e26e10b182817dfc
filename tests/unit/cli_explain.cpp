// `zpolicy explain` as a new user meets it (issue 16 §4): without a policy file, bound to
// the current directory as `run` binds it, relative and `~` paths, one verdict per
// target with the policy's line and the artifact's, system calls by name, JSON.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <tuple>

#include "support/cli.hpp"

using namespace zpolicy;
namespace fs = std::filesystem;

namespace {

using test::Cli;

bool has_line(const std::string& out, const std::string& line) {
  return ("\n" + out).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_explain)

BOOST_AUTO_TEST_CASE(without_a_policy_the_default_answers_bound_to_the_current_directory) {
  Cli cli;
  const std::string ws = cli.dir.str();
  auto r = cli.run({"explain", ".git/config", "src/a.c"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("write " + ws + "/.git/config\n", 0) == 0, r.out);
  BOOST_TEST(has_line(r.out, "  linux: denied"), r.out);
  BOOST_TEST(has_line(r.out, "    policy:   no access to the host object — under protected path " +
                                 ws + "/.git (<default-policy>:8:13)"),
             r.out);
  BOOST_TEST(r.out.find("    artifact: bwrap.args:") != std::string::npos, r.out);
  BOOST_TEST(has_line(r.out, "              read-only mount: EROFS"), r.out);
  BOOST_TEST(has_line(r.out, "write " + ws + "/src/a.c"), r.out);
  BOOST_TEST(has_line(r.out, "    policy:   allowed on the host object — under writable root " + ws +
                                 " (<default-policy>:6:11)"),
             r.out);
  // This host runs the Linux artifacts only; macOS is a question for --portable.
  BOOST_TEST(r.out.find("macos") == std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(home_relative_and_symlinked_paths_are_the_objects_the_kernel_reaches) {
  Cli cli;
  cli.dir.write("real/x", "");
  fs::create_directory_symlink("real", cli.dir / "link");
  const std::string ws = cli.dir.str();
  auto r = cli.run({"explain", "link/x", "--op", "read"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("read " + ws + "/real/x\n  note: " + ws +
                             "/link/x is reached through a symlink: answered for " + ws +
                             "/real/x\n",
                         0) == 0,
             r.out);
  const fs::path home = fs::weakly_canonical(std::getenv("HOME"));
  r = cli.run({"explain", "~/zpolicy-no-such-file", "--op", "read"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("read " + (home / "zpolicy-no-such-file").string() + "\n  note: " +
                             (home / "zpolicy-no-such-file").string() +
                             " does not exist on this host: the answer is for the host as it is now\n",
                         0) == 0,
             r.out);
}

// Bound, a question is a host path, and a name in it may start with "${" (red team
// H17-10): a nested repository `${WORKSPACE}/.git` below a `${x}` is answered, protected.
BOOST_AUTO_TEST_CASE(a_bound_question_may_name_a_directory_spelled_like_a_variable) {
  Cli cli;
  const std::string ws = cli.dir.mkdir("${x}/ws");
  cli.dir.write("${x}/ws/${WORKSPACE}/.git/HEAD", "ref: refs/heads/main\n");
  const std::string repo = ws + "/${WORKSPACE}/.git";
  auto r = cli.run({"explain", repo + "/config", "--workspace", ws, "--target", "linux"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("write " + repo + "/config\n", 0) == 0, r.out);
  BOOST_TEST(has_line(r.out, "  linux: denied"), r.out);
  BOOST_TEST(r.out.find("under protected path " + repo + " (") != std::string::npos, r.out);
  BOOST_TEST(has_line(r.out, "              read-only mount: EROFS"), r.out);
}

BOOST_AUTO_TEST_CASE(portable_answers_both_targets_with_their_own_rule_and_line) {
  Cli cli;
  cli.copy_golden("deny-roots.yaml", "p.yaml");
  auto r = cli.run({"explain", "--policy", "p.yaml", "--portable", ".git/config"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("write ${WORKSPACE}/.git/config\n"
                         "  linux: denied\n"
                         "    policy:   no access to the host object — under protected path "
                         "${WORKSPACE}/.git (p.yaml:7:13)\n"
                         "    artifact: bwrap.args:",
                         0) == 0,
             r.out);
  BOOST_TEST(has_line(r.out, "  macos: denied"), r.out);
  BOOST_TEST(has_line(r.out, "    policy:   denied — under protected path ${WORKSPACE}/.git (p.yaml:7:13)"),
             r.out);
  BOOST_TEST(r.out.find("    artifact: denied by rule ") != std::string::npos, r.out);
  // The precedence models agree, so none is named.
  BOOST_TEST(r.out.find("last-match") == std::string::npos, r.out);
  BOOST_TEST(r.out.find("models") == std::string::npos, r.out);

  r = cli.run({"explain", "--policy", "p.yaml", "--portable", "~/.ssh/id_rsa", "--op", "read",
               "--target", "linux"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("read ${HOME}/.ssh/id_rsa\n"
                         "  linux: denied\n"
                         "    policy:   denied outright (deny root: neither readable nor writable) "
                         "— under deny root ${HOME}/.ssh (p.yaml:8:10)\n",
                         0) == 0,
             r.out);
  BOOST_TEST(r.out.find("EACCES") != std::string::npos, r.out);
}

// Issue 18: the macOS answer comes with the intent the Seatbelt verifier holds the
// profile to, not the Linux one. A directory above a protected path is writable on Linux
// and left to the profile on macOS (it denies it, so that the protected path cannot be
// renamed away).
BOOST_AUTO_TEST_CASE(macos_prints_the_macos_intent) {
  Cli cli;
  cli.copy_golden("default.yaml", "p.yaml");
  auto r = cli.run({"explain", "--policy", "p.yaml", "--portable", "data", "--target", "macos"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("write ${WORKSPACE}/data\n"
                         "  note: patterns (e.g. '**/.git') are expanded only against a host; "
                         "bind to a workspace for what they match there\n"
                         "  macos: denied\n"
                         "    policy:   either answer passes verification — directory above "
                         "protected path ${WORKSPACE}/data/agent-sessions (p.yaml:8:99)\n",
                         0) == 0,
             r.out);
  BOOST_TEST(r.out.find("allowed") == std::string::npos, r.out);
  // Both targets: one intent, read for each platform, each line beside its own answer.
  auto both = cli.run({"explain", "--policy", "p.yaml", "--portable", "data"});
  BOOST_TEST(both.exit_code == 0, both.err);
  BOOST_TEST(both.out.find("  linux: allowed on the host object\n"
                           "    policy:   allowed on the host object — under writable root "
                           "${WORKSPACE} (p.yaml:6:11)\n") != std::string::npos,
             both.out);
  BOOST_TEST(both.out.find("  macos: denied\n"
                           "    policy:   either answer passes verification — directory above "
                           "protected path ${WORKSPACE}/data/agent-sessions (p.yaml:8:99)\n") !=
                 std::string::npos,
             both.out);
}

BOOST_AUTO_TEST_CASE(a_system_call_by_names_with_its_rule_and_the_programs_answer) {
  Cli cli;
  cli.copy_golden("loopback.yaml", "p.yaml");
  auto r = cli.run({"explain", "--syscall", "socket", "--args", "AF_INET,SOCK_STREAM"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("socket(AF_INET, SOCK_STREAM)\n"
                         "  linux: errno(1)\n"
                         "    policy:   errno(1) — rule for socket (<default-policy>:10:10)\n"
                         "    artifact: seccomp.txt:",
                         0) == 0,
             r.out);
  // The policy file lies in the writable workspace: a run would need --accept ZP004, which
  // the answer says before it answers.
  r = cli.run({"explain", "--policy", "p.yaml", "--syscall", "socket", "--args", "2"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("socket(AF_INET)\n  note: a run here is refused unless `run --accept "
                         "ZP004`: writable root '${WORKSPACE}' holds the policy file",
                         0) == 0,
             r.out);
  BOOST_TEST(has_line(r.out, "  linux: allow"), r.out);
  BOOST_TEST(has_line(r.out, "    policy:   allow — the default for calls no rule names (<builtin>)"),
             r.out);
  r = cli.run({"explain", "--policy", "p.yaml", "--syscall", "socket", "--args", "AF_NETLINK"});
  BOOST_TEST(has_line(r.out, "  linux: kill"), r.out);
  BOOST_TEST(has_line(r.out, "    policy:   kill — rule for socket when domain != AF_INET and "
                             "domain != AF_INET6 (p.yaml:7:10)"),
             r.out);
  r = cli.run({"explain", "--portable", "--syscall", "ptrace"});
  BOOST_TEST(has_line(r.out, "  macos: not filtered (profile.sb decides by the files and network it "
                             "reaches)"),
             r.out);
  r = cli.run({"explain", "--syscall", "socket", "--args", "AF_BOGUS"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err == "<command line>: error: invalid --args 'AF_BOGUS' (at most 6 numbers "
                      "(decimal or 0x hex) or constant names of that argument, 64 bits each for "
                      "x86_64)\n");
}

BOOST_AUTO_TEST_CASE(json_is_one_document_for_every_path) {
  Cli cli;
  auto r = cli.run({"explain", "--portable", "--target", "linux", ".env", "src", "--format", "json"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.rfind("{\"explanations\": [{\"query\": \"write ${WORKSPACE}/.env\", \"notes\": "
                         "[\"patterns (e.g. '**/.git') are expanded only against a host; bind to a "
                         "workspace for what they match there\"], \"answers\": [{\"target\": "
                         "\"linux\", \"artifact\": \"denied\", \"trace\": [\"bwrap.args:",
                         0) == 0,
             r.out);
  BOOST_TEST(r.out.find("{\"query\": \"write ${WORKSPACE}/src\"") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("\"line\": {\"file\": \"<default-policy>\", \"line\": 8, \"column\": ") !=
                 std::string::npos,
             r.out);
}

// A reviewer reads seccomp.txt, not instruction numbers: the answer names the listing's
// line of the return that decides (here the golden listing, the portable artifact), then
// the instruction's number in seccomp.bpf; in text and in JSON.
BOOST_AUTO_TEST_CASE(a_system_call_names_the_listing_line_that_decides_it) {
  Cli cli;
  cli.copy_golden("default.yaml", "p.yaml");
  const std::string listing =
      test::slurp(std::string(ZPOLICY_SOURCE_DIR) + "/golden/default.linux/seccomp.txt");
  auto line_text = [&](int line) {
    std::string_view rest = listing;
    for (int l = 1; l < line && !rest.empty(); ++l) rest.remove_prefix(rest.find('\n') + 1);
    return std::string(rest.substr(0, rest.find('\n')));
  };
  for (const auto& [call, args, verdict] :
       {std::tuple<std::string, std::string, std::string>{"ptrace", "", "errno(1)"},
        {"socket", "AF_INET", "errno(1)"},
        {"ioctl", "0,TIOCSTI", "errno(1)"},
        {"read", "", "allow"}}) {
    std::vector<std::string> question = {"explain", "--portable", "--policy", "p.yaml",
                                         "--target", "linux", "--syscall", call};
    if (!args.empty()) question.insert(question.end(), {"--args", args});
    auto r = cli.run(question);
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(has_line(r.out, "  linux: " + verdict), r.out);
    const std::string tag = "    artifact: seccomp.txt:";
    const auto at = r.out.find(tag);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, r.out);
    const auto colon = r.out.find(": ", at + tag.size());
    const int line = std::stoi(r.out.substr(at + tag.size(), colon - at - tag.size()));
    const std::string text = r.out.substr(colon + 2, r.out.find('\n', colon) - colon - 2);
    BOOST_TEST(text.rfind("ret ", 0) == 0, text);
    BOOST_TEST(line_text(line) == "  " + text, call << " line " << line);
    BOOST_TEST(r.out.find("\n              seccomp.bpf instruction ") != std::string::npos, r.out);

    question.insert(question.end(), {"--format", "json"});
    auto j = cli.run(question);
    BOOST_TEST(j.exit_code == 0, j.err);
    BOOST_TEST(j.out.find("\"trace\": [\"seccomp.txt:" + std::to_string(line) + ": ") !=
                   std::string::npos,
               j.out);
  }
}

// Where `run` would refuse to start (here: a workspace holding the home directory),
// explain says so, as run would, instead of walking the tree for a run that cannot happen;
// the same for a path, a syscall and a connection.
BOOST_AUTO_TEST_CASE(where_run_refuses_explain_says_so) {
  Cli cli;
  const std::string home = fs::weakly_canonical(std::getenv("HOME")).string();
  for (const std::vector<std::string>& question :
       {std::vector<std::string>{"x"}, {"--syscall", "read"}, {"--connect", "example.com:443"}}) {
    std::vector<std::string> args = {"explain"};
    args.insert(args.end(), question.begin(), question.end());
    args.insert(args.end(), {"--workspace", home});
    auto r = cli.run(args);
    BOOST_TEST(r.exit_code == 3, question.front());
    BOOST_TEST(r.out == "", question.front());
    BOOST_TEST(r.err.find("[ZP003]") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("<command line>: error: a run bound to " + home +
                          " would be refused (ZP003), so there is nothing bound to explain; "
                          "--portable answers for the portable artifacts\n") != std::string::npos,
               r.err);
  }
}

// A connection is answered per target with the artifact line that decides it, read
// back from the compiled artifacts: Linux the sandbox's own network namespace, macOS the
// profile's rule, which under `loopback` lets the host's own loopback through (macOS has
// no network namespace), as the macOS intent says.
BOOST_AUTO_TEST_CASE(a_connection_names_each_artifacts_deciding_line) {
  Cli cli;
  const std::string golden = std::string(ZPOLICY_SOURCE_DIR) + "/golden/";
  auto r = cli.run({"explain", "--policy", golden + "default.yaml", "--connect", "example.com:443",
                    "--portable"});
  BOOST_TEST(r.exit_code == 0, r.err);
  const std::string args = zpolicy::test::slurp(golden + "default.linux/bwrap.args");
  const auto line = std::count(args.begin(), args.begin() + args.find("--unshare-net\n"), '\n') + 1;
  BOOST_TEST(r.out.find("artifact: bwrap.args:" + std::to_string(line) + ": --unshare-net") !=
                 std::string::npos,
             r.out);
  BOOST_TEST(r.out.find("artifact: denied by the default rule") != std::string::npos, r.out);
  r = cli.run({"explain", "--policy", golden + "loopback.yaml", "--connect", "localhost:5432",
               "--portable"});
  BOOST_TEST(r.out.find("  macos: allowed\n    policy:   allowed — network loopback: on macOS the "
                        "host's own loopback") != std::string::npos,
             r.out);
  BOOST_TEST(r.out.find("(allow network-outbound ...) via (remote ip \"localhost:*\")") !=
                 std::string::npos,
             r.out);
  BOOST_TEST(r.out.find("  linux: refused: only the sandbox's own loopback is reachable") !=
                 std::string::npos,
             r.out);
}

// Each usage mistake gets its own message.
BOOST_AUTO_TEST_CASE(usage_mistakes_are_named) {
  Cli cli;
  cli.dir.write("p.yaml", "zpolicy: 1\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "missing the PATH argument"},
      {{"p.yaml", ".git"},
       "'p.yaml' looks like a policy file: give it as --policy p.yaml (to ask about the file "
       "itself, name it after the other paths)"},
      {{"x", "--syscall", "read"}, "give paths, --syscall NAME or --connect HOST:PORT, one of them"},
      {{"x", "--args", "1"}, "--args goes with --syscall NAME"},
      {{"x", "--arch", "i386"}, "--arch goes with --syscall NAME"},
      {{"--syscall", "read", "--op", "read"}, "--op goes with paths"},
      {{"x", "--portable", "--workspace", "."}, "--portable answers for no workspace; drop --workspace DIR"},
      {{"x", "--target", "macos"},
       "this host is not macOS, so a bound policy has no macos artifacts: add --portable"},
      {{"x", "--format", "yaml"}, "invalid --format 'yaml' (expected text or json)"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {"explain"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = cli.run(argv);
    BOOST_TEST(r.exit_code == 2, message);
    BOOST_TEST(r.err.rfind("zpolicy: " + message + "\nusage: zpolicy explain", 0) == 0, r.err);
    BOOST_TEST(r.out == "");
  }
  // Named after another path, the policy file is a path like any other.
  auto r = cli.run({"explain", ".git", "p.yaml"});
  BOOST_TEST(r.exit_code == 0, r.err);
}

BOOST_AUTO_TEST_SUITE_END()
