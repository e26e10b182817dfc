#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <ostream>
#include <string>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Review of session 23 (docs/redteam-2026-12.md "Review 23"): two fail-open paths in the
// reading of the repositories above a writable root. Observed from the host, as root and as
// uid 65534: zpolicy refuses (exit 2) or the command's write fails, and the host's own git
// afterwards runs no hook the command wrote.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_review23)

namespace {

enum class MissingTarget { Missing, EmptyDirectory };
std::ostream& operator<<(std::ostream& os, MissingTarget t) {
  return os << (t == MissingTarget::Missing ? "missing" : "an empty directory");
}

std::string link_target(const std::string& path) {
  std::error_code ec;
  return std::filesystem::read_symlink(path, ec).string();
}

}  // namespace

// A23R-1: the repository above the workspace `app` has a `.git` file naming `app/gd`, a git
// directory in the workspace whose `commondir` names `app/l/common`, with `l` the host's link
// to `BASE/store`. The walk of the repositories above protected `gd`, and common_directory
// took a protected directory for one whose `commondir` was judged already: silent. Under
// `protect: [.git]`, on main 0129b99 the command made `evil/common` a repository with a
// pre-commit hook and re-pointed `l` at `evil`, exit 0, and the host's next `git commit` in
// the repository ran the hook. Refused now, exit 2, the link as it was.
BOOST_DATA_TEST_CASE(
    a_commondir_through_a_workspace_link_of_a_git_directory_protected_above_is_refused,
    bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned"), store = box.base() + "/store";
  box.make_dir(store);
  box.host_command({kGit, "init", "-q", "--bare", store + "/common"});
  box.host_command({kGit, "--git-dir=" + store + "/common", "config", "core.bare", "false"});
  box.make_dir(box.ws("app"));
  box.make_dir(box.ws("app/gd"));
  box.host_command({"/bin/ln", "-s", store, box.ws("app/l")});
  box.write_file(box.ws("app/gd/HEAD"), "ref: refs/heads/main\n");
  box.write_file(box.ws("app/gd/commondir"), box.ws("app/l/common") + "\n");
  box.write_file(box.ws(".git"), "gitdir: app/gd\n");
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git -c user.name=t -c user.email=t@t.test commit -q "
                    "--allow-empty -m i",
                    "sh", box.workspace()});
  // `protect: [.git]` alone: the default's `**/.git` matches `gd` (a git directory), which
  // protect_common_directories then judges, as the run refused on 0129b99 already.
  RunSpec spec;
  spec.options = {"--policy",
                  box.write_policy("git.yaml",
                                   "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                   "  read: [\"/\"]\n  write: [\"${WORKSPACE}\"]\n"
                                   "  protect: [.git]\nnetwork: none\n"),
                  "--workspace", box.ws("app")};
  spec.cwd = box.ws("app");
  spec.command = {
      "/bin/sh", "-c",
      "git init -q --bare evil/common && git --git-dir=evil/common config core.bare "
      "false && printf '#!/bin/sh\\necho PWNED > " +
          pwned +
          "\\n' > evil/common/hooks/pre-commit && chmod +x evil/common/hooks/pre-commit "
          "&& ln -sfn evil l && echo '" +
          std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find(box.ws("app/gd") + "/commondir") != std::string::npos, r.describe());
  BOOST_TEST(link_target(box.ws("app/l")) == store, r.describe());
  host_commit(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

// A23R-2: the repository above the workspace `app` is the host's `.git -> app/gd`, with `gd`
// missing or an empty directory: no git directory yet, and the `.git` was not listed. On main
// 0129b99 the command made `gd` a git directory with a pre-commit hook, exit 0, and the host's
// next `git commit` in the repository ran the hook. Now `gd` is protected where the link
// leads: the command cannot make it.
BOOST_DATA_TEST_CASE(a_git_symlink_above_to_no_git_directory_in_the_workspace_is_protected,
                     bdata::make(kCallers) *
                         bdata::make({MissingTarget::Missing, MissingTarget::EmptyDirectory}),
                     caller, target) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  box.make_dir(box.ws("app"));
  if (target == MissingTarget::EmptyDirectory) box.make_dir(box.ws("app/gd"));
  box.host_command({"/bin/ln", "-s", "app/gd", box.ws(".git")});
  RunSpec spec;
  spec.options = {"--workspace", box.ws("app")};
  spec.cwd = box.ws("app");
  spec.command = {"/bin/sh", "-c",
                  "git init -q --bare gd && git --git-dir=gd config core.bare false && "
                  "printf '#!/bin/sh\\necho PWNED > " +
                      pwned +
                      "\\n' > gd/hooks/pre-commit && chmod +x gd/hooks/pre-commit && echo '" +
                      std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("app/gd/hooks/pre-commit")), r.describe());
  host_commit(box, box.workspace());
  BOOST_TEST(!exists(pwned), r.describe());
}

// What A23R-2's fix must leave running: a monorepo above the workspace, and a `.git` above
// that is the host's symlink to an existing git directory outside the workspace.
BOOST_DATA_TEST_CASE(an_ordinary_repository_above_still_runs,
                     bdata::make(kCallers) * bdata::make({false, true}), caller, linked) {
  Sandbox box(caller);
  const std::string gitdir = box.base() + "/gd";
  if (linked) {
    box.make_dir(gitdir);
    box.host_command({kGit, "init", "-q", "--bare", gitdir});
    box.host_command({kGit, "--git-dir=" + gitdir, "config", "core.bare", "false"});
    box.host_command({"/bin/ln", "-s", gitdir, box.ws(".git")});
  } else {
    box.host_command({kGit, "init", "-q", box.workspace()});
  }
  box.make_dir(box.ws("app"));
  RunSpec spec;
  spec.options = {"--workspace", box.ws("app")};
  spec.cwd = box.ws("app");
  spec.command = {"/bin/sh", "-c", "echo ok > out && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("app/out")).value_or("") == "ok\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
