#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Invariant 2 at any depth (issue 14 §5): the default policy protects every repository
// that exists in the workspace when the run starts (nested repositories at depths 2-4, a
// submodule's `.git` file and the git directory it names), and a `protect` pattern
// (`packages/*/.env`) holds for the paths it names, existing or not. Checked from the
// host, as root and as nobody, with positive controls (git status/diff, ordinary writes).
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// A monorepo: the top repository, a nested repository at depth 2 (packages/a), one at
// depth 3 (vendor/c, the issue's `vendor/c/.git/config`), one at depth 4 below names a
// glob would misread, and a submodule whose `.git` is a file naming a git directory
// inside the top repository's.
struct Monorepo {
  explicit Monorepo(Caller caller) : box(caller) {
    box.write_file(box.ws("README"), "top\n");
    box.write_file(box.ws("packages/a/index.js"), "module.exports = 1;\n");
    box.write_file(box.ws("vendor/c/lib.c"), "int c;\n");
    box.make_dir(box.ws("odd/[x]*/deep"));
    for (const std::string repo : {"", "packages/a", "vendor/c", "odd/[x]*/deep"})
      git({"init", "-q", box.ws(repo)});
    box.make_dir(box.ws(".git/modules/libs"));
    git({"init", "-q", "--separate-git-dir=" + box.ws(".git/modules/libs/sub"),
         box.ws("libs/sub")});
    box.write_file(box.ws("packages/a/.git/hooks/pre-commit.sample"), "#!/bin/sh\n", 0755);
    // A nested `.git` file naming a git directory elsewhere in the workspace, outside
    // every `.git`: only the pointer makes it protected.
    box.write_file(box.ws("tools/t/.git"), "gitdir: ../../store/t.git\n");
    box.write_file(box.ws("store/t.git/config"), "[core]\n");
    box.write_file(box.ws("store/t.git/HEAD"), "ref: refs/heads/main\n");
    git({"-C", box.workspace(), "add", "README"});
    for (const auto& repo : repos()) before.push_back(snapshot(box.ws(repo)));
  }

  static std::vector<std::string> repos() {
    return {".git",          "packages/a/.git", "vendor/c/.git", "odd/[x]*/deep/.git",
            "libs/sub/.git", "tools/t/.git",    "store/t.git"};
  }

  void git(std::vector<std::string> args) const {
    args.insert(args.begin(), kGit);
    box.host_command(args);
  }

  void check_unchanged() const {
    size_t i = 0;
    for (const auto& repo : repos())
      BOOST_TEST(snapshot(box.ws(repo)) == before[i++], repo << " changed on the host");
    BOOST_TEST(!exists(box.ws("packages/a/.git/hooks/pre-commit")));
  }

  Sandbox box;
  std::vector<std::string> before;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_protected_patterns)

BOOST_DATA_TEST_CASE(nested_repositories_and_submodules_are_protected, bdata::make(kCallers),
                     caller) {
  Monorepo m(caller);
  auto r = m.box.sh(
      "printf '#!/bin/sh\\necho planted\\n' > packages/a/.git/hooks/pre-commit\n"
      "chmod +x packages/a/.git/hooks/pre-commit; cp /bin/true "
      "packages/a/.git/hooks/post-checkout\n"
      "echo '[core] fsmonitor = evil' >> vendor/c/.git/config; rm -rf vendor/c/.git/hooks\n"
      "touch 'odd/[x]*/deep/.git/config'; rm -rf 'odd/[x]*/deep/.git/hooks'\n"
      "echo 'gitdir: /tmp' > libs/sub/.git; rm -f libs/sub/.git\n"
      "echo evil >> .git/modules/libs/sub/config; chmod -R 777 packages/a/.git\n"
      "echo evil >> store/t.git/config; rm -f store/t.git/HEAD; mv store s2; echo x > "
      "tools/t/.git\n"
      "mv packages/a packages/a2; mv packages p2; mv vendor/c/.git vendor/c/g2; mv vendor v2\n"
      "mkdir -p packages/a/.git/hooks; echo evil > packages/a/.git/hooks/pre-push\n"
      "ln -s ../../.git/hooks packages/a/h; echo evil > packages/a/h/pre-commit\n"
      "echo control > packages/a/control.txt");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  m.check_unchanged();
  for (const char* moved : {"packages/a2", "p2", "vendor/c/g2", "v2", "s2"})
    BOOST_TEST(!exists(m.box.ws(moved)), moved << " exists on the host");
  BOOST_TEST(read_file(m.box.ws("packages/a/control.txt")).value_or("<missing>") == "control\n");
}

