// Resolution: portable (symbolic, host-blind) and bound to a host directory tree built
// here, with the refusals that keep a protected or denied path from slipping through a
// symlink.
#include <sys/stat.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "compiler/resolve/mount_objects.hpp"
#include "compiler/resolve/resolve.hpp"
#include "compiler/resolve/sandbox_mounts.hpp"
#include "compiler/resolve/state_dir.hpp"
#include "compiler/resolve/unmasked_names.hpp"
#include "compiler/resolve/workspace_spelling.hpp"
#include "support/parse.hpp"
#include "support/policy_dump.hpp"
#include "support/portable.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
using ir::Mode;

namespace {

ir::Policy policy(const std::string& text) {
  auto r = test::parse(text);
  BOOST_TEST_REQUIRE(r.errors == "");
  return *r.policy;
}

const std::string kPortablePolicy =
    "zpolicy: 1\n"
    "mode: workspace-write\n"
    "filesystem:\n"
    "  write: [\"${WORKSPACE}\", \"${TMPDIR}\"]\n"
    "  protect: [.git, data/agent-sessions, a/b/c]\n"
    "  deny: [\"~/.ssh\", \"/etc/shadow\", \"${WORKSPACE}/secrets\"]\n"
    "network: full\n"
    "process:\n"
    "  env: {keep: [PATH], set: {A: b}}\n"
    "  timeout: 2m\n";

const std::string kHostPolicy =
    "zpolicy: 1\n"
    "mode: workspace-write\n"
    "filesystem:\n"
    "  write: [\"${WORKSPACE}\"]\n"
    "  protect: [.git, .env, .env.local, node_modules, data/agent-sessions]\n"
    "  deny: [\"~/.ssh\", \"~/.aws\", \"${WORKSPACE}/secrets\"]\n";

// A workspace reached through a symlink, with a `.git` pointer file, some protected
// paths present and some missing, and a home directory holding one deny root.
struct HostTree {
  test::TempDir dir;
  std::string ws = dir / "real/ws";
  compiler::HostFacts facts;

  HostTree() {
    dir.write("real/ws/.git", "gitdir: ../gitdirs/wt\n");
    dir.mkdir("real/gitdirs/wt");
    dir.write("real/ws/.env", "TOKEN=x\n");
    dir.mkdir("real/ws/node_modules");
    dir.mkdir("real/ws/data");
    dir.mkdir("real/ws/sub");
    dir.mkdir("home/.ssh");
    dir.mkdir("tmp");
    dir.symlink("real/ws", "link");
  }

  compiler::HostFacts bind(const std::string& workspace) {
    ir::Diagnostics diags;
    auto h = compiler::host_facts(workspace, diags);
    BOOST_TEST_REQUIRE(h.has_value(), diags.str());
    h->home = dir / "home";
    h->tmpdir = dir / "tmp";
    h->cwd = ws + "/sub";
    // zpolicy's own state is hidden from every bound policy; the expectations below are
    // about the policy's paths (see zpolicys_state_directory_is_a_deny_root).
    h->state_dir.clear();
    return *h;
  }

