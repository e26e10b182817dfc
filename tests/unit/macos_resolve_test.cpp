// Binding the macOS target: resolution runs on this (Linux) filesystem, with a scratch
// tree laid out like a Mac's (tmp -> private/tmp, var -> private/var, a workspace reached
// through a symlink), and the bound artifacts go through the same verifier as on a Mac.
// The tree must not lie below /tmp, /var or /etc: the SBPL verifier reports any bound
// value there as not canonical, as it would be on a Mac (see mac_base()).
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "compiler/pipeline.hpp"
#include "support/parse.hpp"
#include "support/policy_dump.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
using compiler::HostOs;
using compiler::Target;
using ir::Mode;

namespace {

// A writable directory outside /tmp, /var and /etc whatever the checkout's location (CI
// may clone below /tmp): the current directory, else $HOME, else /run.
std::string mac_base() {
  std::vector<std::string> candidates{std::filesystem::current_path().string()};
  if (const char* home = std::getenv("HOME")) candidates.emplace_back(home);
  candidates.emplace_back("/run");
  for (const auto& c : candidates) {
    std::error_code ec;
    const std::string real = std::filesystem::canonical(c, ec).string();
    bool outside = !ec;
    for (const char* link : {"/tmp", "/var", "/etc"})
      outside = outside && real != link && !real.starts_with(std::string(link) + "/");
    if (outside && access(real.c_str(), W_OK) == 0) return real;
  }
  throw std::runtime_error("no writable directory outside /tmp, /var and /etc");
}

struct MacTree {
  test::TempDir dir{mac_base()};
  const std::string S = dir.str();
  const std::string W = S + "/private/tmp/ws";  // the workspace's canonical path

  MacTree() {
    dir.write("private/tmp/ws/.git", "gitdir: ../../var/gitdirs/wt\n");
    dir.mkdir("private/var/gitdirs/wt");
    dir.write("private/tmp/ws/.env", "TOKEN=x\n");
    dir.mkdir("private/tmp/ws/node_modules");
    dir.mkdir("private/tmp/ws/data");
    dir.mkdir("private/var/home/.ssh");
    dir.symlink("private/tmp", "tmp");
    dir.symlink("private/var", "var");
  }

  // The facts host_facts() gathers on a Mac whose workspace is given in canonical form
  // (a spelling through `S/link` is refused, red team R3-E1s).
  compiler::HostFacts mac() const {
    ir::Diagnostics diags;
    auto h = compiler::host_facts(S + "/private/tmp/ws", diags);
    BOOST_TEST_REQUIRE(h.has_value(), diags.str());
    h->home = S + "/var/home";
    h->tmpdir = S + "/tmp";
    h->cwd = h->workspace;
    h->os = HostOs::Macos;
    return *h;
  }