BOOST_DATA_TEST_CASE(git_and_ordinary_writes_still_work, bdata::make(kCallers), caller) {
  Monorepo m(caller);
  m.box.write_file(m.box.ws("README"), "top, edited\n");
  auto r = m.box.sh(
      "git status --porcelain >/dev/null && echo top-status-ok\n"
      "git diff --stat | grep -q README && echo top-diff-ok\n"
      "git -C vendor/c status --porcelain >/dev/null && echo nested-status-ok\n"
      "echo 'new' > packages/a/new.js && mkdir -p vendor/c/src && echo x > vendor/c/src/x.c &&"
      " echo writes-ok\n"
      "git commit -qm x >/dev/null 2>&1 || echo commit-refused");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  for (const char* ok :
       {"top-status-ok", "top-diff-ok", "nested-status-ok", "writes-ok", "commit-refused"})
    BOOST_TEST(r.out.find(ok) != std::string::npos, ok << "\n" << r.describe());
  BOOST_TEST(read_file(m.box.ws("packages/a/new.js")).value_or("<missing>") == "new\n");
  BOOST_TEST(read_file(m.box.ws("vendor/c/src/x.c")).value_or("<missing>") == "x\n");
  m.check_unchanged();
}

BOOST_DATA_TEST_CASE(a_star_pattern_protects_existing_and_missing_paths, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.write_file(box.ws("packages/a/.env"), "A=1\n");
  box.write_file(box.ws("packages/b/index.js"), "b\n");
  box.write_file(box.ws("packages/c/.env.example"), "C=\n");
  const std::string policy = box.write_policy("star.yaml",
                                              "zpolicy: 1\n"
                                              "mode: workspace-write\n"
                                              "filesystem:\n"
                                              "  protect: [.git, \"packages/*/.env\"]\n");
  auto r = box.sh(
      "echo EVIL=1 > packages/a/.env; echo EVIL=1 >> packages/a/.env; rm -f packages/a/.env\n"
      "echo EVIL=1 > packages/b/.env; mv packages/b packages/b2; rm -rf packages/b/.env\n"
      "mv packages/a/.env packages/a/env2; mv packages p2\n"
      "echo ok > packages/b/index.js; echo ok > packages/c/.env.example",
      {"--policy", policy});
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("packages/a/.env")).value_or("<missing>") == "A=1\n");
  BOOST_TEST(!exists(box.ws("packages/b/.env")), "packages/b/.env was created on the host");
  for (const char* moved : {"packages/b2", "packages/a/env2", "p2"})
    BOOST_TEST(!exists(box.ws(moved)), moved << " exists on the host");
  BOOST_TEST(read_file(box.ws("packages/b/index.js")).value_or("<missing>") == "ok\n");
  BOOST_TEST(read_file(box.ws("packages/c/.env.example")).value_or("<missing>") == "ok\n");
  // Nothing of the pattern is taken literally on the host.
  BOOST_TEST(!exists(box.ws("packages/*")));
}

BOOST_DATA_TEST_CASE(deny_patterns_hide_matches_at_any_depth, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string H = box.home();
  box.write_file(box.ws("deploy.pem"), "PEM-TOP-5101\n", 0600);
  box.write_file(box.ws("packages/a/keys/prod.pem"), "PEM-DEEP-5102\n", 0600);
  box.write_file(box.ws("packages/a/keys/readme.txt"), "visible-5103\n");
  box.write_file(H + "/.config/tool-a/token", "TOKEN-5104\n", 0600);
  box.write_file(H + "/.config/tool-a/settings", "visible-5105\n");
  const std::string policy =
      box.write_policy("deny-patterns.yaml",
                       "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                       "  deny: [\"${WORKSPACE}/**/*.pem\", \"~/.config/*/token\"]\n");
  const std::string before = snapshot(box.workspace());
  auto r = box.sh("cat deploy.pem packages/a/keys/prod.pem packages/a/keys/readme.txt " + H +
                      "/.config/tool-a/token " + H +
                      "/.config/tool-a/settings\n"
                      "grep -r 510 . " +
                      H +
                      "/.config 2>&1\n"
                      "echo x > deploy.pem; rm -f packages/a/keys/prod.pem; mv deploy.pem d2",
                  {"--policy", policy});
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  for (const char* visible : {"visible-5103", "visible-5105"})
    BOOST_TEST(r.out.find(visible) != std::string::npos, visible << "\n" << r.describe());
  for (const char* secret : {"PEM-TOP-5101", "PEM-DEEP-5102", "TOKEN-5104"}) {
    BOOST_TEST(r.out.find(secret) == std::string::npos, secret << " leaked:\n" << r.describe());
    BOOST_TEST(r.err.find(secret) == std::string::npos, secret << " leaked:\n" << r.describe());
  }
  BOOST_TEST(snapshot(box.workspace()) == before);
}

BOOST_DATA_TEST_CASE(a_nested_git_that_is_a_symlink_refuses_to_run, bdata::make(kCallers), caller) {
  // A rule on a link would protect what it names, not the name the host's git will use.
  Sandbox box(caller);
  box.make_dir(box.ws("elsewhere/repo-git"));
  box.make_dir(box.ws("packages/a"));
  box.host_command({"/bin/ln", "-s", "../../elsewhere/repo-git", box.ws("packages/a/.git")});
  const std::string marker = box.ws("MARKER");
  RunSpec spec;
  spec.command = {"/usr/bin/touch", marker};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.err.find(box.ws("packages/a/.git")) != std::string::npos, r.describe());
  BOOST_TEST(!exists(marker), "the command ran");
}

