// The command-line surface: help for every subcommand, exit 2 for anything unknown.
#include <boost/test/unit_test.hpp>

#include "support/subprocess.hpp"
#include "zpolicy/version.hpp"
#include "support/temp_dir.hpp"

namespace {

zpolicy::test::ProcessResult zpolicy_run(const std::vector<std::string>& args) {
  zpolicy::test::TempDir scratch;
  std::vector<std::string> argv = {ZPOLICY_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return zpolicy::test::run_process(argv, scratch.str(), scratch.str());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_commands)

BOOST_AUTO_TEST_CASE(help_for_each_subcommand_exits_0) {
  for (const char* cmd : {"compile", "show-default", "verify", "check", "diff", "explain",
                          "inspect", "run", "plan", "cleanup", "doctor"}) {
    for (const char* flag : {"--help", "-h"}) {
      auto r = zpolicy_run({cmd, flag});
      BOOST_TEST(r.exit_code == 0, cmd << " " << flag << ": " << r.err);
      BOOST_TEST(r.out.rfind(std::string("usage: zpolicy ") + cmd, 0) == 0, cmd << ": " << r.out);
      BOOST_TEST(r.err == "", cmd);
    }
  }
}

BOOST_AUTO_TEST_CASE(top_level_help_lists_every_command) {
  auto r = zpolicy_run({"--help"});
  BOOST_TEST(r.exit_code == 0);
  for (const char* cmd :
       {"compile", "verify", "check", "diff", "explain", "inspect", "run", "plan", "cleanup",
        "doctor", "show-default"})
    BOOST_TEST(r.out.find(std::string("\n  ") + cmd + " ") != std::string::npos, cmd);
}

BOOST_AUTO_TEST_CASE(doctor_refuses_an_unknown_format_before_probing) {
  auto r = zpolicy_run({"doctor", "--format", "yaml"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err == "zpolicy: doctor: --format must be text or json, not 'yaml'\n");
  BOOST_TEST(r.out == "");
}

BOOST_AUTO_TEST_CASE(version_prints_the_project_version) {
  for (const char* flag : {"--version", "-V", "version"}) {
    auto r = zpolicy_run({flag});
    BOOST_TEST(r.exit_code == 0, flag);
    BOOST_TEST(r.out == std::string("zpolicy ") + ZPOLICY_VERSION + "\n", flag);
    BOOST_TEST(r.err == "", flag);
  }
}

BOOST_AUTO_TEST_CASE(a_missing_positional_argument_is_named_as_the_usage_names_it) {
  for (const auto& [args, missing] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"check"}, "POLICY"},
           {{"compile", "--target", "linux"}, "POLICY"},
           {{"verify", "p.yaml", "--target", "linux"}, "DIR"},
           {{"inspect"}, "FILE"}}) {
    auto r = zpolicy_run(args);
    BOOST_TEST(r.exit_code == 2, args[0]);
    BOOST_TEST(r.err.rfind("zpolicy: missing the " + missing + " argument\nusage: zpolicy " + args[0], 0) == 0,
               r.err);
    BOOST_TEST(r.err.find("--policy") == std::string::npos, r.err);
  }
}

BOOST_AUTO_TEST_CASE(unreadable_policies_say_why_and_tabs_are_named) {
  zpolicy::test::TempDir dir;
  dir.mkdir("a-directory");
  dir.write("tab.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n\tread: [\"/\"]\n");
  dir.write("tab-entry.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read:\n  \t- /\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"missing.yaml", "missing.yaml: error: cannot read policy file: No such file or directory\n"},
      {"a-directory", "a-directory: error: cannot read policy file: Is a directory\n"},
      {"tab.yaml",
       "tab.yaml:4:1: error: tabs are not allowed for indentation in YAML; indent with spaces\n"},
      {"tab-entry.yaml",
       "tab-entry.yaml:5:3: error: tabs are not allowed for indentation in YAML; indent with "
       "spaces\n"},
  };
  for (const auto& [file, err] : cases) {
    auto r = zpolicy::test::run_process({ZPOLICY_BINARY, "check", file}, dir.str(), dir.str());
    BOOST_TEST(r.exit_code == 2, file);
    BOOST_TEST(r.err == err);
  }
}

