// Expansion of `protect`/`deny` patterns against a host tree: depths 1-4, `*` within a
// name, no descent into protected, denied or matched directories, symlinks never
// followed, odd file types never opened, limits that refuse instead of hanging, and
// portable output that keeps the pattern symbolic.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "compiler/resolve/resolve.hpp"
#include "compiler/resolve/tree_walker.hpp"
#include "support/parse.hpp"
#include "support/policy_dump.hpp"
#include "support/portable.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
using ir::Mode;

namespace {

ir::Policy policy(const std::string& text) {
  auto r = test::parse(text);
  BOOST_TEST_REQUIRE(r.errors == "");
  return *r.policy;
}

ir::PathPattern pattern(const std::string& text) {
  return *ir::parse_path_pattern(text, true, nullptr);
}

std::vector<std::string> walk(const test::TempDir& t, const std::vector<std::string>& patterns,
                              compiler::WalkOptions options = {}, std::string* error = nullptr) {
  std::vector<compiler::WalkPattern> ps;
  for (size_t i = 0; i < patterns.size(); ++i) ps.push_back({pattern(patterns[i]).components, i});
  auto r = compiler::walk_tree(t.str(), ps, options);
  if (error)
    *error = r.error.value_or("");
  else
    BOOST_TEST(!r.error.has_value(), r.error.value_or(""));
  std::vector<std::string> out;
  for (const auto& m : r.matches)
    out.push_back(m.path.substr(t.str().size() + 1) + (m.listed ? "" : " (spelled)"));
  std::sort(out.begin(), out.end());
  return out;
}

using Paths = std::vector<std::string>;

// A monorepo: the top repository, nested repositories at depths 1-4, a submodule (a
// `.git` file), repositories inside places the walk must not enter.
struct Monorepo {
  test::TempDir t;
  Monorepo() {
    t.mkdir(".git/hooks");
    t.mkdir(".git/modules/vendor/c/hooks");
    t.mkdir("lib/.git");
    t.mkdir("packages/a/.git/hooks");
    t.mkdir("packages/b/src");
    t.write("packages/b/.env", "B=1\n");
    t.write("packages/notadir", "x");
    t.write("vendor/c/.git", "gitdir: ../../.git/modules/vendor/c\n");
    t.mkdir("deep/x/y/z/.git");
    t.mkdir("node_modules/pkg/.git");               // inside a protected directory
    t.mkdir("packages/a/.git/modules/inner/.git");  // inside a matched directory
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(pattern_expansion)

BOOST_AUTO_TEST_CASE(any_depth_finds_every_repository_and_never_enters_one) {
  Monorepo m;
  BOOST_TEST(walk(m.t, {"**/.git"}) ==
                 (Paths{".git (spelled)", "deep/x/y/z/.git", "lib/.git", "node_modules/pkg/.git",
                        "packages/a/.git", "vendor/c/.git"}),
             boost::test_tools::per_element());
  compiler::WalkOptions prune;
  prune.may_enter = [&](const std::string& d) { return d != m.t / "node_modules"; };
  BOOST_TEST(walk(m.t, {"**/.git"}, prune) ==
                 (Paths{".git (spelled)", "deep/x/y/z/.git", "lib/.git", "packages/a/.git", "vendor/c/.git"}),
             boost::test_tools::per_element());
  BOOST_TEST(walk(m.t, {"deep/**/.git"}) == (Paths{"deep/.git (spelled)", "deep/x/y/z/.git"}),
             boost::test_tools::per_element());
  // `**` matches zero directories too.
  BOOST_TEST(walk(m.t, {"packages/**/.env"}) ==
                 (Paths{"packages/.env (spelled)", "packages/b/.env"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(star_matches_one_name_and_spells_out_literal_tails) {
  Monorepo m;
  // packages/b/.env exists; packages/a has none (still protected: it is spelled out,
  // like any missing protected path); packages/notadir is a file and holds nothing.
  BOOST_TEST(walk(m.t, {"packages/*/.env"}) ==
                 (Paths{"packages/a/.env (spelled)", "packages/b/.env (spelled)"}),
             boost::test_tools::per_element());
  BOOST_TEST(walk(m.t, {"packages/*"}) == (Paths{"packages/a", "packages/b", "packages/notadir"}),
             boost::test_tools::per_element());
  m.t.write("keys/a.pem", "");
  m.t.write("keys/a.pem.bak", "");
  m.t.write("keys/sub/b.pem", "");
  BOOST_TEST(walk(m.t, {"keys/*.pem"}) == Paths{"keys/a.pem"}, boost::test_tools::per_element());
  BOOST_TEST(walk(m.t, {"**/*.pem"}) == (Paths{"keys/a.pem", "keys/sub/b.pem"}),
             boost::test_tools::per_element());
  // A literal tail is spelled out in every directory the stars match (here `.git` in
  // packages/a, packages/b), existing or not.
  BOOST_TEST(walk(m.t, {"packages/*/.git"}) ==
                 (Paths{"packages/a/.git (spelled)", "packages/b/.git (spelled)"}),
             boost::test_tools::per_element());
  BOOST_TEST(walk(m.t, {"missing/*/.env"}).empty());
}

// Red team R9-G1: a bare repository (HEAD, objects/, refs/ and no `.git`) is a repository
// to host git, which obeys its config and hooks; `**/.git` names it whole. Without `refs/`
// (or with HEAD a directory) it is not one; `packages/*/.git` spells names and looks for none.
BOOST_AUTO_TEST_CASE(double_star_git_also_names_bare_repositories) {
  Monorepo m;
  m.t.write("fixtures/t.git/HEAD", "ref: refs/heads/main\n");
  m.t.mkdir("fixtures/t.git/objects/pack");
  m.t.mkdir("fixtures/t.git/refs/heads");
  m.t.mkdir("fixtures/t.git/hooks");
  m.t.write("fixtures/half/HEAD", "");
  m.t.mkdir("fixtures/half/objects");
  m.t.mkdir("fixtures/dir-head/HEAD");
  m.t.mkdir("fixtures/dir-head/objects");
  m.t.mkdir("fixtures/dir-head/refs");
  m.t.write("packages/b/HEAD", "");
  m.t.mkdir("packages/b/objects");
  m.t.mkdir("packages/b/refs");
  // What git's test also takes (red team R9c-G2): `objects` and `refs` through symlinks
  // or as files (access(2) with X_OK), a `commondir` file in their place.
  m.t.write("fixtures/linked/HEAD", "");
  m.t.mkdir("fixtures/store");
  m.t.symlink("../store", "fixtures/linked/objects");
  m.t.symlink("../store", "fixtures/linked/refs");
  m.t.write("fixtures/worktree/HEAD", "");
  m.t.write("fixtures/worktree/commondir", "../t.git\n");
  m.t.write("fixtures/files/HEAD", "");
  m.t.write("fixtures/files/objects", "");
  m.t.write("fixtures/files/refs", "");
  BOOST_TEST(walk(m.t, {"**/.git"}) ==
                 (Paths{".git (spelled)", "deep/x/y/z/.git", "fixtures/files", "fixtures/linked", "fixtures/t.git",
                        "fixtures/worktree", "lib/.git",
                        "node_modules/pkg/.git", "packages/a/.git", "packages/b", "vendor/c/.git"}),
             boost::test_tools::per_element());
  BOOST_TEST(walk(m.t, {"packages/*/.git"}) ==
                 (Paths{"packages/a/.git (spelled)", "packages/b/.git (spelled)"}),
             boost::test_tools::per_element());
}

// A case-insensitive directory finds `.GIT` for `.git`: host git would use it as the
// repository. This kernel has no CONFIG_UNICODE, so the casefold attribute is injected;
// the names are matched as a casefolding filesystem compares them (NFD + full case
// folding): `.GIT`, `.Git`, `node_moduleſ` (LONG S folds to s) and `Kube` with a KELVIN
// SIGN are the protected names there, `.gıt` (dotless i folds to itself) is not.
BOOST_AUTO_TEST_CASE(a_case_insensitive_directory_matches_names_as_it_looks_them_up) {
  test::TempDir t;
  t.mkdir("ci/.GIT/hooks");
  t.mkdir("ci/a/.Git");
  t.mkdir("ci/b/.g\xc4\xb1t");
  t.mkdir("ci/c/node_module\xc5\xbf");
  t.mkdir("ci/d/\xe2\x84\xaaube");
  t.write("ci/e/X.ENV", "");
  t.write("ci/e/Pr\xc3\xa4.ENV", "");
  t.write("ci/e/x.txt", "");
  // A bare repository as the folding directory finds its parts (red team R9c-C2).
  t.write("ci/f/head", "");
  t.mkdir("ci/f/object\xc5\xbf");
  t.mkdir("ci/f/REFS");
  t.mkdir("cs/.GIT");
  t.write("cs/X.ENV", "");
  compiler::WalkOptions folding;
  folding.folds_case = [&](int fd) {
    char path[64], target[4096];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(path, target, sizeof target);
    const std::string dir(target, n > 0 ? static_cast<size_t>(n) : 0);
    return dir == t / "ci" || dir.starts_with(t / "ci" + "/");
  };
  BOOST_TEST(walk(t, {"**/.git", "**/node_modules", "**/kube", "**/*.env"}, folding) ==
                 (Paths{".git (spelled)", "ci/.GIT", "ci/a/.Git", "ci/c/node_module\xc5\xbf",
                        "ci/d/\xe2\x84\xaaube", "ci/e/Pr\xc3\xa4.ENV", "ci/e/X.ENV", "ci/f",
                        "kube (spelled)", "node_modules (spelled)"}),
             boost::test_tools::per_element());
  // cs/ compares bytes: its `.GIT` and `X.ENV` are other names.
  BOOST_TEST(walk(t, {"**/.git", "**/*.env"}, folding) ==
                 (Paths{".git (spelled)", "ci/.GIT", "ci/a/.Git", "ci/e/Pr\xc3\xa4.ENV", "ci/e/X.ENV",
                        "ci/f"}),
             boost::test_tools::per_element());
  BOOST_TEST(walk(t, {"**/.git"}) == Paths{".git (spelled)"}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(symlinks_are_never_followed) {
  Monorepo m;
  test::TempDir outside;
  outside.mkdir("repo/.git");
  m.t.symlink(outside.str(), "linked-out");
  m.t.symlink("packages", "linked-in");
  m.t.symlink(outside / "repo/.git", "sub/.git");  // a match that is itself a link
  BOOST_TEST(walk(m.t, {"**/.git"}) ==
                 (Paths{".git (spelled)", "deep/x/y/z/.git", "lib/.git", "node_modules/pkg/.git",
                        "packages/a/.git", "sub/.git", "vendor/c/.git"}),
             boost::test_tools::per_element());
  // Nor through `*`: linked-in/a/.git is packages/a/.git, found where it lies.
  BOOST_TEST(walk(m.t, {"*/a/.git"}) == Paths{"packages/a/.git (spelled)"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(odd_file_types_are_matched_but_never_opened) {
  test::TempDir t;
  t.mkdir("a/b");
  BOOST_TEST_REQUIRE(mkfifo((t / "a/b/.git").c_str(), 0600) == 0);
  BOOST_TEST_REQUIRE(mkfifo((t / "a/fifo").c_str(), 0600) == 0);
  // Opening either FIFO would block this test forever (ctest's timeout would fail it).
  // At the start `**` matches no directory, so `.git` and `x` there are spelled out.
  BOOST_TEST(walk(t, {"**/.git", "**/x"}) == (Paths{".git (spelled)", "a/b/.git", "x (spelled)"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(limits_refuse_instead_of_hanging) {
  test::TempDir t;
  std::string deep = "d";
  for (int i = 0; i < 10; ++i) deep += "/d";
  t.mkdir(deep);
  for (int i = 0; i < 50; ++i) t.write("wide/f" + std::to_string(i), "");
  std::string error;
  compiler::WalkOptions o;
  o.limits.max_depth = 5;
  walk(t, {"**/.git"}, o, &error);
  BOOST_TEST(error.find("is more than 5 directories deep") != std::string::npos, error);
  o = {};
  o.limits.max_entries = 20;
  walk(t, {"**/.git"}, o, &error);
  BOOST_TEST(error ==
             "more than 20 entries below the pattern's start; narrow the pattern or "
             "move large trees out of the writable root");
  o = {};
  o.limits.max_matches = 10;
  walk(t, {"wide/*"}, o, &error);
  BOOST_TEST(error == "more than 10 paths match; narrow the pattern");
  o = {};
  BOOST_TEST(walk(t, {"**/.git"}, o, &error) == Paths{".git (spelled)"},
             boost::test_tools::per_element());
  BOOST_TEST(error == "");
}

// An open that fails for want of descriptors (EMFILE; ENOMEM and EIO alike) is an error
// naming the directory, not a directory with nothing in it: with none free the start,
// with one free the directory below it, matched nothing (review 23). Run in a child whose
// descriptors are used up.
BOOST_AUTO_TEST_CASE(a_failed_open_refuses_instead_of_matching_nothing) {
  test::TempDir t;
  t.write("a/x", "");
  std::vector<compiler::WalkPattern> ps{{pattern("*/x").components, 0}};
  for (const int free_fds : {0, 1}) {
    const pid_t pid = fork();
    BOOST_TEST_REQUIRE(pid >= 0);
    if (pid == 0) {
      const rlimit low{64, 64};
      if (setrlimit(RLIMIT_NOFILE, &low) != 0) _exit(3);
      std::vector<int> fds;
      for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fds.push_back(fd);
      if (errno != EMFILE || fds.size() < static_cast<size_t>(free_fds)) _exit(3);
      for (int i = 0; i < free_fds; ++i) close(fds[fds.size() - 1 - static_cast<size_t>(i)]);
      const auto r = compiler::walk_tree(t.str(), ps, {});
      const std::string want = "cannot open '" + (free_fds ? t.str() + "/a" : t.str()) +
                               "': " + std::strerror(EMFILE);
      _exit(r.error && r.error->rfind(want, 0) == 0 ? 0 : 1);
    }
    int status = 0;
    BOOST_TEST_REQUIRE(waitpid(pid, &status, 0) == pid);
    BOOST_TEST((WIFEXITED(status) && WEXITSTATUS(status) == 0), "free descriptors: " << free_fds);
  }
}

// A listing that fails after the directory was opened (getdents64 answering an error) is
// an error naming the directory, not the end of its entries. A process's directory in
// /proc answers ENOENT once the process is gone: it is opened live, and the child reaped
// between the open and the listing (in `folds_case`, which the walk asks in between).
BOOST_AUTO_TEST_CASE(a_failed_listing_refuses_instead_of_ending_the_directory) {
  const pid_t child = fork();
  BOOST_TEST_REQUIRE(child >= 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  const std::string start = "/proc/" + std::to_string(child);
  bool reaped = false;
  const auto reap = [&] {
    if (!std::exchange(reaped, true) && kill(child, SIGKILL) == 0) waitpid(child, nullptr, 0);
  };
  compiler::WalkOptions options;
  options.folds_case = [&](int) {
    reap();
    return false;
  };
  const auto r = compiler::walk_tree(start, {{pattern("**/.env").components, 0}}, options);
  reap();
  BOOST_TEST(r.error.value_or("") == "cannot list '" + start + "': " + std::strerror(ENOENT) +
                                         "; a pattern cannot be checked there");
}

BOOST_AUTO_TEST_CASE(portable_output_keeps_the_pattern) {
  auto r = test::portable(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
             "  write: [\"${WORKSPACE}\", \"${TMPDIR}\"]\n"
             "  protect: [\"**/.git\", \"${WORKSPACE}/packages/*/.env\", \"/elsewhere/*\"]\n"
             "  deny: [\"~/.config/*/token\"]\n"),
      Mode::WorkspaceWrite);
  const std::string expected =
      "mode workspace-write portable\n"
      "read / unknown @<builtin>\n"
      "write ${TMPDIR} unknown @p.yaml:4:27\n"
      "write ${WORKSPACE} unknown @p.yaml:4:11\n"
      "pin ${TMPDIR}/** unknown @p.yaml:5:13\n"
      "pin ${WORKSPACE}/** unknown @p.yaml:5:13\n"
      "pin ${WORKSPACE}/packages unknown @p.yaml:5:24\n"
      "pin ${WORKSPACE}/packages/* unknown @p.yaml:5:24\n"
      "protect ${TMPDIR}/**/.git unknown @p.yaml:5:13\n"
      "protect ${WORKSPACE}/**/.git unknown @p.yaml:5:13\n"
      "protect ${WORKSPACE}/packages/*/.env unknown @p.yaml:5:24\n"
      "deny ${HOME}/.config/*/token unknown @p.yaml:6:10\n"
      "network none\n"
      "private_tmp no\n"
      "cwd ${WORKSPACE}\n"
      "keep PATH\nkeep HOME\nkeep USER\nkeep LOGNAME\nkeep LANG\nkeep LC_*\nkeep TERM\n"
      "keep TZ\nkeep SHELL\n"
      "unavailable deny\n";
  BOOST_TEST(test::dump(r) == expected);
}

BOOST_AUTO_TEST_CASE(bound_default_policy_protects_every_repository_of_a_monorepo) {
  Monorepo m;
  m.t.mkdir("home");
  ir::Diagnostics diags;
  auto h = compiler::host_facts(m.t.str(), diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  h->home = m.t / "home";
  auto r = compiler::resolve_for_host(policy("zpolicy: 1\nmode: workspace-write\n"),
                                      Mode::WorkspaceWrite, *h, diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  std::vector<std::string> protect, pin, home;
  // The caller's global git config files, in the home kept in the workspace, are protected as
  // every config file git reads (red team A25-4: read whether or not a git directory is).
  for (const auto& p : r->protect)
    if (p.path.rfind(m.t / "home/", 0) == 0)
      home.push_back(p.path.substr(m.t.str().size()) + " " + ir::to_string(p.kind));
    else
      protect.push_back(p.path.substr(m.t.str().size()) + " " + ir::to_string(p.kind) + " @" +
                        p.loc.str());
  for (const auto& p : r->pin)
    if (p.path.rfind(m.t / "home", 0) != 0) pin.push_back(p.path.substr(m.t.str().size()));
  std::sort(home.begin(), home.end());
  BOOST_TEST(home == (Paths{"/home/.config/git/config missing", "/home/.gitconfig missing"}),
             boost::test_tools::per_element());
  // The top `.git` from the literal entry (line 1 col 1 of <builtin>), the nested ones
  // from `**/.git`; the top `.hg`, `.jj` and `.sl` whether they exist or not, as `**/.env`
  // would (docs/patterns.md); node_modules is protected whole and not entered; the submodule's
  // pointer file and the git directory it names are both protected. The top's `.git` holds
  // no HEAD, so git would take the top itself for a bare repository: its HEAD is protected
  // too (red team R18-2).
  BOOST_TEST(
      protect ==
          (Paths{"/.env missing @<builtin>", "/.env.local missing @<builtin>",
                 "/.git directory @<builtin>", "/.hg missing @<builtin>", "/.jj missing @<builtin>",
                 "/.next missing @<builtin>", "/.sl missing @<builtin>", "/HEAD missing @<builtin>",
                 "/node_modules directory @<builtin>", "/data/agent-sessions missing @<builtin>",
                 "/lib/.git directory @<builtin>", "/packages/a/.git directory @<builtin>",
                 "/vendor/c/.git file @<builtin>", "/.git/modules/vendor/c directory @<builtin>",
                 "/deep/x/y/z/.git directory @<builtin>"}),
      boost::test_tools::per_element());
  BOOST_TEST(pin == (Paths{"/.git", "/data", "/deep", "/lib", "/packages", "/vendor",
                           "/.git/modules", "/deep/x", "/packages/a", "/vendor/c",
                           "/.git/modules/vendor", "/deep/x/y", "/deep/x/y/z"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bound_star_pattern_protects_existing_and_missing_tails) {
  Monorepo m;
  ir::Diagnostics diags;
  auto h = compiler::host_facts(m.t.str(), diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [\"packages/*/.env\"]\n"
             "  deny: [\"${WORKSPACE}/**/hooks\"]\n"),
      Mode::WorkspaceWrite, *h, diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  std::vector<std::string> protect, deny;
  for (const auto& p : r->protect)
    protect.push_back(p.path.substr(m.t.str().size()) + " " + ir::to_string(p.kind));
  for (const auto& p : r->deny)  // zpolicy's own state directory is denied too, elsewhere
    if (p.path.starts_with(m.t.str())) deny.push_back(p.path.substr(m.t.str().size()));
  BOOST_TEST(protect == (Paths{"/packages/a/.env missing", "/packages/b/.env file"}),
             boost::test_tools::per_element());
  // A deny walk enters protected and git directories (they are still readable); `**`
  // matching no directory names ${WORKSPACE}/hooks itself, denied though missing.
  std::sort(deny.begin(), deny.end());
  BOOST_TEST(deny == (Paths{"/.git/hooks", "/.git/modules/vendor/c/hooks", "/hooks",
                            "/packages/a/.git/hooks"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(anchored_pattern_above_the_workspace_stays_inside_it) {
  Monorepo m;
  test::TempDir home;
  home.mkdir("other/.git");
  home.mkdir("ws/.git");
  home.mkdir("ws/a/.git");
  ir::Diagnostics diags;
  auto h = compiler::host_facts(home / "ws", diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  h->home = home.str();
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [\"${HOME}/**/.git\"]\n"),
      Mode::WorkspaceWrite, *h, diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  std::vector<std::string> protect;
  for (const auto& p : r->protect) protect.push_back(p.path.substr(home.str().size()));
  // `ws/.git` is an empty directory, no repository: the top's HEAD too (red team R18-2).
  BOOST_TEST(protect == (Paths{"/ws/.git", "/ws/HEAD", "/ws/a/.git"}),
             boost::test_tools::per_element());
}

// Red team R18-2: where a writable root's `.git` is no git directory, git's discovery takes
// the root itself for a bare repository once it holds a HEAD, `objects` and `refs`; its HEAD
// is protected then, whether it exists or not, and only then.
BOOST_AUTO_TEST_CASE(the_tops_head_is_protected_where_its_git_is_no_repository) {
  auto protected_at_top = [](test::TempDir& t) {
    ir::Diagnostics diags;
    auto h = compiler::host_facts(t.str(), diags);
    BOOST_TEST_REQUIRE(h.has_value(), diags.str());
    auto r = compiler::resolve_for_host(policy("zpolicy: 1\nmode: workspace-write\n"),
                                        Mode::WorkspaceWrite, *h, diags);
    BOOST_TEST_REQUIRE(r.has_value(), diags.str());
    std::vector<std::string> out;
    for (const auto& p : r->protect)
      if (p.path == t / "HEAD" || p.path == t / ".git")
        out.push_back(p.path.substr(t.str().size()) + " " + ir::to_string(p.kind));
    return out;
  };
  test::TempDir plain;
  BOOST_TEST(protected_at_top(plain) == (Paths{"/.git missing", "/HEAD missing"}),
             boost::test_tools::per_element());
  test::TempDir with_head;  // a project file named HEAD, no repository
  with_head.write("HEAD", "x\n");
  BOOST_TEST(protected_at_top(with_head) == (Paths{"/.git missing", "/HEAD file"}),
             boost::test_tools::per_element());
  test::TempDir repo;
  repo.write(".git/HEAD", "ref: refs/heads/main\n");
  repo.mkdir(".git/objects");
  repo.mkdir(".git/refs");
  BOOST_TEST(protected_at_top(repo) == (Paths{"/.git directory"}),
             boost::test_tools::per_element());
  test::TempDir fifo;  // git tests a `.git` that is no regular file as a directory
  BOOST_TEST_REQUIRE(mkfifo((fifo / ".git").c_str(), 0644) == 0);
  BOOST_TEST(protected_at_top(fifo) == (Paths{"/.git file", "/HEAD missing"}),
             boost::test_tools::per_element());
  test::TempDir linked;  // a HEAD that is a symlink refuses, as any protected path's
  linked.symlink("/etc/hostname", "HEAD");
  {
    ir::Diagnostics diags;
    auto h = compiler::host_facts(linked.str(), diags);
    BOOST_TEST_REQUIRE(h.has_value(), diags.str());
    BOOST_TEST(!compiler::resolve_for_host(policy("zpolicy: 1\nmode: workspace-write\n"),
                                           Mode::WorkspaceWrite, *h, diags));
    BOOST_TEST(diags.str().find("protected path '" + linked / "HEAD" +
                                "' crosses a symlink inside a writable root") != std::string::npos,
               diags.str());
  }
  test::TempDir worktree;
  worktree.write("gd/HEAD", "ref: refs/heads/main\n");
  worktree.mkdir("gd/objects");
  worktree.mkdir("gd/refs");
  worktree.write(".git", "gitdir: gd\n");
  BOOST_TEST(protected_at_top(worktree) == (Paths{"/.git file"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_matched_symlink_is_refused_like_any_protected_path) {
  test::TempDir t;
  test::TempDir outside;
  outside.mkdir("repo/.git");
  t.symlink(outside / "repo/.git", "sub/.git");
  ir::Diagnostics diags;
  auto h = compiler::host_facts(t.str(), diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [\"**/.git\"]\n"),
      Mode::WorkspaceWrite, *h, diags);
  BOOST_TEST(!r.has_value());
  BOOST_TEST(diags.str() == "p.yaml:4:13: error: protected path '" + (t / "sub/.git") +
                                "' crosses a symlink inside a writable root ('" + (t / "sub/.git") +
                                "'); refusing to run\n");
}

BOOST_AUTO_TEST_CASE(a_walk_limit_is_a_located_refusal) {
  test::TempDir t;
  std::string deep = "d";
  for (int i = 0; i < 130; ++i) deep += "/d";
  t.mkdir(deep);
  ir::Diagnostics diags;
  auto h = compiler::host_facts(t.str(), diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [\"**/.git\"]\n"),
      Mode::WorkspaceWrite, *h, diags);
  BOOST_TEST(!r.has_value());
  BOOST_TEST(
      diags.str().starts_with("p.yaml:4:13: error: pattern '**/.git' below '" + t.str() + "': '"),
      diags.str());
  BOOST_TEST(diags.str().ends_with("' is more than 128 directories deep; refusing to run\n"),
             diags.str());
}

BOOST_AUTO_TEST_CASE(a_match_with_a_line_break_in_its_path_is_refused) {
  test::TempDir t;
  t.mkdir("a\n--bind\n/\n/x/.git");
  ir::Diagnostics diags;
  auto h = compiler::host_facts(t.str(), diags);
  BOOST_TEST_REQUIRE(h.has_value(), diags.str());
  auto r = compiler::resolve_for_host(
      policy("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  protect: [\"**/.git\"]\n"),
      Mode::WorkspaceWrite, *h, diags);
  BOOST_TEST(!r.has_value());
  BOOST_TEST(diags.str() ==
             "p.yaml:4:13: error: pattern '**/.git' matches a path with a line "
             "break in a name below '" +
                 t.str() + "'; rename it; refusing to run\n");
}

// `explain` answers for the expansion with --workspace, and says that it cannot without.
BOOST_AUTO_TEST_CASE(explain_a_path_a_pattern_matches) {
  Monorepo m;
  test::TempDir scratch;
  const std::string policy = scratch.write("p.yaml", "zpolicy: 1\nmode: workspace-write\n");
  auto bound =
      test::run_process({ZPOLICY_BINARY, "explain", "--policy", policy,
                         m.t / "packages/a/.git/hooks/x", "--op", "write", "--workspace", m.t.str()},
                        scratch.str());
  BOOST_TEST(bound.exit_code == 0, bound.err);
  BOOST_TEST(bound.out.find("    policy:   no access to the host object — under protected path " +
                            (m.t / "packages/a/.git")) != std::string::npos,
             bound.out);
  BOOST_TEST(bound.out.find("note: patterns") == std::string::npos, bound.out);
  auto portable = test::run_process(
      {ZPOLICY_BINARY, "explain", "--policy", policy, "--portable",
       "${WORKSPACE}/packages/a/.git/hooks/x", "--op", "write"},
      scratch.str());
  BOOST_TEST(portable.exit_code == 0, portable.err);
  BOOST_TEST(portable.out.find("  note: patterns (e.g. '**/.git') are expanded only against a "
                               "host; bind to a workspace for what they match there\n") !=
                 std::string::npos,
             portable.out);
}

// A host link the walk would follow that leads nowhere yet, where the caller says the
// sandbox could make what it leads to (created_in_writable_root, injected here): a protect
// walk takes it for an empty directory and spells there only the names a pattern spells
// whether they exist or not; a deny walk refuses; one that leads elsewhere is nothing, as
// before (docs/patterns.md "A dangling host link").
// Where a host link leads by realpath(3): the walker's own cases hold no writable root on
// a link's way, which is what the resolver's follow_link judges beyond this.
std::optional<compiler::FollowedLink> follow_by_realpath(const std::string& link, std::string&) {
  char* real = realpath(link.c_str(), nullptr);
  compiler::FollowedLink to = real ? compiler::FollowedLink{real, true} : compiler::FollowedLink{};
  free(real);
  return to;
}

// Red team A24-1/2: a followed host link's target is walked with the states that link
// brings, once per state, not once per target (`srv/p/q` brings `secret`, `srv/r` brings
// `*/secret`, both into `data/d`); under a `**` alone a link into the start is followed
// where a component comes before the `**` (`*x/**/secret`: `other` is no `*x`, so its own
// name never carries the `**`), and still left to its own name under a first `**`.
BOOST_AUTO_TEST_CASE(a_host_links_target_is_walked_with_the_states_of_each_link) {
  test::TempDir t;
  for (const char* d : {"srv/p", "data/d/X", "srv2/ax", "srv2/other"}) t.mkdir(d);
  t.write("data/d/secret", "1");
  t.write("data/d/X/secret", "2");
  t.write("srv2/other/secret", "3");
  t.symlink(t / "data/d", "srv/p/q");
  t.symlink(t / "data/d", "srv/r");
  t.symlink(t / "srv2/other", "srv2/ax/l");
  compiler::WalkOptions options;
  options.follow_link = follow_by_realpath;
  auto matched = [&](const std::string& start, const std::string& p) {
    const auto r = compiler::walk_tree(t / start, {{pattern(p).components, 0}}, options);
    BOOST_TEST(!r.error.has_value(), r.error.value_or(""));
    Paths out;
    for (const auto& m : r.matches) out.push_back(m.path.substr(t.str().size() + 1));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  BOOST_TEST(matched("srv", "*/*/secret") == (Paths{"data/d/X/secret", "data/d/secret"}),
             boost::test_tools::per_element());
  BOOST_TEST(matched("srv2", "*x/**/secret") == (Paths{"srv2/ax/secret", "srv2/other/secret"}),
             boost::test_tools::per_element());
  BOOST_TEST(matched("srv2", "**/ax/**/secret") == (Paths{"srv2/ax/secret", "srv2/other/secret"}),
             boost::test_tools::per_element());
  BOOST_TEST(matched("srv2", "**/secret") == (Paths{"srv2/other/secret", "srv2/secret"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_dangling_host_link_the_sandbox_could_fill_is_spelled_or_refused) {
  test::TempDir t;
  t.symlink(t / "ws/new", "x");
  t.symlink(t / "nowhere", "away");
  t.mkdir("ws");
  std::vector<std::string> asked;
  compiler::WalkOptions options;
  options.follow_link = follow_by_realpath;
  options.created_in_writable_root = [&](const std::string& path,
                                         size_t) -> std::optional<std::string> {
    asked.push_back(path.substr(t.str().size()));
    if (path == t / "x" || path.starts_with(t / "x/")) return t / "ws/new";
    return std::nullopt;
  };
  BOOST_TEST(walk(t, {"*/secret"}, options) == (Paths{"ws/secret (spelled)", "x/secret (spelled)"}),
             boost::test_tools::per_element());
  std::sort(asked.begin(), asked.end());
  BOOST_TEST(asked == (Paths{"/away", "/x"}), boost::test_tools::per_element());
  // Below a `**` only existing names count, and nothing exists there yet; a `**`'s
  // zero-depth name is spelled (the top's `.env`), a deeper name or a `*` never.
  BOOST_TEST(walk(t, {"**/.env", "*/*/.env", "*/sub/.env"}, options) == Paths{".env (spelled)"},
             boost::test_tools::per_element());
  BOOST_TEST(walk(t, {"*/**/.env"}, options) == (Paths{"ws/.env (spelled)", "x/.env (spelled)"}),
             boost::test_tools::per_element());
  // The start itself (ELOOP: it is the link) or below it (ENOENT).
  for (const std::string start : {"x", "x/sub"}) {
    auto r = compiler::walk_tree(t / start, {{pattern(".env").components, 0}}, options);
    BOOST_TEST_REQUIRE(r.matches.size() == 1u, start);
    BOOST_TEST(r.matches[0].path == t / start + "/.env");
    BOOST_TEST(r.matches[0].dangling);
    BOOST_TEST(!r.matches[0].listed);
  }
  // Kept wherever it lies by name: the caller judged where it leads.
  options.keep = [](const std::string&) { return false; };
  BOOST_TEST(walk(t, {"x/*.env", "*/.env"}, options) == Paths{"x/.env (spelled)"},
             boost::test_tools::per_element());
  options.keep = nullptr;
  options.refuse_dangling = true;
  for (const std::string p : {"*/secret", "**/secret", "*/*/secret", "*/**/secret"}) {
    std::string error;
    walk(t, {p}, options, &error);
    BOOST_TEST(error.find("'" + t / "x" + "' leads through a dangling symlink to '" + t / "ws/new" +
                          "', which the sandbox can create") != std::string::npos,
               p << ": " << error);
  }
  // Only where the pattern goes on below the link; one that leads elsewhere is nothing.
  BOOST_TEST(walk(t, {"away/*/secret", "ws/*"}, options).empty());
}

namespace {

// A host directory beside a workspace: the policy names paths in it through the host's own
// links, dangling into the workspace or not.
struct HostLinks {
  test::TempDir t;
  std::string ws = t / "ws", srv = t / "srv", home = t / "home";
  HostLinks() {
    t.mkdir("ws/sub");
    t.mkdir("srv/real");
    t.mkdir("home");
  }
  compiler::HostFacts facts() const {
    ir::Diagnostics diags;
    auto h = compiler::host_facts(ws, diags);
    BOOST_TEST_REQUIRE(h.has_value(), diags.str());
    h->home = home;
    h->state_dir.clear();
    return *h;
  }
  std::string policy_text(const std::string& rules) const {
    return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n" + rules;
  }
  // The diagnostics; `paths` gets the protect (or deny) paths below t, when it resolves.
  std::string resolve(const std::string& rules, std::vector<std::string>* paths = nullptr,
                      bool deny = false) const {
    ir::Diagnostics diags;
    auto r = compiler::resolve_for_host(policy(policy_text(rules)), Mode::WorkspaceWrite, facts(),
                                        diags);
    if (r && paths)
      for (const auto& p : deny ? r->deny : r->protect)
        if (p.path.starts_with(t.str()))
          paths->push_back(p.path.substr(t.str().size()) + " " + ir::to_string(p.kind));
    if (paths) std::sort(paths->begin(), paths->end());
    return r ? std::string() : diags.str() + "(refused)";
  }
};

}  // namespace

// Red team A22C notes: a deny pattern whose walk met a host link dangling into the
// workspace matched nothing ("dangling: nothing there to deny"), and the command made the
// name the host then read as denied. Refused now, as a literal deny root spelled through
// the link is (A22C-2): at any depth of the pattern, through a chain of links, and for a
// literal prefix spelled through one; a link dangling elsewhere and an existing one are not.
BOOST_AUTO_TEST_CASE(a_deny_pattern_through_a_dangling_host_link_into_a_writable_root_is_refused) {
  HostLinks h;
  h.t.symlink(h.ws + "/new", "srv/x");
  h.t.symlink(h.t / "nowhere", "srv/away");
  h.t.symlink(h.srv + "/real", "srv/e");
  for (const std::string p :
       {"srv/*/secret", "srv/**/secret", "srv/*/*/secret", "srv/x/*/secret", "srv/x/**/secret"}) {
    const std::string errors = h.resolve("  deny: [\"" + h.t / p + "\"]\n");
    BOOST_TEST(errors.find("p.yaml:5:") != std::string::npos, p << ": " << errors);
    BOOST_TEST(
        errors.find("leads through a dangling symlink to '" + h.ws + "/new'") != std::string::npos,
        p << ": " << errors);
  }
  HostLinks chain;  // c1 -> c2 -> WS/chained, walked by `*` and as the literal prefix
  chain.t.symlink(chain.srv + "/c2", "srv/c1");
  chain.t.symlink(chain.ws + "/chained", "srv/c2");
  for (const std::string p : {"srv/*/secret", "srv/c1/**/secret"}) {
    const std::string errors = chain.resolve("  deny: [\"" + chain.t / p + "\"]\n");
    BOOST_TEST(errors.find("' leads through a dangling symlink to '" + chain.ws + "/chained'") !=
                   std::string::npos,
               p << ": " << errors);
  }
  // A dangling link that leads elsewhere is nothing; an existing one is followed (H17-6).
  std::vector<std::string> denied;
  BOOST_TEST(h.resolve("  deny: [\"" + h.srv + "/away/*/secret\", \"" + h.srv + "/e/secret\", \"" +
                           h.srv + "/r*/key\"]\n",
                       &denied, true) == "");
  BOOST_TEST(denied == (Paths{"/srv/real/key missing", "/srv/real/secret missing"}),
             boost::test_tools::per_element());
}

// The same class for protect patterns above a writable root: `${HOME}/*/.env` with the
// host's `~/x -> WS/new` (dangling) or `~/y -> WS/sub` named nothing in the workspace, and
// the command wrote what the host reads as `~/x/.env` and `~/y/.env`. Now a host link is
// followed, and one dangling into a writable root is taken for the directory the sandbox
// could make: the names the pattern spells there are protected where the kernel would
// create them, as a literal protected path through the link is (A22-1).
BOOST_AUTO_TEST_CASE(a_protect_pattern_through_a_host_link_into_a_writable_root_protects_it) {
  HostLinks h;
  h.t.symlink(h.ws + "/new", "home/x");
  h.t.symlink(h.ws + "/sub", "home/y");
  h.t.symlink(h.home + "/c2", "home/c1");  // a chain: c1 -> c2 -> WS/chained
  h.t.symlink(h.ws + "/chained", "home/c2");
  h.t.symlink(h.t / "nowhere", "home/away");
  h.t.symlink(h.ws + "/new.pem", "home/k.pem");
  std::vector<std::string> star, start, pem, deep;
  BOOST_TEST(h.resolve("  protect: [\"${HOME}/*/.env\"]\n", &star) == "");
  // `*` takes `k.pem` too: the host reads `~/k.pem/.env` at `WS/new.pem/.env`.
  star.erase(std::unique(star.begin(), star.end()), star.end());
  BOOST_TEST(star == (Paths{"/ws/chained/.env missing", "/ws/new.pem/.env missing",
                            "/ws/new/.env missing", "/ws/sub/.env missing"}),
             boost::test_tools::per_element());
  BOOST_TEST(h.resolve("  protect: [\"${HOME}/x/**/.env\"]\n", &start) == "");
  BOOST_TEST(start == Paths{"/ws/new/.env missing"}, boost::test_tools::per_element());
  BOOST_TEST(h.resolve("  protect: [\"${HOME}/*.pem\"]\n", &pem) == "");
  BOOST_TEST(pem == Paths{"/ws/new.pem missing"}, boost::test_tools::per_element());
  // Deeper than the last name: nothing exists there yet, as for a directory the sandbox
  // makes in the workspace (docs/patterns.md, "Limits").
  BOOST_TEST(h.resolve("  protect: [\"${HOME}/*/*/.env\", \"${HOME}/**/.git\"]\n", &deep) == "");
  BOOST_TEST(deep.empty(), deep.size());
}

// Red team A24-5: a host link the kernel can never follow (a loop, or a chain of more than
// 40 links) that a pattern's walk met was taken for a dangling one, and asking where the
// kernel would create what it names refused every run ("crosses more than 40 symlinks").
// Where nothing the sandbox can do changes that lookup (every name on its way lies outside
// the writable roots and the sandbox's own trees), it names nothing, whether the walk goes
// on below it or matches it; what a shorter part of a chain leads to is denied as ever. A
// loop that passes a directory of the workspace (`sub/../..`: the sandbox can make `sub` a
// link elsewhere, and the loop's name a directory there) or a link there still refuses.
BOOST_AUTO_TEST_CASE(a_host_loop_a_pattern_meets_names_nothing_unless_the_sandbox_can_end_it) {
  HostLinks h;
  h.t.symlink("loop", "srv/loop");
  h.t.symlink("real", "srv/c41");  // c0 -> c1 -> ... -> c41 -> real: 42 links from c0
  for (int i = 0; i < 41; ++i)
    h.t.symlink("c" + std::to_string(i + 1), "srv/c" + std::to_string(i));
  h.t.symlink("loop", "home/loop");
  std::vector<std::string> denied, matched, protected_paths;
  BOOST_TEST(h.resolve("  deny: [\"" + h.srv + "/*/secret\"]\n", &denied, true) == "");
  denied.erase(std::unique(denied.begin(), denied.end()), denied.end());
  BOOST_TEST(denied == Paths{"/srv/real/secret missing"}, boost::test_tools::per_element());
  BOOST_TEST(h.resolve("  deny: [\"" + h.srv + "/l*\"]\n", &matched, true) == "");
  BOOST_TEST(matched.empty(), matched.size());
  BOOST_TEST(h.resolve("  protect: [\"${HOME}/*/.env\", \"${HOME}/l*\"]\n", &protected_paths) ==
             "");
  BOOST_TEST(protected_paths.empty(), protected_paths.size());
  // A literal path through the loop still refuses: the user named it.
  BOOST_TEST(h.resolve("  deny: [\"" + h.srv + "/loop/secret\"]\n").find("crosses more than 40") !=
             std::string::npos);

  HostLinks through_link;  // srv/wl -> WS/wl -> srv/wl
  through_link.t.symlink(through_link.ws + "/wl", "srv/wl");
  through_link.t.symlink(through_link.srv + "/wl", "ws/wl");
  const std::string by_link =
      through_link.resolve("  deny: [\"" + through_link.srv + "/*/secret\"]\n");
  BOOST_TEST(by_link.find("leads through the symlink '" + through_link.ws +
                          "/wl' inside a writable root") != std::string::npos,
             by_link);
  HostLinks through_dir;  // srv/d -> ../ws/sub/../../srv/d
  through_dir.t.symlink("../ws/sub/../../srv/d", "srv/d");
  const std::string by_dir =
      through_dir.resolve("  deny: [\"" + through_dir.srv + "/*/secret\"]\n");
  BOOST_TEST(by_dir.find("crosses more than 40 symlinks") != std::string::npos, by_dir);
  BOOST_TEST(by_dir.find("(refused)") != std::string::npos, by_dir);
  // Through a procfs: `/proc/self` is the looking process's, so another one (the host's next
  // command) may meet other links there.
  HostLinks through_proc;  // srv/p -> /proc/self/root/…/srv/p
  through_proc.t.symlink("/proc/self/root" + through_proc.srv + "/p", "srv/p");
  const std::string by_proc =
      through_proc.resolve("  deny: [\"" + through_proc.srv + "/*/secret\"]\n");
  BOOST_TEST(by_proc.find("crosses more than 40 symlinks") != std::string::npos, by_proc);
}

// Red team attack 23b: a host link to something that is there but no directory (A23B-1) is
// judged as a dangling one; where the caller says a link must not be followed the walk
// refuses (A23B-2); a directory outside the roots is passed through for bounded patterns
// only (A23B-3).
BOOST_AUTO_TEST_CASE(host_links_to_a_file_through_a_root_link_and_below_an_outside_directory) {
  test::TempDir t;
  t.write("ws/file", "plain\n");
  t.symlink(t / "ws/file", "x");
  compiler::WalkOptions options;
  options.follow_link = follow_by_realpath;
  options.created_in_writable_root = [&](const std::string& path,
                                         size_t) -> std::optional<std::string> {
    if (path == t / "x") return t / "ws/file";
    return std::nullopt;
  };
  BOOST_TEST(walk(t, {"x*/.env"}, options) == Paths{"x/.env (spelled)"},
             boost::test_tools::per_element());
  options.refuse_dangling = true;
  std::string error;
  walk(t, {"*/secret"}, options, &error);
  BOOST_TEST(error.find("'" + t / "x" + "' leads through a symlink to '" + t / "ws/file" +
                        "', which is no directory") != std::string::npos,
             error);
  // A start spelled through the link is judged at that spelling.
  options.start_spelled = t / "x";
  auto r = compiler::walk_tree(t / "ws/file", {{pattern("*/secret").components, 0}}, options);
  BOOST_TEST(
      r.error.value_or("").find("'" + t / "x" + "' leads through a symlink") != std::string::npos,
      r.error.value_or(""));
  options.start_spelled.clear();
  options.refuse_dangling = false;
  options.follow_link = [](const std::string&,
                           std::string& refusal) -> std::optional<compiler::FollowedLink> {
    refusal = "not followed";
    return std::nullopt;
  };
  walk(t, {"x*/.env"}, options, &error);
  BOOST_TEST(error == "not followed");
  // Through a directory `may_enter` refuses, only where the rest is bounded.
  t.mkdir("a");
  t.mkdir("root/sub");
  t.symlink(t / "root/sub", "a/y");
  compiler::WalkOptions outside;
  outside.follow_link = follow_by_realpath;
  outside.may_enter = [&](const std::string& dir) { return dir.starts_with(t / "root"); };
  BOOST_TEST(walk(t, {"a/*/.env"}, outside).empty());
  outside.may_pass = [](const std::string&) { return true; };
  BOOST_TEST(walk(t, {"a/*/.env"}, outside) == Paths{"root/sub/.env (spelled)"},
             boost::test_tools::per_element());
  BOOST_TEST(walk(t, {"a/**/.env"}, outside).empty());
}

BOOST_AUTO_TEST_SUITE_END()