BOOST_DATA_TEST_CASE(a_directory_the_walk_cannot_list_but_the_sandbox_can_write_is_refused,
                     bdata::make(kCallers), caller) {
  // Mode 0300: the caller may create names inside but not list them, so a repository
  // there cannot be found; nobody's run refuses, root (who lists anything) protects it.
  Sandbox box(caller);
  box.write_file(box.ws("locked/repo/.git/config"), "[core]\n");
  box.host_command({"/bin/chmod", "0300", box.ws("locked")});
  const std::string before = snapshot(box.ws("locked/repo/.git"));
  const std::string marker = box.ws("MARKER");
  auto r = box.sh("touch " + marker + "; echo evil >> locked/repo/.git/config");
  if (caller == Caller::Nobody) {
    BOOST_TEST(r.exit_code != 0, r.describe());
    BOOST_TEST(r.err.find("cannot list '" + box.ws("locked") + "'") != std::string::npos,
               r.describe());
    BOOST_TEST(!exists(marker), "the command ran");
  } else {
    BOOST_TEST_REQUIRE(r.completed(), r.describe());
    BOOST_TEST(exists(marker));
  }
  box.host_command({"/bin/chmod", "0700", box.ws("locked")});
  BOOST_TEST(snapshot(box.ws("locked/repo/.git")) == before);
}

// A filesystem whose listings give no entry types (ext2 without `filetype`: DT_UNKNOWN)
// has the walk look each name up. In a directory of the caller's that it may list but not
// search (mode 0644), nobody's lookup of `sub/.git` failed (EACCES) and the walk skipped
// the repository; only the closing of such directories (hard_links) kept the command from
// making `sub` searchable and writing the hooks. Now nobody's run refuses (exit 2); root
// (modes ignored) finds the repository and protects it. The workspace is the filesystem,
// mounted in a mount namespace of the run's own, and looked at there after the run.
BOOST_DATA_TEST_CASE(a_name_a_typeless_listing_cannot_look_up_is_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string tree = box.base() + "/tree";
  for (const char* dir : {"sub/.git/hooks", "sub/.git/objects", "sub/.git/refs"})
    box.make_dir(tree + "/" + dir);
  box.write_file(tree + "/sub/.git/HEAD", "ref: refs/heads/main\n");
  box.host_command({"/bin/chmod", "0644", tree + "/sub"});
  const std::string id = std::to_string(uid_of(caller));
  RunSpec spec;
  spec.root_prefix = in_private_mount_namespace(
      "truncate -s 8M \"$1\" && mke2fs -q -t ext2 -O ^filetype -E root_owner=\"$3:$3\" -d "
      "\"$2\" \"$1\" && mount -o loop \"$1\" \"$4\" && rmdir \"$4/lost+found\" || exit 99\n"
      "ws=$4; shift 4; \"$@\"; rc=$?\n"
      "[ -e \"$ws/sub/.git/hooks/pre-commit\" ] && echo 'host: hook written'; exit $rc",
      {box.base() + "/ext2.img", tree, id, box.workspace()});
  spec.command = {
      "/bin/sh", "-c",
      "chmod 0755 sub && echo evil > sub/.git/hooks/pre-commit; echo " + std::string(kDoneMarker)};
  const RunResult r = box.run(spec);
  if (caller == Caller::Nobody) {
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(r.err.find("cannot look up '" + box.ws("sub/.git") + "'") != std::string::npos,
               r.describe());
    BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  } else {
    BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  }
  BOOST_TEST(r.out.find("host: hook written") == std::string::npos, r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
