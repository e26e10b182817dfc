// The caller's environment is one value, read from the process once
// (compiler/resolve/caller_environment.hpp): resolution and the run's lints judge the
// environment they are given. Each test sets this process's environment to something else,
// so that it fails where the code reads the process instead.
#include "compiler/resolve/caller_environment.hpp"

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "compiler/resolve/resolve.hpp"
#include "runner/caller_code_paths.hpp"
#include "support/parse.hpp"
#include "support/scoped_env.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
using compiler::CallerEnvironment;
using test::ScopedEnv;
using Entries = std::vector<std::pair<std::string, std::string>>;

namespace {

const std::string kWorkspacePolicy =
    "zpolicy: 1\n"
    "mode: workspace-write\n"
    "filesystem:\n"
    "  write: [\"${WORKSPACE}\"]\n"
    "  protect: [.git]\n";

// The host facts of the workspace `ws` with the caller's environment `env` and working
// directory `cwd`; zpolicy's state directory left out (no part of these tests).
compiler::HostFacts facts(const std::string& ws, std::vector<std::string> env,
                          const std::string& cwd) {
  ir::Diagnostics diags;
  auto h = compiler::host_facts(ws, CallerEnvironment(std::move(env)), diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  h->cwd = cwd;
  h->state_dir.clear();
  return *h;
}

std::optional<ir::Resolved> resolve(const compiler::HostFacts& h, ir::Diagnostics& diags) {
  const auto parsed = test::parse(kWorkspacePolicy);
  BOOST_TEST_REQUIRE(parsed.errors == "");
  return compiler::resolve_for_host(*parsed.policy, ir::Mode::WorkspaceWrite, h, diags);
}

bool protects(const ir::Resolved& r, const std::string& path) {
  for (const auto& p : r.protect)
    if (p.path == path) return true;
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(caller_environment)

// As getenv(3): the first entry of a name; one without '=' names nothing.
BOOST_AUTO_TEST_CASE(a_name_has_its_first_value) {
  ScopedEnv process("ZPOLICY_UT_NAME", "process");
  const CallerEnvironment env({"ZPOLICY_UT_NAME=a=b", "ZPOLICY_UT_NAME=c", "LONE", "EMPTY="});
  BOOST_TEST(env.get("ZPOLICY_UT_NAME").value_or("") == "a=b");
  BOOST_TEST(!env.get("LONE"));
  BOOST_TEST(env.get("EMPTY").value_or("unset") == "");
  BOOST_TEST(!env.get("ZPOLICY_UT_OTHER"));
  BOOST_TEST(env.entries().size() == 4u);
  BOOST_TEST(CallerEnvironment::of_this_process().get("ZPOLICY_UT_NAME").value_or("") == "process");
}

// $HOME, $TMPDIR and $PWD are the given environment's, kept in the facts.
BOOST_AUTO_TEST_CASE(host_facts_take_home_tmpdir_and_pwd_from_the_given_environment) {
  test::TempDir t;
  t.mkdir("real/ws");
  const std::string here = std::filesystem::current_path().string();
  t.symlink(here, "here");
  ScopedEnv home("HOME", "/process/home");
  ScopedEnv tmp("TMPDIR", "/process/tmp");
  ScopedEnv pwd("PWD", here.c_str());
  ir::Diagnostics diags;
  const auto h = compiler::host_facts(
      std::nullopt,
      CallerEnvironment({"HOME=/caller/home", "TMPDIR=/caller/tmp", "PWD=" + t / "here"}), diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  BOOST_TEST(h->home == "/caller/home");
  BOOST_TEST(h->tmpdir == "/caller/tmp");
  BOOST_TEST(h->workspace_spelled == t / "here");
  BOOST_TEST(h->environment.get("HOME").value_or("") == "/caller/home");
  // A relative $HOME or $TMPDIR is none: the password database's home, /tmp.
  const auto relative =
      compiler::host_facts(t / "real/ws", CallerEnvironment({"HOME=home", "TMPDIR=tmp"}), diags);
  BOOST_TEST_REQUIRE(relative.has_value(), diags.str());
  BOOST_TEST(relative->home != "home");
  BOOST_TEST(relative->home != "/process/home");
  BOOST_TEST(relative->tmpdir == "/tmp");
}

// A relative $GIT_DIR is taken against the caller's working directory (the facts' cwd), and
// protected where missing (red team A25C-2).
BOOST_AUTO_TEST_CASE(a_relative_git_dir_is_taken_against_the_given_working_directory) {
  test::TempDir t;
  t.mkdir("ws/sub");
  ScopedEnv process_git_dir("GIT_DIR", (t / "ws/process.git").c_str());
  const auto h =
      facts(t / "ws", {"GIT_DIR=meta.git", "GIT_COMMON_DIR=" + t / "ws/common"}, t / "ws/sub");
  ir::Diagnostics diags;
  const auto r = resolve(h, diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  BOOST_TEST(protects(*r, t / "ws/sub/meta.git"));
  BOOST_TEST(protects(*r, t / "ws/common"));
  BOOST_TEST(!protects(*r, t / "ws/process.git"));
}

// R25-5 through resolution: the given environment's relative $XDG_CONFIG_HOME refuses; this
// process's does not.
BOOST_AUTO_TEST_CASE(a_relative_xdg_config_home_of_the_caller_refuses) {
  test::TempDir t;
  t.mkdir("ws");
  {
    ScopedEnv process_xdg("XDG_CONFIG_HOME", "/abs");
    ir::Diagnostics diags;
    BOOST_TEST(!resolve(facts(t / "ws", {"XDG_CONFIG_HOME=cfg"}, t / "ws"), diags).has_value());
    BOOST_TEST(diags.str().find("$XDG_CONFIG_HOME is the relative path 'cfg'") != std::string::npos,
               diags.str());
  }
  ScopedEnv process_xdg("XDG_CONFIG_HOME", "cfg");
  ir::Diagnostics diags;
  BOOST_TEST(resolve(facts(t / "ws", {"XDG_CONFIG_HOME=/abs"}, t / "ws"), diags).has_value(),
             diags.str());
}

BOOST_AUTO_TEST_CASE(the_callers_path_is_split) {
  ScopedEnv process_path("PATH", "/process/bin");
  BOOST_TEST(runner::caller_path_entries(CallerEnvironment({"PATH=/a::b"})) ==
                 (std::vector<std::string>{"/a", "", "b"}),
             boost::test_tools::per_element());
  BOOST_TEST(runner::caller_path_entries(CallerEnvironment()) == std::vector<std::string>{""},
             boost::test_tools::per_element());
}

// GIT_CONFIG_PARAMETERS: quoted pairs joined by '=', or one 'key=value'; a path key's value
// is a path even without '/', `~/` is $HOME; any other value is read as a command.
BOOST_AUTO_TEST_CASE(git_config_parameters_are_parsed_from_the_given_environment) {
  ScopedEnv process_params("GIT_CONFIG_PARAMETERS", "'core.hookspath'='process-hooks'");
  ScopedEnv process_home("HOME", "/process/home");
  const Entries entries = runner::caller_load_path_entries(
      CallerEnvironment({"HOME=/caller/home",
                         "GIT_CONFIG_PARAMETERS='core.hooksPath'='hk' 'include.path=~/inc' "
                         "'core.editor'='/opt/ed -w' 'it'\\''s'='x'"}));
  const Entries expected{{"GIT_CONFIG_PARAMETERS", "hk"},
                         {"GIT_CONFIG_PARAMETERS", "/caller/home/inc"},
                         {"GIT_CONFIG_PARAMETERS", "/opt/ed"}};
  BOOST_TEST_REQUIRE(entries.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST(entries[i].first == expected[i].first);
    BOOST_TEST(entries[i].second == expected[i].second);
  }
}

// GIT_CONFIG_COUNT's keys and values, then the other variables in their order: search paths,
// files read as code, commands (`~/` only with an absolute $HOME).
BOOST_AUTO_TEST_CASE(load_paths_come_from_the_given_environment_in_order) {
  ScopedEnv process_count("GIT_CONFIG_COUNT", "0");
  ScopedEnv process_editor("EDITOR", "/process/editor");
  const Entries entries = runner::caller_load_path_entries(CallerEnvironment(
      {"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=tools",
       "GIT_CONFIG_KEY_1=core.pager", "GIT_CONFIG_VALUE_1=less -R", "EDITOR=vim -u ~/x/vimrc",
       "HOME=home", "LD_PRELOAD=libx.so /lib/y.so", "MAKEFILES=a.mk  b.mk",
       "NODE_OPTIONS=--require=./hook.js"}));
  const Entries expected{{"LD_PRELOAD", "/lib/y.so"},   {"MAKEFILES", "a.mk"},
                         {"MAKEFILES", "b.mk"},         {"EDITOR", "~/x/vimrc"},
                         {"NODE_OPTIONS", "./hook.js"}, {"GIT_CONFIG_VALUE_0", "tools"}};
  BOOST_TEST_REQUIRE(entries.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST(entries[i].first == expected[i].first);
    BOOST_TEST(entries[i].second == expected[i].second);
  }
}

BOOST_AUTO_TEST_SUITE_END()