  std::string resolve_errors(const std::string& text, const compiler::HostFacts& h) {
    ir::Diagnostics diags;
    auto r = compiler::resolve_for_host(policy(text), Mode::WorkspaceWrite, h, diags);
    BOOST_TEST(!r.has_value());
    return diags.str();
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(frontend_resolve)

BOOST_AUTO_TEST_CASE(portable_keeps_variables_pins_nested_protected_paths_and_sorts) {
  auto r = test::portable(policy(kPortablePolicy), Mode::WorkspaceWrite);
  const std::string expected =
      "mode workspace-write portable\n"
      "read / unknown @<builtin>\n"
      "write ${TMPDIR} unknown @p.yaml:4:27\n"
      "write ${WORKSPACE} unknown @p.yaml:4:11\n"
      "pin ${TMPDIR}/a unknown @p.yaml:5:40\n"
      "pin ${TMPDIR}/data unknown @p.yaml:5:19\n"
      "pin ${WORKSPACE}/a unknown @p.yaml:5:40\n"
      "pin ${WORKSPACE}/data unknown @p.yaml:5:19\n"
      "pin ${TMPDIR}/a/b unknown @p.yaml:5:40\n"
      "pin ${WORKSPACE}/a/b unknown @p.yaml:5:40\n"
      "protect ${TMPDIR}/.git unknown @p.yaml:5:13\n"
      "protect ${WORKSPACE}/.git unknown @p.yaml:5:13\n"
      "protect ${TMPDIR}/data/agent-sessions unknown @p.yaml:5:19\n"
      "protect ${WORKSPACE}/data/agent-sessions unknown @p.yaml:5:19\n"
      "protect ${TMPDIR}/a/b/c unknown @p.yaml:5:40\n"
      "protect ${WORKSPACE}/a/b/c unknown @p.yaml:5:40\n"
      "deny ${HOME}/.ssh unknown @p.yaml:6:10\n"
      "deny ${WORKSPACE}/secrets unknown @p.yaml:6:35\n"
      "deny /etc/shadow unknown @p.yaml:6:20\n"
      "network full\n"
      "private_tmp no\n"
      "cwd ${WORKSPACE}\n"
      "keep PATH\n"
      "set A=b\n"
      "timeout 120000ms\n"
      "unavailable deny\n";
  BOOST_TEST(test::dump(r) == expected);
}

// Depth is the number of components below the anchor: "/" (none) is bound before a
// symbolic root one component down, which it would otherwise cover (counting slashes made
// them equal, and "$" sorts before "/").
BOOST_AUTO_TEST_CASE(the_bind_order_counts_components_not_slashes) {
  const auto r =
      test::portable(policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                            "  read: [\"${HOME}/a/b\", /usr, \"${HOME}/a\", \"/\", \"${HOME}\"]\n"),
                     Mode::WorkspaceWrite);
  std::vector<std::string> read;
  for (const auto& p : r.read) read.push_back(p.path);
  const std::vector<std::string> expected = {"${HOME}", "/", "${HOME}/a", "/usr", "${HOME}/a/b"};
  BOOST_TEST(read == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(portable_output_does_not_depend_on_the_host) {
  auto before = test::dump(test::portable(policy(kPortablePolicy), Mode::WorkspaceWrite));
  test::TempDir elsewhere;
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(elsewhere.path());
  setenv("ZPOLICY_TEST_UNRELATED", "1", 1);
  auto after = test::dump(test::portable(policy(kPortablePolicy), Mode::WorkspaceWrite));
  std::filesystem::current_path(cwd);
  unsetenv("ZPOLICY_TEST_UNRELATED");
  BOOST_TEST(before == after);
  BOOST_TEST(before.find(elsewhere.str()) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(absolute_protected_path_under_a_root) {
  auto r = test::portable(policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                 "  write: [/srv/app]\n"
                                 "  protect: [/srv/app/config/keys, /elsewhere/x]\n"),
                          Mode::WorkspaceWrite);
  BOOST_TEST_REQUIRE(r.pin.size() == 1u);
  BOOST_TEST(r.pin[0].path == "/srv/app/config");
  BOOST_TEST_REQUIRE(r.protect.size() == 1u);
  BOOST_TEST(r.protect[0].path == "/srv/app/config/keys");
  BOOST_TEST(r.protect[0].loc.str() == "p.yaml:5:13");
}

// Protecting a whole writable root keeps it read-only rather than silently dropping the rule.
BOOST_AUTO_TEST_CASE(protected_path_equal_to_a_writable_root_is_kept) {
  auto r = test::portable(policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                 "  write: [\"${WORKSPACE}\", /srv]\n"
                                 "  protect: [/srv]\n"),
                          Mode::WorkspaceWrite);
  BOOST_TEST_REQUIRE(r.protect.size() == 1u);
  BOOST_TEST(r.protect[0].path == "/srv");
  BOOST_TEST(r.pin.empty());

  HostTree t;
  ir::Diagnostics diags;
  auto bound = compiler::resolve_for_host(policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                                 "  protect: [\"${WORKSPACE}\"]\n"),
                                          Mode::WorkspaceWrite, t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(bound.has_value(), diags.str());
  BOOST_TEST_REQUIRE(bound->protect.size() == 1u);
  BOOST_TEST(bound->protect[0].path == t.ws);
}

BOOST_AUTO_TEST_CASE(narrowing_to_read_only_drops_writes_network_and_run_unconfined) {
  auto p =
      policy("zpolicy: 1\nmode: workspace-write\nnetwork: full\nunavailable: run-unconfined\n");
  auto ww = test::portable(p, Mode::WorkspaceWrite);
  BOOST_TEST((ww.unavailable == ir::Unavailable::RunUnconfined));
  BOOST_TEST((ww.network == ir::Network::Full));
  auto ro = test::portable(p, Mode::ReadOnly);
  BOOST_TEST((ro.mode == Mode::ReadOnly));
  BOOST_TEST(ro.write.empty());
  BOOST_TEST(ro.pin.empty());
  BOOST_TEST(ro.protect.empty());
  BOOST_TEST((ro.network == ir::Network::None));
  BOOST_TEST((ro.unavailable == ir::Unavailable::Deny));

  HostTree t;
  ir::Diagnostics diags;
  auto bound = compiler::resolve_for_host(p, Mode::ReadOnly, t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(bound.has_value(), diags.str());
  BOOST_TEST((bound->unavailable == ir::Unavailable::Deny));
  BOOST_TEST(bound->write.empty());
}

// Red-team R3-E1s: a symlink in the spelling of the workspace may have been planted by a
// sandbox; the user is told the canonical form to give instead.
BOOST_AUTO_TEST_CASE(host_facts_refuse_a_workspace_spelled_through_a_symlink) {
  HostTree t;
  BOOST_TEST(t.bind(t.ws).workspace == t.ws);
  for (const std::string& spelled : {t.dir / "link", t.dir / "link/../ws", t.dir / "link/."}) {
    ir::Diagnostics d;
    BOOST_TEST(!compiler::host_facts(spelled, d).has_value(), spelled);
    BOOST_TEST(d.str() == "<host>: error: workspace '" + spelled +
                              "' is spelled through the symlink '" + (t.dir / "link") +
                              "', which may have been planted to redirect the run; if '" +
                              std::filesystem::canonical(spelled).string() +
                              "' is the directory meant, give it as --workspace " +
                              std::filesystem::canonical(spelled).string() + "\n");
  }
  ir::Diagnostics diags;
  BOOST_TEST(!compiler::host_facts(t.dir / "real/ws/.env", diags).has_value());
  BOOST_TEST(diags.str() ==
             "<host>: error: workspace '" + (t.dir / "real/ws/.env") + "' is not a directory\n");
}

// The one kind of link a workspace may be spelled through: a root-owned one directly in a
// root-only "/" (merged-/usr's /lib, /home -> usr/home); the walk goes on from its target.
BOOST_AUTO_TEST_CASE(a_root_owned_link_directly_in_the_root_may_be_crossed) {
  int crossed = 0;
  for (const auto& e : std::filesystem::directory_iterator("/")) {
    struct stat st;
    if (lstat(e.path().c_str(), &st) != 0 || !S_ISLNK(st.st_mode) || st.st_uid != 0 ||
        !std::filesystem::is_directory(e.path()))
      continue;
    BOOST_TEST(!compiler::walk_workspace_spelling(e.path().string() + "/.", "/").link,
               e.path());
    ++crossed;
  }
  BOOST_TEST_MESSAGE(crossed << " root-owned links to directories in /");
  HostTree t;
  BOOST_TEST(compiler::walk_workspace_spelling("link/.", t.dir.str()).link.value_or("") == "link");
  const auto plain = compiler::walk_workspace_spelling("real/ws/../ws", t.dir.str());
  BOOST_TEST(!plain.link);
  BOOST_TEST(plain.walked == t.dir.str() + "/real/ws");
}

BOOST_AUTO_TEST_CASE(bound_to_a_host_tree) {
  HostTree t;
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(policy(kHostPolicy), Mode::WorkspaceWrite,
                                      t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  const std::string W = t.ws, T = t.dir.str();
  const std::string expected =
      "mode workspace-write bound\n"
      "read / directory @<builtin>\n"
      "write " +
      W +
      " directory @p.yaml:4:11\n"
      "pin " +
      W +
      "/data directory @p.yaml:5:51\n"
      "protect " +
      T +
      "/real/gitdirs/wt directory @p.yaml:5:13\n"
      "protect " +
      W +
      "/.env file @p.yaml:5:19\n"
      "protect " +
      W +
      "/.env.local missing @p.yaml:5:25\n"
      "protect " +
      W +
      "/.git file @p.yaml:5:13\n"
      "protect " +
      W +
      "/node_modules directory @p.yaml:5:37\n"
      "protect " +
      W +
      "/data/agent-sessions missing @p.yaml:5:51\n"
      "deny " +
      T +
      "/home/.aws missing @p.yaml:6:20\n"
      "deny " +
      T +
      "/home/.ssh directory @p.yaml:6:10\n"
      "deny " +
      W +
      "/secrets missing @p.yaml:6:30\n"
      "network none\n"
      "private_tmp yes\n"
      "cwd " +
      W +
      "/sub\n"
      "keep PATH\nkeep HOME\nkeep USER\nkeep LOGNAME\nkeep LANG\nkeep LC_*\nkeep TERM\nkeep "
      "TZ\nkeep SHELL\n"
      "unavailable deny\n";
  BOOST_TEST(test::dump(*r) == expected);
}

BOOST_AUTO_TEST_CASE(git_pointer_with_an_absolute_gitdir) {
  HostTree t;
  t.dir.mkdir("main/.git/worktrees/ws");
  t.dir.write("real/ws/.git", "gitdir: " + (t.dir / "main/.git/worktrees/ws") + "\n");
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [.git]\n"),
      Mode::WorkspaceWrite, t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  std::vector<std::string> protect;
  for (const auto& p : r->protect) protect.push_back(p.path + " " + ir::to_string(p.kind));
  BOOST_TEST(protect == (std::vector<std::string>{t.ws + "/.git file",
                                                  t.dir / "main/.git/worktrees/ws directory"}));
}

// A pointer to a git directory that does not exist is followed as every `.git` pointer is
// (follow_git_pointer, review R25-2): no run refused for a stale one, and a placeholder
// where the sandbox could make it.
BOOST_AUTO_TEST_CASE(git_pointer_to_a_missing_directory_is_protected) {
  HostTree t;
  t.dir.write("real/ws/.git", "gitdir: .mods/gd\n");
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [.git]\n"),
      Mode::WorkspaceWrite, t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  std::vector<std::string> protect;
  for (const auto& p : r->protect) protect.push_back(p.path + " " + ir::to_string(p.kind));
  BOOST_TEST(protect ==
             (std::vector<std::string>{t.ws + "/.git file", t.ws + "/.mods/gd missing"}));
}

// Red team A26-4: each directory of the workspace a '..' leaves on the way to what a `.git`
// file names is pinned (the sandbox could make it a link, and the kernel's '..' would leave
// its target); the workspace itself, a mount point already, is none.
BOOST_AUTO_TEST_CASE(a_directory_a_dot_dot_leaves_in_the_workspace_is_pinned) {
  HostTree t;
  t.dir.mkdir("real/ws/sub/deeper");
  t.dir.write("real/ws/.git", "gitdir: sub/deeper/../../../ws/.mods/gd\n");
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [.git]\n"),
      Mode::WorkspaceWrite, t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  std::vector<std::string> pins;
  for (const auto& p : r->pin) pins.push_back(p.path + " " + ir::to_string(p.kind));
  const auto pinned = [&](const std::string& line) {
    return std::find(pins.begin(), pins.end(), line) != pins.end();
  };
  BOOST_TEST(pinned(t.ws + "/sub directory"));
  BOOST_TEST(pinned(t.ws + "/sub/deeper directory"));
  BOOST_TEST(!pinned(t.ws + " directory"));
  BOOST_TEST(std::any_of(r->protect.begin(), r->protect.end(),
                         [&](const ir::ResolvedPath& p) { return p.path == t.ws + "/.mods/gd"; }));
}

BOOST_AUTO_TEST_CASE(git_pointer_to_a_missing_directory_outside_the_workspace_is_no_refusal) {
  HostTree t;
  t.dir.write("real/ws/.git", "gitdir: /nonexistent/zpolicy/gitdir\n");
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [.git]\n"),
      Mode::WorkspaceWrite, t.bind(t.ws), diags);
  BOOST_TEST(r.has_value(), diags.str());
}

BOOST_AUTO_TEST_CASE(protected_path_crossing_a_symlink_is_refused_naming_the_symlink) {
  HostTree t;
  std::filesystem::remove(t.ws + "/data");
  t.dir.mkdir("elsewhere/agent-sessions");
  t.dir.symlink("../../elsewhere", "real/ws/data");
  BOOST_TEST(t.resolve_errors(kHostPolicy, t.bind(t.ws)) ==
             "p.yaml:5:51: error: protected path '" + t.ws +
                 "/data/agent-sessions' crosses a symlink "
                 "inside a writable root ('" +
                 t.ws + "/data'); refusing to run\n");
}

BOOST_AUTO_TEST_CASE(protected_path_that_is_a_symlink_is_refused) {
  HostTree t;
  std::filesystem::remove(t.ws + "/.env");
  t.dir.symlink("/etc/hostname", "real/ws/.env");
  BOOST_TEST(t.resolve_errors(kHostPolicy, t.bind(t.ws)) ==
             "p.yaml:5:19: error: protected path '" + t.ws +
                 "/.env' crosses a symlink inside a "
                 "writable root ('" +
                 t.ws + "/.env'); refusing to run\n");
}

BOOST_AUTO_TEST_CASE(deny_path_crossing_a_symlink_inside_a_writable_root_is_refused) {
  HostTree t;
  t.dir.mkdir("outside");
  t.dir.symlink("../../outside", "real/ws/secrets");
  BOOST_TEST(t.resolve_errors(kHostPolicy, t.bind(t.ws)) ==
             "p.yaml:6:30: error: deny path '" + t.ws +
                 "/secrets' crosses a symlink inside a "
                 "writable root ('" +
                 t.ws + "/secrets'); refusing to run\n");
}

// Red team A21B-4: the walk that canonicalises a path counts links as the kernel does, and
// past 40 nothing is judged: the path is refused at resolution, for a writable, readable
// or deny root alike, rather than spelled from the last link and looked up again by a
// `stat()` that follows it afresh (which found a directory through a planted link). A
// loop ends there too. Under the limit the root is the links' target.
BOOST_AUTO_TEST_CASE(a_path_past_the_kernels_link_limit_is_refused) {
  HostTree t;
  t.dir.mkdir("h");
  t.dir.mkdir("target/out");
  for (int i = 1; i <= 36; ++i) t.dir.symlink(".", "h/l" + std::to_string(i));
  t.dir.symlink("../target", "h/c0");
  for (int i = 1; i <= 5; ++i)
    t.dir.symlink("c" + std::to_string(i - 1), "h/c" + std::to_string(i));
  auto through = [&](int links) {
    std::string root = t.dir / "h";
    for (int i = 1; i <= links; ++i) root += "/l" + std::to_string(i);
    return root + "/c5/out";
  };
  const std::string head = "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: []\n";
  for (const std::string key : {"write", "read", "deny"}) {
    const std::string text = head + "  " + key + ": [\"" + through(36) + "\"]\n";
    const std::string what = key == "write"  ? "writable root"
                             : key == "read" ? "readable root"
                                             : "deny path";
    BOOST_TEST(
        t.resolve_errors(text, t.bind(t.ws))
                .find("error: " + what + " '" + through(36) +
                      "' crosses more than 40 symlinks, more than the kernel follows in one lookup "
                      "(ELOOP; the last one counted is '") != std::string::npos,
        key);
  }
  t.dir.symlink("loop-b", "h/loop-a");
  t.dir.symlink("loop-a", "h/loop-b");
  BOOST_TEST(
      t.resolve_errors(head + "  write: [\"" + (t.dir / "h/loop-a/out") + "\"]\n", t.bind(t.ws))
          .find("crosses more than 40 symlinks") != std::string::npos);
  ir::Diagnostics diags;
  const auto r = compiler::resolve_for_host(policy(head + "  write: [\"" + through(30) + "\"]\n"),
                                            Mode::WorkspaceWrite, t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  BOOST_TEST(r->write.size() == 1u);
  BOOST_TEST(r->write.front().path == t.dir / "target/out");
  BOOST_TEST((r->write.front().kind == ir::HostKind::Directory));
}

// Red team N20-1: a writable root nested in another is reached through a link the
// sandbox could have planted in the outer one (N20-3: or a run under another policy, in
// the workspace); wherever it is on the way (the root itself included, `${TMPDIR}` spelled
// as the caller gave it), and whichever order the roots come in, resolution refuses, as
// for a protected path or a deny root. A link whose
// directory no writable root holds is host layout, and the root is its target.
BOOST_AUTO_TEST_CASE(writable_root_crossing_a_symlink_inside_a_writable_root_is_refused) {
  HostTree t;
  t.dir.mkdir("victim/out");
  t.dir.symlink("../../victim", "real/ws/build");
  t.dir.symlink("../../../victim/out", "real/ws/sub/out");
  const std::string head = "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: []\n";
  BOOST_TEST(t.resolve_errors(head + "  write: [\"${WORKSPACE}\", \"${WORKSPACE}/build/out\"]\n",
                              t.bind(t.ws)) ==
             "p.yaml:5:27: error: writable root '" + t.ws +
                 "/build/out' crosses a symlink inside a writable root ('" + t.ws +
                 "/build'); refusing to run\n");
  BOOST_TEST(t.resolve_errors(head + "  write: [\"${WORKSPACE}/sub/out\", \"${WORKSPACE}\"]\n",
                              t.bind(t.ws)) ==
             "p.yaml:5:11: error: writable root '" + t.ws +
                 "/sub/out' crosses a symlink inside a writable root ('" + t.ws +
                 "/sub/out'); refusing to run\n");
  compiler::HostFacts tmp_inside = t.bind(t.ws);
  tmp_inside.tmpdir = t.ws + "/build/out";
  BOOST_TEST(t.resolve_errors(head + "  write: [\"${WORKSPACE}\", \"${TMPDIR}\"]\n", tmp_inside) ==
             "p.yaml:5:27: error: writable root '" + t.ws +
                 "/build/out' crosses a symlink inside a writable root ('" + t.ws +
                 "/build'); refusing to run\n");
  // Alone too (N20-3): a run under another policy (the default's, which writes the
  // workspace) may have planted the link.
  BOOST_TEST(t.resolve_errors(head + "  write: [\"${WORKSPACE}/build/out\"]\n", t.bind(t.ws)) ==
             "p.yaml:5:11: error: writable root '" + t.ws +
                 "/build/out' crosses a symlink inside the workspace ('" + t.ws +
                 "/build'), which a run under another policy may have planted; name the "
                 "directory it leads to; refusing to run\n");
  // A link outside the workspace and every writable root is host layout: the root is its
  // target.
  t.dir.symlink("victim", "hostlink");
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(
      policy(head + "  write: [\"${WORKSPACE}\", \"" + (t.dir / "hostlink/out") + "\"]\n"),
      Mode::WorkspaceWrite, t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  BOOST_TEST(r->write.at(1).path == t.dir / "victim/out");
}

// Red team A21-1, A21-2: a link's target is walked as the rest of the path is, so a link
// it crosses is judged too. A host link outside the workspace into the workspace's `build`
// (`hop -> real/ws/build`), with `build` a link a run planted, made the root the planted
// link's target; a protected path the same way was protected at the planted target, and
// the sandbox could re-point the host's name. A chain of host links outside every root is
// host layout still, and a loop names nothing.
BOOST_AUTO_TEST_CASE(a_links_target_is_walked_and_the_links_it_crosses_are_judged) {
  HostTree t;
  t.dir.mkdir("victim/out");
  t.dir.symlink("../../victim", "real/ws/build");
  t.dir.symlink("real/ws/build", "hop");
  t.dir.symlink(t.dir / "hop", "home/cache");
  const std::string head = "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: []\n";
  BOOST_TEST(t.resolve_errors(head + "  write: [\"" + (t.dir / "hop/out") + "\"]\n",
                              t.bind(t.ws)) ==
             "p.yaml:5:11: error: writable root '" + (t.dir / "hop/out") +
                 "' crosses a symlink inside the workspace ('" + t.ws +
                 "/build'), which a run under another policy may have planted; name the "
                 "directory it leads to; refusing to run\n");
  BOOST_TEST(t.resolve_errors(head + "  write: [\"${HOME}/cache/out\"]\n", t.bind(t.ws)) ==
             "p.yaml:5:11: error: writable root '" + (t.dir / "home/cache/out") +
                 "' crosses a symlink inside the workspace ('" + t.ws +
                 "/build'), which a run under another policy may have planted; name the "
                 "directory it leads to; refusing to run\n");
  t.dir.mkdir("real/ws/decoy");
  t.dir.symlink("decoy", "real/ws/cfg");
  t.dir.symlink("real/ws/cfg", "cfg");
  BOOST_TEST(t.resolve_errors("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [\"" +
                                  (t.dir / "cfg/secret.env") +
                                  "\"]\n  write: [\"${WORKSPACE}\"]\n",
                              t.bind(t.ws)) ==
             "p.yaml:4:13: error: protected path '" + (t.dir / "cfg/secret.env") +
                 "' crosses a symlink inside a writable root ('" + t.ws +
                 "/cfg'); refusing to run\n");
  t.dir.mkdir("far/out");
  t.dir.symlink("far", "hop2");
  t.dir.symlink("hop2", "hop1");
  t.dir.symlink("loop", "loop");
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(
      policy(head + "  write: [\"${WORKSPACE}\", \"" + (t.dir / "hop1/out") + "\"]\n"),
      Mode::WorkspaceWrite, t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  BOOST_TEST(std::any_of(r->write.begin(), r->write.end(),
                         [&](const ir::ResolvedPath& w) { return w.path == t.dir / "far/out"; }));
  // A loop ends at the kernel's link limit, refused as such (red team A21B-4).
  BOOST_TEST(t.resolve_errors(head + "  write: [\"" + (t.dir / "loop/out") + "\"]\n",
                              t.bind(t.ws)) ==
             "p.yaml:5:11: error: writable root '" + (t.dir / "loop/out") +
                 "' crosses more than 40 symlinks, more than the kernel follows in one lookup "
                 "(ELOOP; the last one counted is '" +
                 (t.dir / "loop") + "'); name the directory it leads to; refusing to run\n");
}

// Red team A22-1: a missing protected path spelled from a host's dangling link is created
// where the link leads, a writable root here: protected there too (a placeholder).
BOOST_AUTO_TEST_CASE(a_protected_path_through_a_dangling_host_link_is_protected_where_it_leads) {
  HostTree t;
  t.dir.symlink(t.ws + "/new", "dl");
  const auto protecting = [&](const std::string& path) {
    return policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [\"" + path +
                  "\"]\n  write: [\"${WORKSPACE}\"]\n");
  };
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(protecting(t.dir / "dl/key"), Mode::WorkspaceWrite,
                                      t.bind(t.ws), diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  BOOST_TEST(std::any_of(r->protect.begin(), r->protect.end(), [&](const ir::ResolvedPath& p) {
    return p.path == t.ws + "/new/key" && p.kind == ir::HostKind::Missing;
  }));
}

// Red team A22C-2: a missing deny root spelled from a host's dangling link into a writable
// root is only watched, and the sandbox wrote there before the watch stopped it: refused,
// naming where the kernel would create it; a dangling link leading elsewhere is not.
BOOST_AUTO_TEST_CASE(a_deny_root_through_a_dangling_host_link_into_a_writable_root_is_refused) {
  HostTree t;
  t.dir.symlink(t.ws + "/new", "dl");
  t.dir.symlink(t.dir / "nowhere", "away");
  const auto denying = [&](const std::string& path) {
    return policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  deny: [\"" + path +
                  "\"]\n  write: [\"${WORKSPACE}\"]\n");
  };
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(denying(t.dir / "dl"), Mode::WorkspaceWrite, t.bind(t.ws),
                                      diags);
  BOOST_TEST(!r.has_value());
  BOOST_TEST(diags.str().find("the kernel would create it at '" + t.ws + "/new'") !=
                 std::string::npos,
             diags.str());
  ir::Diagnostics elsewhere;
  BOOST_TEST(compiler::resolve_for_host(denying(t.dir / "away/key"), Mode::WorkspaceWrite,
                                        t.bind(t.ws), elsewhere)
                 .has_value(),
             elsewhere.str());
}

// Red team A22D-1: a remote's repository spelled from a host's dangling link into a
// writable root protected nothing, and the sandbox made it, hooks and all: refused, naming
// where the kernel would create it; one through a dangling link leading elsewhere is not.
BOOST_AUTO_TEST_CASE(a_remote_through_a_dangling_host_link_into_a_writable_root_is_refused) {
  HostTree t;
  t.dir.write("real/gitdirs/wt/HEAD", "ref: refs/heads/main\n");
  t.dir.mkdir("real/gitdirs/wt/objects");
  t.dir.mkdir("real/gitdirs/wt/refs");
  t.dir.symlink(t.ws + "/l", "h");
  t.dir.symlink(t.dir / "nowhere", "away");
  const auto remote = [&](const std::string& url) {
    t.dir.write("real/gitdirs/wt/config", "[remote \"origin\"]\n\turl = " + url + "\n");
    ir::Diagnostics diags;
    const bool ok = compiler::resolve_for_host(
                        policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [.git]\n"
                               "  write: [\"${WORKSPACE}\"]\n"),
                        Mode::WorkspaceWrite, t.bind(t.ws), diags)
                        .has_value();
    return std::make_pair(ok, diags.str());
  };
  const auto [into, why] = remote(t.dir / "h/repo.git");
  BOOST_TEST(!into);
  BOOST_TEST(
      why.find("the kernel would create it at '" + t.ws + "/l/repo.git/.git'") != std::string::npos,
      why);
  const auto [elsewhere, fine] = remote(t.dir / "away/repo.git");
  BOOST_TEST(elsewhere, fine);
}

// Red team A22F-1: a git directory's `remotes`, `branches` or `modules` that is a host link
// into a writable root is protected as a whole (git reads remote URLs and takes over
// submodule git directories there), and refused when dangling.
BOOST_AUTO_TEST_CASE(a_git_directorys_remotes_or_modules_linked_into_a_writable_root_is_protected) {
  for (const std::string name : {"remotes", "branches", "modules"})
    for (const bool dangling : {false, true}) {
      HostTree t;
      t.dir.write("real/gitdirs/wt/HEAD", "ref: refs/heads/main\n");
      t.dir.mkdir("real/gitdirs/wt/objects");
      t.dir.mkdir("real/gitdirs/wt/refs");
      t.dir.symlink(t.ws + "/." + name, "real/gitdirs/wt/" + name);
      if (!dangling) t.dir.mkdir("real/ws/." + name);
      ir::Diagnostics diags;
      const auto r = compiler::resolve_for_host(
          policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [.git]\n"
                 "  write: [\"${WORKSPACE}\"]\n"),
          Mode::WorkspaceWrite, t.bind(t.ws), diags);
      BOOST_TEST(r.has_value() == !dangling, name + ": " + diags.str());
      if (dangling) {
        BOOST_TEST(diags.str().find("reaches the dangling symlink") != std::string::npos,
                   diags.str());
      } else if (r) {
        BOOST_TEST(std::any_of(r->protect.begin(), r->protect.end(),
                               [&](const auto& p) { return p.path == t.ws + "/." + name; }),
                   name);
      }
    }
}

// Red team A21-3: a readable root whose way crosses a link in the workspace, which a run
// under another policy may have planted, is refused in every mode: `read: [/usr,
// "${WORKSPACE}/docs"]` with `docs -> /root` made `/root` readable.
BOOST_AUTO_TEST_CASE(readable_root_crossing_a_symlink_in_the_workspace_is_refused) {
  HostTree t;
  t.dir.mkdir("victim");
  t.dir.symlink("../../victim", "real/ws/docs");
  t.dir.symlink("real/ws/docs", "hop");
  for (const auto mode : {Mode::ReadOnly, Mode::WorkspaceWrite})
    for (const std::string& root : {std::string("${WORKSPACE}/docs"), t.dir / "hop"}) {
      ir::Diagnostics diags;
      auto r = compiler::resolve_for_host(
          policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [/usr, \"" + root +
                 "\"]\n  write: []\n  protect: []\n"),
          mode, t.bind(t.ws), diags);
      BOOST_TEST(!r.has_value(), root);
      const std::string spelled = root == t.dir / "hop" ? root : t.ws + "/docs";
      BOOST_TEST(diags.str() ==
                     "p.yaml:4:16: error: readable root '" + spelled +
                         "' crosses a symlink inside the workspace ('" + t.ws +
                         "/docs'), which a run under another policy may have planted; name "
                         "the directory it leads to; refusing to run\n",
                 root);
    }
}

// A variable is walked as the caller spelled it, so a `HOME` kept in the workspace (a CI
// job's `HOME=$PWD/.home`) that a run made a link is judged as any other link on the way:
// a readable, protected or deny path below it is refused, where the anchor had followed
// the link first and the walk saw none.
BOOST_AUTO_TEST_CASE(a_home_reached_through_a_link_in_the_workspace_is_judged) {
  HostTree t;
  t.dir.mkdir("decoy/.config");
  t.dir.symlink("../../decoy", "real/ws/.home");
  compiler::HostFacts h = t.bind(t.ws);
  h.home = t.ws + "/.home";
  const std::string head = "zpolicy: 1\nmode: workspace-write\nfilesystem:\n";
  // Each refusal first; the caller's global git config files, read through the same link,
  // are refused after it (red team A25-4: read whether or not a git directory is).
  auto starts = [](const std::string& text, const std::string& first) {
    return text.rfind(first, 0) == 0 &&
           text.find("error: git config file names '") != std::string::npos;
  };
  BOOST_TEST(starts(t.resolve_errors(head + "  protect: [\"${HOME}/.gitconfig\"]\n", h),
                    "p.yaml:4:13: error: protected path '" + t.ws +
                        "/.home/.gitconfig' crosses a symlink inside a writable root ('" + t.ws +
                        "/.home'); refusing to run\n"));
  BOOST_TEST(starts(t.resolve_errors(head + "  protect: []\n  deny: [\"${HOME}/.ssh\"]\n", h),
                    "p.yaml:5:10: error: deny path '" + t.ws +
                        "/.home/.ssh' crosses a symlink inside a writable root ('" + t.ws +
                        "/.home'); refusing to run\n"));
  BOOST_TEST(
      starts(t.resolve_errors(head + "  protect: []\n  read: [/usr, \"${HOME}/.config\"]\n", h),
             "p.yaml:5:16: error: readable root '" + t.ws +
                 "/.home/.config' crosses a symlink inside a writable root ('" + t.ws +
                 "/.home'); refusing to run\n"));
}

// Red team N20-2: a writable root inside a deny root is not mounted (the verifier refused
// the emitter's mask over the nested bind as a malformed artifact, exit 3), whether the
// policy writes the deny root's parent or only the inner root; the deny root stays.
BOOST_AUTO_TEST_CASE(writable_root_inside_a_deny_root_is_dropped) {
  HostTree t;
  t.dir.mkdir("real/ws/sec/out");
  const std::string head = "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: []\n";
  for (const std::string write : {"\"${WORKSPACE}\", \"${WORKSPACE}/sec/out\"",
                                  "\"${WORKSPACE}/sec/out\""}) {
    ir::Diagnostics diags;
    const auto r = compiler::resolve_for_host(
        policy(head + "  write: [" + write + "]\n  deny: [\"${WORKSPACE}/sec\"]\n"),
        Mode::WorkspaceWrite, t.bind(t.ws), diags);
    BOOST_TEST_REQUIRE(r.has_value(), diags.str());
    for (const auto& w : r->write) BOOST_TEST(w.path != t.ws + "/sec/out");
    BOOST_TEST(std::any_of(r->deny.begin(), r->deny.end(),
                           [&](const ir::ResolvedPath& d) { return d.path == t.ws + "/sec"; }));
  }
}

BOOST_AUTO_TEST_CASE(a_host_path_with_a_line_break_is_refused_naming_it) {
  HostTree t;
  t.dir.mkdir("real/ws/line\nbreak");
  const std::string ws = t.ws + "/line\nbreak";
  const std::string errors =
      t.resolve_errors("zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                       "  write: [\"${WORKSPACE}\"]\n",
                       t.bind(ws));
  BOOST_TEST(errors == "p.yaml:4:11: error: the host path '" + t.ws +
                           "/line\\nbreak' holds a line break, which the artifacts (one path "
                           "per line) cannot carry; rename it; refusing to run\n");
  // The directory the run starts in, below a workspace without one.
  auto h = t.bind(t.ws);
  h.cwd = ws;
  BOOST_TEST(t.resolve_errors("zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                              "  write: [\"${WORKSPACE}\"]\n",
                              h) == "<working directory>: error: the host path '" + t.ws +
                                        "/line\\nbreak' holds a line break, which the artifacts "
                                        "(one path per line) cannot carry; rename it; refusing "
                                        "to run\n");
}

BOOST_AUTO_TEST_CASE(missing_writable_root_is_refused) {
  HostTree t;
  BOOST_TEST(t.resolve_errors(
                 "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${TMPDIR}/nope\"]\n",
                 t.bind(t.ws)) == "p.yaml:4:11: error: writable root '" + (t.dir / "tmp/nope") +
                                      "' is not an existing directory; create it (`mkdir -p '" +
                                      (t.dir / "tmp/nope") +
                                      "'`) or remove it from filesystem.write\n");
}

// ${HOME} bound through a symlink: a protected path spelled with the variable still lands
// under the (canonical) writable root instead of being dropped.
BOOST_AUTO_TEST_CASE(variable_anchors_are_canonical) {
  HostTree t;
  t.dir.mkdir("realhome/.config");
  t.dir.symlink("realhome", "homelink");
  auto h = t.bind(t.ws);
  h.home = t.dir / "homelink";
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                             "  write: [\"${HOME}\"]\n"
                                             "  protect: [\"${HOME}/.config\"]\n"
                                             "  deny: [\"~/.ssh\"]\n"),
                                      Mode::WorkspaceWrite, h, diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  // With the caller's global git config files in the writable home, protected as every
  // config file git reads (red team A25-4).
  // (`.config/git/config` lies in the protected `.config`.)
  BOOST_TEST_REQUIRE(r->protect.size() == 2u);
  BOOST_TEST(r->protect[0].path == t.dir / "realhome/.config");
  BOOST_TEST((r->protect[0].kind == ir::HostKind::Directory));
  BOOST_TEST(r->protect[1].path == t.dir / "realhome/.gitconfig");
  BOOST_TEST_REQUIRE(r->deny.size() == 1u);
  BOOST_TEST(r->deny[0].path == t.dir / "realhome/.ssh");
}

BOOST_AUTO_TEST_CASE(host_path_components_need_not_be_valid_policy_components) {
  test::TempDir dir;
  dir.mkdir("we$ird/.ssh");
  dir.mkdir("tmp");
  ir::Diagnostics diags;
  auto h = compiler::host_facts(dir.str(), diags).value();
  h.home = dir / "we$ird";
  h.state_dir.clear();
  auto r = compiler::resolve_for_host(policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                             "  write: [\"${WORKSPACE}\"]\n"
                                             "  protect: [\"${HOME}/.ssh\"]\n"
                                             "  deny: [\"~/.ssh/keys\"]\n"),
                                      Mode::WorkspaceWrite, h, diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  // With the caller's global git config files in the home, which lies in the workspace,
  // protected as every config file git reads (red team A25-4).
  BOOST_TEST_REQUIRE(r->protect.size() == 3u);
  BOOST_TEST(r->protect[0].path == dir / "we$ird/.gitconfig");
  BOOST_TEST(r->protect[1].path == dir / "we$ird/.ssh");
  BOOST_TEST(r->protect[2].path == dir / "we$ird/.config/git/config");
  BOOST_TEST_REQUIRE(r->deny.size() == 1u);
  BOOST_TEST(r->deny[0].path == dir / "we$ird/.ssh/keys");
}

// The lock and run records of `zpolicy run` are masked in every bound policy, whatever
// the policy says, and nowhere in portable output.
BOOST_AUTO_TEST_CASE(zpolicys_state_directory_is_a_deny_root) {
  HostTree t;
  auto h = t.bind(t.ws);
  h.state_dir = t.dir / "state/zpolicy";
  ir::Diagnostics diags;
  const auto p = policy("zpolicy: 1\nmode: workspace-write\n");
  for (auto mode : {Mode::WorkspaceWrite, Mode::ReadOnly}) {
    auto r = compiler::resolve_for_host(p, mode, h, diags);
    BOOST_TEST_REQUIRE(r.has_value(), diags.str());
    BOOST_TEST_REQUIRE(r->deny.size() == 1u);
    BOOST_TEST(r->deny[0].path == t.dir / "state/zpolicy");
    BOOST_TEST((r->deny[0].kind == ir::HostKind::Directory));  // created by run before bwrap
    BOOST_TEST(r->deny[0].loc.file == "<zpolicy state>");
  }
  BOOST_TEST(test::portable(p, Mode::WorkspaceWrite).deny.empty());
  ir::Diagnostics d2;
  BOOST_TEST(compiler::host_facts(t.ws, d2).value().state_dir == compiler::zpolicy_state_dir());
}

// Red-team E1: the runner binds exactly the objects resolution saw, so every bound path
// that exists carries its (st_dev, st_ino); a workspace that is no longer the object
// host_facts canonicalized (and the lints judged) is refused.
BOOST_AUTO_TEST_CASE(bound_paths_carry_the_identity_of_what_was_resolved) {
  HostTree t;
  const auto facts = t.bind(t.ws);
  ir::Diagnostics diags;
  auto r = compiler::resolve_for_host(policy(kHostPolicy), Mode::WorkspaceWrite, facts, diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  auto identity = [](const std::string& p) {
    struct stat st;
    BOOST_TEST_REQUIRE(lstat(p.c_str(), &st) == 0);
    return ir::HostIdentity{static_cast<std::uint64_t>(st.st_dev),
                            static_cast<std::uint64_t>(st.st_ino)};
  };
  for (const auto* list : {&r->read, &r->write, &r->pin, &r->protect})
    for (const auto& p : *list) {
      if (p.kind == ir::HostKind::Missing) {
        BOOST_TEST(!p.identity.has_value(), p.path);
        continue;
      }
      BOOST_TEST_REQUIRE(p.identity.has_value(), p.path);
      BOOST_TEST((*p.identity == identity(p.path)), p.path);
    }
  BOOST_TEST((facts.workspace_identity == std::optional(identity(t.ws))));

  // The same workspace path, but not the object the facts were taken from.
  auto swapped = facts;
  swapped.workspace_identity->ino += 1;
  const std::string err = t.resolve_errors(kHostPolicy, swapped);
  BOOST_TEST(err.find("p.yaml:4:11: error: the workspace '" + t.ws + "' changed while the policy was resolved") !=
                 std::string::npos,
             err);
}

// A v2 index holding the gitlinks `paths` (a SHA-1 repository), as read-cache.c writes
// them: the header, each entry padded to 8 bytes with NULs, a checksum.
std::string index_with_gitlinks(const std::vector<std::string>& paths) {
  std::string s =
      std::string("DIRC") + std::string("\0\0\0\2\0\0\0", 7) + static_cast<char>(paths.size());
  for (const auto& path : paths) {
    std::string entry(62, '\0');
    entry[24 + 2] = '\xe0';  // mode 0160000, big-endian
    entry[61] = static_cast<char>(path.size());
    entry += path;
    entry.append(8 - (entry.size() % 8), '\0');
    s += entry;
  }
  return s + std::string(20, '\0');
}

// Red team R17-6: each git target is protected unless a protected path already holds it,
// which was a scan of every protected path per target (quadratic in a sandbox's gitlinks);
// now a lookup per component. The same paths come out: one already protected (`p/.git`), one
// below a protected directory (`lib/x`) and one below a target protected earlier in the same
// index (`q/r` below `q`) add nothing; each of the others is protected once.
BOOST_AUTO_TEST_CASE(a_git_target_a_protected_path_already_holds_adds_nothing) {
  test::TempDir t;
  for (const std::string repo : {".git", "p/.git"}) {
    t.mkdir(repo + "/objects");
    t.mkdir(repo + "/refs");
    t.write(repo + "/HEAD", "ref: refs/heads/main\n");
  }
  t.write(".git/index", index_with_gitlinks({"lib/x", "m1", "p", "q", "q/r"}));
  t.write("p/.git/index", index_with_gitlinks({"s", "s/t"}));
  t.mkdir("lib");
  // Outside the workspace: the global git config files below it are read (red team R18-6),
  // and inside it they would be protected too.
  test::TempDir home;
  ir::Diagnostics diags;
  auto h = compiler::host_facts(t.str(), diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  h->home = home.str();
  h->state_dir.clear();
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n"
             "  protect: [.git, \"**/.git\", lib]\n"),
      Mode::WorkspaceWrite, *h, diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  std::vector<std::string> protect;
  for (const auto& p : r->protect)
    protect.push_back(p.path.substr(t.str().size()) + " " + ir::to_string(p.kind));
  BOOST_TEST(
      protect == (std::vector<std::string>{"/.git directory", "/lib directory", "/m1 missing",
                                           "/q missing", "/p/.git directory", "/p/s missing"}),
      boost::test_tools::per_element());
}

// Round 17, noticed, left: the bounds on what git config zpolicy reads were per git
// directory, and a sandbox makes as many nested repositories as it likes (200, each with a
// 0.7 MB config, held every later run 13.8 s). Over every git directory together, more than
// 4 096 files read (here: 17 repositories whose config includes one small file 250 times)
// or 16 MiB (17 configs of ~1 MB) refuses the run, once; one repository fewer resolves.
BOOST_AUTO_TEST_CASE(the_git_configs_of_every_repository_together_are_bounded) {
  const std::string includes = [] {
    std::string s;
    for (int i = 0; i < 250; ++i) s += "[include]\n\tpath = small\n";
    return s;
  }();
  const std::string comments = [] {
    std::string s;
    while (s.size() < 1000000) s += "# " + std::string(77, 'x') + "\n";
    return s;
  }();
  for (const std::string* config : {&includes, &comments})
    for (int repos : {16, 17}) {
      test::TempDir t;
      t.mkdir("home");
      for (int i = 0; i < repos; ++i) {
        const std::string g = "r" + std::to_string(i) + "/.git";
        t.mkdir(g + "/objects");
        t.mkdir(g + "/refs");
        t.write(g + "/HEAD", "ref: refs/heads/main\n");
        t.write(g + "/config", *config);
        t.write(g + "/small", "[core]\n\tbare = false\n");
      }
      ir::Diagnostics diags;
      auto h = compiler::host_facts(t.str(), diags);
      BOOST_TEST_REQUIRE(h.has_value(), diags.str());
      h->home = t / "home";
      h->state_dir.clear();
      auto r = compiler::resolve_for_host(
          policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n"
                 "  protect: [\"**/.git\"]\n"),
          Mode::WorkspaceWrite, *h, diags);
      const std::string what = (config == &includes ? "includes, " : "bytes, ") +
                               std::to_string(repos) + " repositories";
      if (repos == 16) {
        BOOST_TEST(r.has_value(), what << ": " << diags.str());
        continue;
      }
      BOOST_TEST(!r.has_value(), what);
      const std::string err = diags.str();
      BOOST_TEST(err.find("read in all") != std::string::npos, what << ": " << err);
      BOOST_TEST(err.find("read in all") == err.rfind("read in all"), what << ": refused twice");
    }
}

// Red team A11-4: the names a host mount made after resolution gives an existing deny root
// or protected path, that the plan's masks lack: a bind of a deny root's parent, of the
// workspace into itself (a protected path's parent); not a name the plan masks, one no
// root of the sandbox shows, a protected path's name outside every writable root, nor any
// mount that touches none of them (every run has a deny root: the state directory).
BOOST_AUTO_TEST_CASE(a_host_mount_since_resolution_is_refused_only_for_a_name_the_masks_lack) {
  auto at = [](const std::string& path) {
    ir::ResolvedPath p;
    p.path = path;
    p.kind = ir::HostKind::Directory;
    return p;
  };
  ir::Resolved r;
  r.read = {at("/")};
  r.write = {at("/w/ws")};
  r.deny = {at("/srv/src/secret"), at("/tmp/zpolicy-1")};
  r.protect = {at("/w/ws/.git")};
  const std::string root = "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n";
  const auto before = compiler::parse_mountinfo(root);
  auto lacked = [&](const ir::Resolved& plan, const std::string& added) {
    std::vector<std::string> out;
    for (const auto& n :
         compiler::names_the_masks_lack(plan, before, compiler::parse_mountinfo(root + added)))
      out.push_back(n.name + "=" + n.original + (n.deny ? " deny" : " protect"));
    return out;
  };
  using Names = std::vector<std::string>;
  BOOST_TEST(lacked(r, "").empty());
  BOOST_TEST(lacked(r, "40 22 254:0 /srv/src /srv/alias rw - ext4 /dev/vda rw\n") ==
                 (Names{"/srv/alias/secret=/srv/src/secret deny"}),
             boost::test_tools::per_element());
  BOOST_TEST(lacked(r, "40 22 254:0 /w/ws /w/ws/sub rw - ext4 /dev/vda rw\n") ==
                 (Names{"/w/ws/sub/.git=/w/ws/.git protect"}),
             boost::test_tools::per_element());
  BOOST_TEST(lacked(r, "40 22 254:0 /tmp /srv/scratch rw - ext4 /dev/vda rw\n") ==
                 (Names{"/srv/scratch/zpolicy-1=/tmp/zpolicy-1 deny"}),
             boost::test_tools::per_element());
  // Mounts that give none of them a name: a tmpfs, a bind of an unrelated directory.
  BOOST_TEST(lacked(r,
                    "40 22 0:50 / /mnt/data rw - tmpfs tmpfs rw\n"
                    "41 22 254:0 /usr /srv/usr ro - ext4 /dev/vda rw\n")
                 .empty());
  // Outside every writable root a protected path's other name is read-only anyway.
  BOOST_TEST(lacked(r, "40 22 254:0 /w/ws /srv/ws rw - ext4 /dev/vda rw\n").empty());
  ir::Resolved masked = r;
  masked.deny.push_back(at("/srv/alias/secret"));
  BOOST_TEST(lacked(masked, "40 22 254:0 /srv/src /srv/alias rw - ext4 /dev/vda rw\n").empty());
  ir::Resolved narrow = r;
  narrow.read = {at("/usr")};
  BOOST_TEST(lacked(narrow, "40 22 254:0 /srv/src /srv/alias rw - ext4 /dev/vda rw\n").empty());
  // A deny root missing at resolution has no name to lack (its way is watched, A10-3).
  ir::Resolved missing = r;
  missing.deny[0].kind = ir::HostKind::Missing;
  BOOST_TEST(lacked(missing, "40 22 254:0 /srv/src /srv/alias rw - ext4 /dev/vda rw\n").empty());
}

// Red team A13-2: the run reads the guard's mount table on every run and looks again only
// when its layout differs from resolution's. A copy of a namespace gives its mounts new
// ids and lists them tree first; that is the same layout. A rename above a mount point
// (which the kernel does not mark), a new mount, another access or another stacking is not.
BOOST_AUTO_TEST_CASE(a_copied_mount_table_has_the_same_layout_until_a_mount_moves) {
  const auto host = compiler::parse_mountinfo(
      "21 26 0:20 / /proc rw - proc proc rw\n"
      "26 1 254:0 / / rw - ext4 /dev/vda rw\n"
      "30 26 254:0 /home/u /srv/p/h rw - ext4 /dev/vda rw\n"
      "31 30 0:50 / /srv/p/h ro - tmpfs t rw\n");
  auto copy = [](const std::string& tail) {
    return compiler::parse_mountinfo(
        "69 68 254:0 / / rw - ext4 /dev/vda rw\n"
        "71 69 0:20 / /proc rw - proc proc rw\n" +
        tail);
  };
  const std::string bind = "72 69 254:0 /home/u /srv/p/h rw - ext4 /dev/vda rw\n",
                    tmpfs = "73 72 0:50 / /srv/p/h ro - tmpfs t rw\n";
  BOOST_TEST(compiler::same_layout(host, copy(bind + tmpfs)));
  // Moved by a rename of /srv/p.
  BOOST_TEST(!compiler::same_layout(
      host, copy("72 69 254:0 /home/u /w/ws/p/h rw - ext4 /dev/vda rw\n"
                 "73 72 0:50 / /w/ws/p/h ro - tmpfs t rw\n")));
  // Writable now.
  BOOST_TEST(!compiler::same_layout(host, copy(bind + "73 72 0:50 / /srv/p/h rw - tmpfs t rw\n")));
  // The same two mounts stacked the other way round: the bind shows, not the tmpfs.
  BOOST_TEST(!compiler::same_layout(
      host, copy("73 69 0:50 / /srv/p/h ro - tmpfs t rw\n"
                 "72 73 254:0 /home/u /srv/p/h rw - ext4 /dev/vda rw\n")));
  // One mount more.
  BOOST_TEST(!compiler::same_layout(
      host, copy(bind + tmpfs + "74 69 254:0 /home/u /w/ws/h rw - ext4 /dev/vda rw\n")));
}

// The mount points a writable bind of a root takes along: at or below it, each once,
// sorted; a mount elsewhere is not asked about.
BOOST_AUTO_TEST_CASE(mount_points_within_writable_roots) {
  const auto table = compiler::parse_mountinfo(
      "69 68 254:0 / / rw - ext4 /dev/vda rw\n"
      "72 69 254:0 /srv/shared /w/ws/t rw - ext4 /dev/vda rw\n"
      "70 69 0:50 / /w/ws/cache rw - tmpfs t rw\n"
      "71 72 0:51 / /w/ws/t rw - tmpfs t rw\n"
      "73 69 0:52 / /elsewhere rw - tmpfs t rw\n"
      "74 69 0:53 / /w/ws rw - tmpfs t rw\n"
      "75 69 0:54 / /w/wsx rw - tmpfs t rw\n");
  BOOST_TEST(compiler::mount_points_within({"/w/ws"}, table) ==
                 (std::vector<std::string>{"/w/ws", "/w/ws/cache", "/w/ws/t"}),
             boost::test_tools::per_element());
  BOOST_TEST(compiler::mount_points_within({"/nowhere"}, table).empty());
}

// What the sandbox got at each mount point in a writable root against what the lints
// judged (red team A13C-1, A13D-2): the same objects pass whatever the tables' names;
// another directory (a bind swapped under the same triple), another filesystem (a tmpfs
// with the first one's device number), other access, a mount more or one less refuse.
BOOST_AUTO_TEST_CASE(a_mount_object_differing_from_the_judged_one_is_named) {
  const compiler::MountObject cache{"/w/ws/cache", true, 50, 1, 0x01021994, 7, false};
  const compiler::MountObject t{"/w/ws/t", true, 2049, 1234, 0xef53, 9, false};
  const std::vector<compiler::MountObject> judged{cache, t};
  BOOST_TEST(!compiler::first_mount_changed(judged, judged));
  BOOST_TEST(!compiler::first_mount_changed({}, {}));
  auto with_t = [&](compiler::MountObject o) { return std::vector{cache, o}; };
  auto changed = [&](const std::vector<compiler::MountObject>& now) {
    return compiler::first_mount_changed(judged, now).value_or("");
  };
  auto other = t;
  other.ino = 99;
  BOOST_TEST(changed(with_t(other)) == "'/w/ws/t' (another directory shows there)");
  other = t;
  other.dev = 51;
  BOOST_TEST(changed(with_t(other)) == "'/w/ws/t' (another directory shows there)");
  other = t;
  other.fs_id = 10;
  BOOST_TEST(changed(with_t(other)) == "'/w/ws/t' (another filesystem shows there)");
  other = t;
  other.fs_type = 0x9fa0;
  BOOST_TEST(changed(with_t(other)) == "'/w/ws/t' (another filesystem shows there)");
  other = t;
  other.read_only = true;
  BOOST_TEST(changed(with_t(other)) == "'/w/ws/t' (mounted with other access)");
  BOOST_TEST(changed(with_t({"/w/ws/t"})) == "'/w/ws/t' (looked up in one namespace only)");
  // A point the table lists and neither side could look up (EACCES below an unsearchable
  // directory) is not known to be the same (red team A14B-8).
  BOOST_TEST(compiler::first_mount_changed({{"/w/ws/x"}}, {{"/w/ws/x"}}).value_or("") ==
             "'/w/ws/x' (could not be looked up)");
  BOOST_TEST(changed({cache}) == "'/w/ws/t' (no longer a mount point)");
  BOOST_TEST(changed({cache, {"/w/ws/k", true, 20, 1, 0x9fa0, 0, false}, t}) ==
             "'/w/ws/k' (mounted since the policy was resolved)");
  BOOST_TEST(changed({cache, t, {"/w/ws/u", true, 20, 1, 0x9fa0, 0, false}}) ==
             "'/w/ws/u' (mounted since the policy was resolved)");
}

// The fields after " - " (red team A14-2): type, source and superblock options, escaped as
// the kernel escapes them, after any number of optional fields; an empty source keeps its
// place. A line without them keeps its mount (with none): no mount drops out of a table.
BOOST_AUTO_TEST_CASE(mountinfo_gives_each_mount_its_type_source_and_superblock_options) {
  const auto t = compiler::parse_mountinfo(
      "36 35 98:0 /mnt1 /mnt/my\\040dir rw,noatime master:1 shared:7 - fuse.my\\040fs "
      "host:/a\\040b\\134c rw,user_id=0\n"
      "40 35 0:39 / /w/t rw - tmpfs  rw,mode=755\n"
      "41 35 0:40 / /w/u rw\n");
  BOOST_TEST_REQUIRE(t.size() == 3u);
  BOOST_TEST(t[0].point == "/mnt/my dir");
  BOOST_TEST(t[0].fs_type == "fuse.my fs");
  BOOST_TEST(t[0].source == "host:/a b\\c");
  BOOST_TEST(t[0].super_options == "rw,user_id=0");
  BOOST_TEST(t[1].fs_type == "tmpfs");
  BOOST_TEST(t[1].source == "");
  BOOST_TEST(t[1].super_options == "rw,mode=755");
  BOOST_TEST((t[2].point == "/w/u" && t[2].fs_type.empty() && t[2].source.empty()));
}

// An anonymous device number is given again as soon as it is free (red team A14-2): a
// tmpfs replaced by a procfs, a sysfs or a tmpfs of other options on the same 0:N is
// another mount for same_mount and same_layout.
BOOST_AUTO_TEST_CASE(a_reused_anonymous_device_is_another_mount) {
  const std::string root = "26 1 254:0 / / rw - ext4 /dev/vda rw\n";
  const auto before =
      compiler::parse_mountinfo(root + "30 26 0:39 / /w/ws/t rw - tmpfs none rw,mode=755\n");
  for (const std::string other :
       {"30 26 0:39 / /w/ws/t rw - proc proc rw\n", "30 26 0:39 / /w/ws/t rw - sysfs sysfs rw\n",
        "30 26 0:39 / /w/ws/t rw - tmpfs none rw,mode=1777\n",
        "30 26 0:39 / /w/ws/t rw - tmpfs other rw,mode=755\n"}) {
    const auto now = compiler::parse_mountinfo(root + other);
    BOOST_TEST(!compiler::same_layout(before, now), other);
    BOOST_TEST(!compiler::same_mount(before.back(), now.back()), other);
  }
  BOOST_TEST(compiler::same_layout(before, before));
  BOOST_TEST(compiler::same_mount(before.back(), before.back()));
}

// The sandbox's own table, the last word (red team A14-1): below a writable root only the
// verified argv's mounts (at its destinations; bwrap's own below --dev and --proc), and
// the mounts the judged table listed at that point as the same mount, no more writable.
BOOST_AUTO_TEST_CASE(the_sandbox_table_holds_below_a_writable_root_only_what_was_verified) {
  compiler::SandboxMountRules rules;
  rules.roots = {"/w/ws", "/w/other"};
  rules.destinations = {"/",        "/usr", "/w/ws", "/w/ws/.git", "/w/ws/data",
                        "/w/other", "/dev", "/proc", "/tmp"};
  rules.bwrap_trees = {"/dev", "/proc"};
  const auto judged = compiler::parse_mountinfo(
      "26 1 254:0 / / rw - ext4 /dev/vda rw\n"
      "30 26 0:39 / /w/ws/cache rw - tmpfs none rw,mode=755\n"
      "31 26 254:0 /srv/ref /w/ws/ref ro - ext4 /dev/vda rw\n"
      "32 26 254:0 /home/u /srv/h rw - ext4 /dev/vda rw\n");
  const std::string made =
      "100 99 0:60 / / rw - tmpfs tmpfs rw\n"
      "101 100 254:0 /usr /usr ro,nosuid - ext4 /dev/vda rw\n"
      "102 100 254:0 /w/ws /w/ws rw,nosuid - ext4 /dev/vda rw\n"
      "103 102 0:39 / /w/ws/cache rw,nosuid - tmpfs none rw,mode=755\n"
      "104 102 254:0 /srv/ref /w/ws/ref ro,nosuid - ext4 /dev/vda rw\n"
      "105 102 254:0 /w/ws/.git /w/ws/.git ro,nosuid - ext4 /dev/vda rw\n"
      "106 102 254:0 /w/ws/data /w/ws/data rw,nosuid - ext4 /dev/vda rw\n"
      "107 100 0:61 / /dev rw - tmpfs tmpfs rw\n"
      "108 107 0:5 /null /dev/null rw - devtmpfs udev rw\n"
      "109 100 0:62 / /proc rw - proc proc rw\n"
      "110 109 0:62 /sys /proc/sys ro - proc proc rw\n"
      "111 100 0:63 / /tmp rw - tmpfs tmpfs rw\n";
  auto unverified = [&](const std::string& more) {
    std::vector<std::string> points;
    for (const auto& m :
         compiler::unverified_mounts(rules, judged, compiler::parse_mountinfo(made + more)))
      points.push_back(m.point);
    return points;
  };
  using Points = std::vector<std::string>;
  BOOST_TEST(unverified("").empty());
  // The whole tree under a writable root: a covered copy of the bound mount, too.
  BOOST_TEST(unverified("120 100 0:39 / /w/ws/cache ro - tmpfs none rw,mode=755\n").empty());
  // A bind of the home moved into the workspace, into a pin, below the other root.
  BOOST_TEST(unverified("120 102 254:0 /home/u /w/ws/outside/h rw - ext4 /dev/vda rw\n"
                        "121 106 0:70 / /w/ws/data/x rw - tmpfs none rw,mode=1777\n"
                        "122 100 254:0 /home/u /w/other/h rw - ext4 /dev/vda rw\n") ==
                 (Points{"/w/ws/outside/h", "/w/ws/data/x", "/w/other/h"}),
             boost::test_tools::per_element());
  // The judged mount where the judged table did not list it (moved by a rename).
  BOOST_TEST(
      unverified("120 102 254:0 /home/u /w/ws/h rw - ext4 /dev/vda rw\n") == (Points{"/w/ws/h"}),
      boost::test_tools::per_element());
  // Another filesystem on the judged one's device, writable where it was read-only.
  BOOST_TEST(unverified("120 102 0:39 / /w/ws/cache rw - proc proc rw\n"
                        "121 102 254:0 /srv/ref /w/ws/ref rw - ext4 /dev/vda rw\n") ==
                 (Points{"/w/ws/cache", "/w/ws/ref"}),
             boost::test_tools::per_element());
  // Outside every writable root, the roots' own mounts, bwrap's below /dev and /proc: not
  // asked about; a host's procfs at a writable root's subdirectory named like bwrap's is.
  BOOST_TEST(unverified("120 100 254:0 /home/u /srv/h rw - ext4 /dev/vda rw\n"
                        "121 107 0:64 / /dev/pts rw - devpts devpts rw\n"
                        "122 102 0:62 / /w/ws/proc rw - proc proc rw\n") == (Points{"/w/ws/proc"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