BOOST_AUTO_TEST_CASE(emit_of_an_unknown_artifact_lists_the_names) {
  zpolicy::test::TempDir dir;
  auto policy = zpolicy::test::run_process({ZPOLICY_BINARY, "show-default"}, dir.str(), dir.str());
  dir.write("p.yaml", policy.out);
  auto r = zpolicy::test::run_process(
      {ZPOLICY_BINARY, "compile", "p.yaml", "--target", "macos", "--emit", "nope"}, dir.str(),
      dir.str());
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err == "zpolicy: no artifact 'nope' for target macos (one of: profile.sb params.txt)\n");
}

BOOST_AUTO_TEST_CASE(unknown_or_missing_command_exits_2) {
  auto unknown = zpolicy_run({"frobnicate"});
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(unknown.out == "");
  BOOST_TEST(unknown.err.rfind("zpolicy: unknown command 'frobnicate'\n", 0) == 0, unknown.err);
  auto none = zpolicy_run({});
  BOOST_TEST(none.exit_code == 2);
  BOOST_TEST(none.out == "");
  BOOST_TEST(none.err.rfind("usage: zpolicy COMMAND", 0) == 0);
}

BOOST_AUTO_TEST_CASE(unknown_option_exits_2) {
  auto r = zpolicy_run({"compile", "p.yaml", "--target", "linux", "--frobnicate"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.out == "");
  BOOST_TEST(r.err.find("unrecognised option '--frobnicate'") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_SUITE_END()

// `run --accept ID`: only ZP003, ZP004, ZP005 and ZP013, each exactly; anything else is a usage
// error (exit 2) before a policy is read or anything starts.
BOOST_AUTO_TEST_SUITE(cli_run_options)

BOOST_AUTO_TEST_CASE(accept_refuses_what_cannot_be_accepted) {
  zpolicy::test::TempDir dir;
  const std::string marker = dir.str() + "/MARKER";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--accept", "dropped-deny"}, "a verifier finding (a dropped deny) is never accepted"},
      {{"--accept", "verify-linux"}, "a verifier finding (a dropped deny) is never accepted"},
      {{"--accept", "ZP000"}, "fix the policy"},
      {{"--accept", "ZP999"}, "acceptable: ZP003, ZP004, ZP005, ZP013"},
      {{"--accept", "zp003"}, "acceptable: ZP003, ZP004, ZP005, ZP013"},
      {{"--accept", "ZP001"}, "a warning never refuses a run"},
      {{"--accept", "ZP009"}, "fix the policy"},
      {{"--accept", "ZP100"}, "fix the policy"},
      {{"--accept", "ZP003", "--accept", "nope"}, "--accept nope"},
      {{"--accept"}, "zpolicy: the required argument for option '--accept' is missing"},
  };
  for (const auto& [options, message] : cases) {
    std::vector<std::string> argv = {ZPOLICY_BINARY, "run"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", "/usr/bin/touch", marker});
    auto r = zpolicy::test::run_process(argv, dir.str(), dir.str());
    BOOST_TEST(r.exit_code == 2, options.back() << ": " << r.err);
    BOOST_TEST(r.err.find(message) != std::string::npos, r.err);
    BOOST_TEST(access(marker.c_str(), F_OK) != 0, "the command ran");
  }
}

BOOST_AUTO_TEST_CASE(a_command_without_dashdash_is_shown_with_it) {
  zpolicy::test::TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "make", "test"}, "zpolicy: run: the command goes after '--'; did you mean `zpolicy run -- make test`?\n"},
      {{"run", "ls", "-la"}, "zpolicy: run: the command goes after '--'; did you mean `zpolicy run -- ls -la`?\n"},
      {{"run", "--mode", "read-only", "--timeout=5", "ls"},
       "zpolicy: run: the command goes after '--'; did you mean `zpolicy run --mode read-only --timeout=5 -- ls`?\n"},
      {{"plan", "--format", "json", "true"},
       "zpolicy: plan: the command goes after '--'; did you mean `zpolicy plan --format json -- true`?\n"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {ZPOLICY_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = zpolicy::test::run_process(argv, dir.str(), dir.str());
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(r.out == "");
    BOOST_TEST(r.err.rfind(message, 0) == 0, r.err);
  }
}

// --timeout takes the policy's durations and only shortens; --env adds one variable for
// one run; ZPOLICY_SANDBOX names the mode. Checked on `plan`, which decides as run does.
BOOST_AUTO_TEST_CASE(timeout_and_env_options) {
  zpolicy::test::TempDir dir;
  dir.write("timed.yaml", "zpolicy: 1\nmode: workspace-write\nprocess:\n  timeout: 1m\n");
  dir.write("danger.yaml", "zpolicy: 1\nmode: danger-full-access\n");
  auto plan = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {ZPOLICY_BINARY, "plan"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", "/bin/true"});
    return zpolicy::test::run_process(argv, dir.str(), dir.str());
  };
  auto malformed = plan({"--timeout", "2x"});
  BOOST_TEST(malformed.exit_code == 2);
  BOOST_TEST(malformed.err ==
             "<command line>: error: invalid --timeout '2x' (expected e.g. 500ms, 120s, 10m, 2h; "
             "a bare number is seconds)\n");
  auto longer = plan({"--policy", "timed.yaml", "--timeout", "2m"});
  BOOST_TEST(longer.exit_code == 2);
  BOOST_TEST(longer.err ==
             "<command line>: error: --timeout is longer than the policy's timeout "
             "(timed.yaml:4:12); it may only shorten it\n");
  auto bad_env = plan({"--env", "1X=y"});
  BOOST_TEST(bad_env.exit_code == 2);
  BOOST_TEST(bad_env.err.find("invalid --env '1X=y'") != std::string::npos, bad_env.err);

  setenv("ZPOLICY_UT_KEPT", "kept-value", 1);
  auto ok = plan({"--policy", "danger.yaml", "--timeout", "2m", "--env", "GREETING=hi",
                  "--env", "ZPOLICY_UT_KEPT", "--env", "API_TOKEN=t", "--format", "json"});
  unsetenv("ZPOLICY_UT_KEPT");
  BOOST_TEST(ok.exit_code == 0, ok.err);
  BOOST_TEST(ok.err == "zpolicy: warning: --env API_TOKEN looks like a secret; everything in the "
                       "sandbox can read it\n");
  dir.write("plan.json", ok.out);
  auto parsed = zpolicy::test::run_process(
      {"/usr/bin/python3", "-c",
       "import json,sys\np=json.load(open(sys.argv[1]))\n"
       "e=[x for x in p['env'] if x.split('=')[0] in ('GREETING','ZPOLICY_UT_KEPT','API_TOKEN','ZPOLICY_SANDBOX')]\n"
       "print(p['backend'], p['timeout_ms'], e)\n",
       dir.str() + "/plan.json"},
      dir.str(), dir.str());
  BOOST_TEST(parsed.out == "unconfined 120000 ['API_TOKEN=t', 'GREETING=hi', "
                           "'ZPOLICY_SANDBOX=danger-full-access', 'ZPOLICY_UT_KEPT=kept-value']\n",
             parsed.err);
}

BOOST_AUTO_TEST_CASE(run_help_names_accept) {
  auto r = zpolicy_run({"run", "--help"});
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.out.find("--accept LINT") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_SUITE_END()