  std::string policy_text() const {
    return "zpolicy: 1\n"
           "mode: workspace-write\n"
           "filesystem:\n"
           "  protect: [.git, .env, node_modules, data/agent-sessions]\n"
           "  deny: [\"~/.ssh\", \"~/.aws\", \"" +
           S + "/tmp/ws/secrets\", \"" + S + "/var/missing/x\"]\n";
  }
};

ir::Policy policy(const std::string& text) {
  auto r = test::parse(text);
  BOOST_TEST_REQUIRE(r.errors == "");
  return *r.policy;
}

std::string artifact(const compiler::Compiled& c, const std::string& name) {
  for (const auto& a : c.artifacts)
    if (a.name == name) return a.content;
  BOOST_FAIL("no artifact " + name);
  return "";
}

std::string findings(const compiler::Compiled& c) {
  std::string out;
  for (const auto& f : c.findings) out += f.report() + "\n";
  return out;
}

std::string refusal(const std::string& text, const compiler::HostFacts& h,
                    Target target = Target::Macos) {
  ir::Diagnostics diags;
  auto c = compiler::compile(policy(text), target, Mode::WorkspaceWrite, h, diags);
  BOOST_TEST(!c.has_value());
  return diags.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(macos_resolve)

BOOST_AUTO_TEST_CASE(host_facts_name_this_system) {
  ir::Diagnostics diags;
  auto h = compiler::host_facts(std::nullopt, diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
#if defined(__linux__)
  BOOST_TEST((h->os == HostOs::Linux));
#elif defined(__APPLE__)
  BOOST_TEST((h->os == HostOs::Macos));
#endif
}

// Every parameter is the canonical target: the symlinked workspace, /tmp and /var
// resolved; missing paths (.aws, secrets, var/missing/x) as their existing prefix's
// canonical form plus the rest; the `.git` pointer and its git directory both protected.
BOOST_AUTO_TEST_CASE(parameters_carry_canonical_paths_and_verify_clean) {
  MacTree t;
  ir::Diagnostics diags;
  auto c = compiler::compile(policy(t.policy_text()), Target::Macos, Mode::WorkspaceWrite, t.mac(),
                             diags);
  BOOST_TEST_REQUIRE(c.has_value(), diags.str());
  BOOST_TEST(findings(*c) == "");
  const std::string& S = t.S;
  const std::string& W = t.W;
  // Each parameter by its role and value: names derive from the (host) paths.
  const std::vector<std::pair<std::string, std::string>> params = {
      {"WRITABLE_ROOT", W},
      {"PROTECTED_ANCESTOR", W + "/data"},
      {"PROTECTED", W + "/.env"},
      {"PROTECTED", W + "/.git"},
      {"PROTECTED", W + "/node_modules"},
      {"PROTECTED", S + "/private/var/gitdirs/wt"},
      {"PROTECTED", W + "/data/agent-sessions"},
      {"DENY_ROOT", W + "/secrets"},
      {"DENY_ROOT", S + "/private/var/home/.aws"},
      {"DENY_ROOT", S + "/private/var/home/.ssh"},
      {"DENY_ROOT", S + "/private/var/missing/x"}};
  std::istringstream text(artifact(*c, "params.txt"));
  std::string line;
  for (const auto& [role, value] : params) {
    BOOST_TEST_REQUIRE(static_cast<bool>(std::getline(text, line)), role << "=" << value);
    BOOST_TEST(line.starts_with(role + "_"), line);
    BOOST_TEST(line.ends_with("=" + value), line);
    BOOST_TEST(line.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == line.find('='),
               line);
  }
  BOOST_TEST(!std::getline(text, line));
  BOOST_TEST(c->resolved.cwd == W);
}

// Seatbelt's literal + subpath pair refuses creating a missing protected path, so a macOS
// binding assumes no placeholder (Linux's does) and compiling creates nothing.
BOOST_AUTO_TEST_CASE(missing_protected_paths_stay_missing) {
  MacTree t;
  ir::Diagnostics diags;
  auto c = compiler::compile(policy(t.policy_text()), Target::Macos, Mode::WorkspaceWrite, t.mac(),
                             diags);
  BOOST_TEST_REQUIRE(c.has_value(), diags.str());
  std::vector<std::string> missing;
  for (const auto& p : c->resolved.protect)
    if (p.kind == ir::HostKind::Missing) missing.push_back(p.path);
  for (const auto& p : c->resolved.deny)
    if (p.kind == ir::HostKind::Missing) missing.push_back(p.path);
  BOOST_TEST(missing == (std::vector<std::string>{t.W + "/data/agent-sessions", t.W + "/secrets",
                                                  t.S + "/private/var/home/.aws",
                                                  t.S + "/private/var/missing/x"}),
             boost::test_tools::per_element());
  for (const auto& p : missing) BOOST_TEST(!std::filesystem::exists(p), p);

  auto linux_facts = t.mac();
  linux_facts.os = HostOs::Linux;
  auto l = compiler::compile(policy(t.policy_text()), Target::Linux, Mode::WorkspaceWrite,
                             linux_facts, diags);
  BOOST_TEST_REQUIRE(l.has_value(), diags.str());
  for (const auto& p : l->resolved.protect) BOOST_TEST((p.kind != ir::HostKind::Missing), p.path);
}

BOOST_AUTO_TEST_CASE(protected_path_crossing_a_symlink_in_the_workspace_is_refused) {
  MacTree t;
  std::filesystem::remove(t.W + "/data");
  t.dir.mkdir("elsewhere/agent-sessions");
  t.dir.symlink("../../../elsewhere", "private/tmp/ws/data");
  BOOST_TEST(refusal(t.policy_text(), t.mac()) ==
             "p.yaml:4:39: error: protected path '" + t.W +
                 "/data/agent-sessions' crosses a symlink inside a writable root ('" + t.W +
                 "/data'); refusing to run\n");
}

// The deny path is spelled through the host's /tmp symlink, which is resolved; the
// symlink inside the workspace is not.
BOOST_AUTO_TEST_CASE(deny_path_crossing_a_symlink_in_the_workspace_is_refused) {
  MacTree t;
  t.dir.mkdir("outside");
  t.dir.symlink("../../../outside", "private/tmp/ws/secrets");
  BOOST_TEST(refusal(t.policy_text(), t.mac()) == "p.yaml:5:30: error: deny path '" + t.S +
                                                      "/tmp/ws/secrets' crosses a symlink inside "
                                                      "a writable root ('" +
                                                      t.W + "/secrets'); refusing to run\n");
}

// An absolute git directory behind the pointer is protected at its canonical path too.
BOOST_AUTO_TEST_CASE(git_pointer_through_a_symlinked_directory) {
  MacTree t;
  t.dir.write("private/tmp/ws/.git", "gitdir: " + t.S + "/var/gitdirs/wt\n");
  ir::Diagnostics diags;
  auto c = compiler::compile(policy(t.policy_text()), Target::Macos, Mode::WorkspaceWrite, t.mac(),
                             diags);
  BOOST_TEST_REQUIRE(c.has_value(), diags.str());
  BOOST_TEST(findings(*c) == "");
  BOOST_TEST(artifact(*c, "params.txt").find("=" + t.S + "/private/var/gitdirs/wt\n") !=
             std::string::npos);
}

// '..' in a host directory is resolved where the directory exists (the kernel's reading)
// and refused below one that does not, where nothing says what it would name.
BOOST_AUTO_TEST_CASE(dot_dot_in_a_host_directory) {
  MacTree t;
  t.dir.mkdir("private/var/home2/.ssh");
  auto h = t.mac();
  h.home = t.S + "/var/home/../home2";
  ir::Diagnostics diags;
  auto c =
      compiler::compile(policy(t.policy_text()), Target::Macos, Mode::WorkspaceWrite, h, diags);
  BOOST_TEST_REQUIRE(c.has_value(), diags.str());
  BOOST_TEST(artifact(*c, "params.txt").find("=" + t.S + "/private/var/home2/.ssh\n") !=
             std::string::npos);

  h.home = t.S + "/nohome/../var/home";
  // Only the deny paths' lines: the tree lies below the working directory (mac_base), which
  // may be a git checkout, whose repository above the workspace is read with the caller's
  // global files (red team A23-4), refused under this home as well.
  std::istringstream lines(refusal(t.policy_text(), h));
  std::string deny_lines;
  for (std::string line; std::getline(lines, line);)
    if (line.find(": error: deny path '") != std::string::npos) deny_lines += line + "\n";
  BOOST_TEST(deny_lines ==
             "p.yaml:5:10: error: deny path '" + t.S +
                 "/nohome/../var/home/.ssh' has '..' below '" + t.S +
                 "/nohome', which does not exist; refusing to guess what it names\n"
                 "p.yaml:5:20: error: deny path '" +
                 t.S + "/nohome/../var/home/.aws' has '..' below '" + t.S +
                 "/nohome', which does not exist; refusing to guess what it names\n");
}

// Bound artifacts name one system's paths: each target binds only on its own system.
BOOST_AUTO_TEST_CASE(a_target_binds_only_on_its_own_system) {
  MacTree t;
  auto h = t.mac();
  h.os = HostOs::Linux;
  BOOST_TEST(refusal(t.policy_text(), h) ==
             "<command line>: error: --workspace binds the policy to this host's paths, and this "
             "host is not macOS; compile the macos target without --workspace (portable) "
             "instead\n");
  h.os = HostOs::Macos;
  BOOST_TEST(refusal(t.policy_text(), h, Target::Linux) ==
             "<command line>: error: --workspace binds the policy to this host's paths, and this "
             "host is not Linux; compile the linux target without --workspace (portable) "
             "instead\n");
}

// A bound profile's parameters are host paths, in which a name that starts with "${" is a
// name (red team H17-10): a workspace below a Maven `${project.basedir}` and a nested
// repository `${WORKSPACE}/.git` compile and verify, the repository protected; a
// parameter that moves its protection elsewhere is refused.
BOOST_AUTO_TEST_CASE(a_name_that_starts_with_a_variable_binds_and_stays_protected) {
  test::TempDir dir{mac_base()};
  const std::string W = dir.mkdir("${project.basedir}/${x}/ws");
  dir.write("${project.basedir}/${x}/ws/.git/HEAD", "ref: refs/heads/main\n");
  const std::string repo = dir.mkdir("${project.basedir}/${x}/ws/${WORKSPACE}/.git");
  dir.write("${project.basedir}/${x}/ws/${WORKSPACE}/.git/HEAD", "ref: refs/heads/main\n");
  dir.write("${project.basedir}/${x}/ws/${HOME}/.env", "TOKEN=x\n");
  dir.mkdir("home");
  dir.mkdir("private/tmp");
  ir::Diagnostics diags;
  auto h = compiler::host_facts(W, diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  h->home = dir / "home";
  h->tmpdir = dir / "private/tmp";
  h->cwd = h->workspace;
  h->os = HostOs::Macos;
  const std::string text =
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [.git, \"**/.git\", "
      "\"**/.env\"]\n";
  auto c = compiler::compile(policy(text), Target::Macos, Mode::WorkspaceWrite, *h, diags);
  BOOST_TEST_REQUIRE(c.has_value(), diags.str());
  BOOST_TEST(findings(*c) == "");
  const std::string params = artifact(*c, "params.txt");
  BOOST_TEST(params.find("=" + repo + "\n") != std::string::npos, params);
  BOOST_TEST(params.find("=" + W + "/${HOME}/.env\n") != std::string::npos, params);

  for (const std::string& moved : {repo, W + "/${HOME}/.env"}) {
    std::vector<compiler::Artifact> edited = c->artifacts;
    for (auto& a : edited)
      if (a.name == "params.txt") {
        const size_t at = a.content.find("=" + moved + "\n");
        BOOST_TEST_REQUIRE(at != std::string::npos);
        a.content.replace(at + 1, moved.size(), W + "/elsewhere");
      }
    const auto refused = compiler::verify_given_artifacts(c->resolved, Target::Macos, edited);
    std::string report;
    for (const auto& f : refused) report += f.report() + "\n";
    BOOST_TEST(report.find("dropped-deny") != std::string::npos, moved << "\n" << report);
  }
}

BOOST_AUTO_TEST_SUITE_END()
