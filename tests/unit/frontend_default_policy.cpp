// The built-in default policy is DESIGN.md's workspace-write default, and what
// `zpolicy show-default` prints parses back into exactly the policy `run` uses.
#include <boost/test/unit_test.hpp>

#include "compiler/frontend/default_policy.hpp"
#include "compiler/frontend/policy_parser.hpp"
#include "compiler/resolve/resolve.hpp"
#include "support/parse.hpp"
#include "support/policy_dump.hpp"
#include "support/portable.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
using ir::Mode;

namespace {

std::string show_default(const std::vector<std::string>& extra, int expected_exit = 0) {
  test::TempDir scratch;
  std::vector<std::string> argv = {ZPOLICY_BINARY, "show-default"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = test::run_process(argv, scratch.str());
  BOOST_TEST(r.exit_code == expected_exit);
  return expected_exit == 0 ? r.out : r.err;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(frontend_default_policy)

BOOST_AUTO_TEST_CASE(default_is_the_designed_workspace_write_policy) {
  auto p = compiler::default_policy();
  BOOST_TEST((p.mode.value == Mode::WorkspaceWrite));
  auto strs = [](const auto& v) {
    std::vector<std::string> out;
    for (const auto& x : v) out.push_back(x.value.str());
    return out;
  };
  BOOST_TEST(strs(p.read) == std::vector<std::string>{"/"});
  BOOST_TEST(strs(p.write) == std::vector<std::string>{"${WORKSPACE}"});
  BOOST_TEST(strs(p.protect) ==
             (std::vector<std::string>{".git", ".env", ".env.local", "node_modules", ".next",
                                       "data/agent-sessions"}));
  // Every repository at any depth, besides the top `.git` that is kept even when absent;
  // those of the other version control systems whose metadata runs programs (A12-5).
  BOOST_TEST(strs(p.protect_patterns) ==
             (std::vector<std::string>{"**/.git", "**/.hg", "**/.sl", "**/.jj"}));
  BOOST_TEST(p.deny.empty());
  BOOST_TEST(p.deny_patterns.empty());
  BOOST_TEST((p.network.value == ir::Network::None));
  BOOST_TEST((p.syscalls.style == ir::SyscallSpec::Style::DenyList));
  std::vector<std::string> denied;
  for (const auto& r : p.syscalls.rules) {
    denied.push_back(r.name);
    BOOST_TEST(r.action.str() == "errno(1)");
  }
  BOOST_TEST(denied ==
             (std::vector<std::string>{"ptrace", "process_vm_readv", "process_vm_writev"}));
  std::vector<std::string> keep;
  for (const auto& k : p.env.keep) keep.push_back(k.value);
  BOOST_TEST(keep == ir::default_env_keep());
  BOOST_TEST(p.env.set.empty());
  BOOST_TEST(!p.timeout.has_value());
  BOOST_TEST((p.unavailable.value == ir::Unavailable::Deny));
  // Every rule of the default cites its line in the default policy text.
  BOOST_TEST(p.mode.loc.str() == "<default-policy>:3:7");
  BOOST_TEST(p.protect.at(5).loc.file == compiler::kDefaultPolicyFile);
  BOOST_TEST(p.protect.at(5).loc.line > 0);
}

// `run` takes the default IR as built, without parsing: it must be exactly what the
// frontend makes of the default's text, every value and every location.
BOOST_AUTO_TEST_CASE(built_default_equals_its_parsed_text_in_every_mode) {
  for (auto mode : {Mode::ReadOnly, Mode::WorkspaceWrite, Mode::DangerFullAccess}) {
    BOOST_TEST_CONTEXT(ir::to_string(mode)) {
      auto parsed = test::parse(compiler::default_policy_text(mode), compiler::kDefaultPolicyFile);
      BOOST_TEST_REQUIRE(parsed.errors == "");
      BOOST_TEST(test::dump(compiler::default_policy(mode)) == test::dump(*parsed.policy));
    }
  }
}

BOOST_AUTO_TEST_CASE(show_default_parses_back_into_the_default_for_every_accepted_mode) {
  const std::pair<std::vector<std::string>, Mode> cases[] = {
      {{}, Mode::WorkspaceWrite},
      {{"--mode", "workspace-write"}, Mode::WorkspaceWrite},
      {{"--mode", "read-only"}, Mode::ReadOnly},
      {{"--mode", "read_only"}, Mode::ReadOnly},
  };
  for (const auto& [args, mode] : cases) {
    std::string text = show_default(args);
    BOOST_TEST(text == compiler::default_policy_text(mode));
    ir::Diagnostics diags;
    auto parsed = compiler::parse_policy(text, compiler::kDefaultPolicyFile, diags);
    BOOST_TEST_REQUIRE(parsed.has_value(), diags.str());
    BOOST_TEST(test::dump(*parsed) == test::dump(compiler::default_policy(mode)));
    BOOST_TEST((parsed->mode.value == mode));
  }
}

BOOST_AUTO_TEST_CASE(show_default_refuses_a_wider_mode) {
  BOOST_TEST(show_default({"--mode", "danger-full-access"}, 2) ==
             "<default-policy>:3:7: error: --mode danger-full-access is wider than the policy's "
             "ceiling 'workspace-write'; --mode may only narrow it\n");
  BOOST_TEST(
      show_default({"--mode", "sideways"}, 2) ==
      "<command line>: error: invalid --mode 'sideways' (expected read-only, workspace-write "
      "or danger-full-access)\n");
}

// Narrowing the default at run time (--mode read-only) gives the same sandbox as the
// read-only default that show-default prints.
BOOST_AUTO_TEST_CASE(printed_read_only_default_equals_the_narrowed_default) {
  test::ResolvedDumpOptions opt;
  opt.locations = false;
  opt.syscalls = true;
  auto narrowed = test::portable(compiler::default_policy(), Mode::ReadOnly);
  auto printed = test::portable(compiler::default_policy(Mode::ReadOnly), Mode::ReadOnly);
  BOOST_TEST(test::dump(narrowed, opt) == test::dump(printed, opt));
  BOOST_TEST(narrowed.write.empty());
  BOOST_TEST(narrowed.protect.empty());
}

BOOST_AUTO_TEST_SUITE_END()
