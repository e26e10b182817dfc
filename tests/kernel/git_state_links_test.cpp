#include <sys/stat.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// A symlink the host made in a git directory leads what git reads or runs there into a
// writable root: its target is as protected as the git directory (docs/protected-paths.md
// "Symlinks in a git directory"). Observed from the host, as root and as uid 65534: the
// command's write fails, the file is unchanged, and the host's own git afterwards runs
// nothing the command wrote.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_git_state_links)

namespace {

// What the host linked into the workspace mid-rebase: the whole state directory, or only
// the todo list in it, or a todo list the host removed, its name a link to `BASE/h/dl/todo`
// with `BASE/h/dl` the host's dangling link to `WS/new`.
enum class Linked { StateDirectory, TodoFile, DanglingThroughHostLink };
std::ostream& operator<<(std::ostream& os, Linked l) {
  return os << (l == Linked::StateDirectory ? "rebase-merge -> WS/rb"
                : l == Linked::TodoFile     ? "rebase-merge/git-rebase-todo -> WS/todo"
                                            : "git-rebase-todo -> BASE/h/dl/todo, dl -> WS/new");
}

// Where the repository's git directory is: the workspace's `.git`, a separate one outside
// (`git init --separate-git-dir`), or that of a repository above the workspace `app`.
enum class Repository { InWorkspace, Separate, Above };
std::ostream& operator<<(std::ostream& os, Repository r) {
  return os << (r == Repository::InWorkspace ? "WS/.git"
                : r == Repository::Separate  ? "BASE/gd"
                                             : "repository above WS/app");
}

// The host's interactive rebase of the last two commits, stopped at a `break` before them:
// `git rebase --continue` then runs the todo list's lines.
void stopped_rebase(const Sandbox& box) {
  commit_empty(box, box.workspace(), "a");
  commit_empty(box, box.workspace(), "b");
  box.host_command({kGit, "-C", box.workspace(), "-c", "sequence.editor=sed -i 1ibreak", "rebase",
                    "-q", "-i", "HEAD~2"});
}

}  // namespace

// The host moved a stopped rebase's state (or its todo list) into the workspace and left a
// symlink in the git directory. On main da339b0 the command appended `exec` to the todo list,
// exit 0, and the host's `git rebase --continue` ran it. Now the todo list is read-only in the
// sandbox: the append fails and the host's rebase runs only its own lines.
BOOST_DATA_TEST_CASE(
    a_rebase_todo_list_linked_into_a_writable_root_is_read_only,
    bdata::make(kCallers) *
        bdata::make({Linked::StateDirectory, Linked::TodoFile, Linked::DanglingThroughHostLink}) *
        bdata::make({Repository::InWorkspace, Repository::Separate, Repository::Above}),
    caller, linked, repository) {
  Sandbox box(caller);
  const std::string gitdir = workspace_repository(box, repository == Repository::Separate);
  stopped_rebase(box);
  const std::string state = gitdir + "/rebase-merge";
  const std::string app = repository == Repository::Above ? box.ws("app") : box.workspace();
  box.make_dir(app);
  const std::string todo = linked == Linked::StateDirectory ? app + "/rb/git-rebase-todo"
                           : linked == Linked::TodoFile     ? app + "/todo"
                                                            : app + "/new/todo";
  if (linked == Linked::StateDirectory) {
    box.host_command({"/bin/mv", state, app + "/rb"});
    box.host_command({"/bin/ln", "-s", app + "/rb", state});
  } else if (linked == Linked::TodoFile) {
    box.host_command({"/bin/mv", state + "/git-rebase-todo", todo});
    box.host_command({"/bin/ln", "-s", todo, state + "/git-rebase-todo"});
  } else {
    box.host_command({"/bin/rm", state + "/git-rebase-todo"});
    box.make_dir(box.base() + "/h");
    box.host_command({"/bin/ln", "-s", app + "/new", box.base() + "/h/dl"});
    box.host_command({"/bin/ln", "-s", box.base() + "/h/dl/todo", state + "/git-rebase-todo"});
  }
  const std::string before = read_file(todo).value_or("<none>");
  if (linked != Linked::DanglingThroughHostLink)
    BOOST_TEST_REQUIRE(before.find("pick") != std::string::npos, before);
  const std::string pwned = box.base() + "/pwned";
  RunSpec spec;
  if (repository == Repository::Above) spec.options = {"--workspace", app};
  spec.cwd = app;
  spec.command = {"/bin/sh", "-c",
                  "mkdir -p " + app + "/new && echo 'exec echo PWNED > " + pwned + "' >> " + todo +
                      " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(read_file(todo).value_or("<none>") == before, r.describe());
  if (linked == Linked::DanglingThroughHostLink) BOOST_TEST(!exists(todo), r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git -c user.name=t -c user.email=t@t.test rebase --continue "
                    ">/dev/null 2>&1; true",
                    "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

// Not only the rebase's names: any entry of the git directory the host linked into the
// workspace (`info`, whose `attributes` select the drivers the protected config defines,
// `sequencer`, a cherry-pick's state) is read-only in the sandbox.
BOOST_DATA_TEST_CASE(any_entry_of_a_git_directory_linked_into_a_writable_root_is_read_only,
                     bdata::make(kCallers) * bdata::make({"info", "sequencer", "MERGE_MSG"}),
                     caller, entry) {
  Sandbox box(caller);
  workspace_repository(box, false);
  const std::string name = entry, target = box.ws("linked-" + name);
  const bool file = name == "MERGE_MSG";
  if (file) {
    box.write_file(target, "host\n");
  } else {
    box.make_dir(target);
    box.write_file(target + "/attributes", "host\n");
  }
  box.host_command({"/bin/rm", "-rf", box.ws(".git/" + name)});
  box.host_command({"/bin/ln", "-s", target, box.ws(".git/" + name)});
  const std::string written = file ? target : target + "/attributes";
  RunSpec spec;
  spec.command = {"/bin/sh", "-c",
                  "echo evil > " + written + " && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("Read-only file system") != std::string::npos, r.describe());
  BOOST_TEST(read_file(written).value_or("<none>") == "host\n", r.describe());
}

// A state directory the caller cannot even search: another user's (root's, 0700) hides
// nothing from the caller's git, which cannot reach below it either, and the run goes on
// (uid 65534's was refused, "cannot read … to see where its symlinks lead": attack 24b's
// noticed item); the caller's own at mode 0 is one the caller may open again with chmod,
// and git then reads what it holds: refused for uid 65534 (red team A14B-5's rule). Root
// searches both and runs.
BOOST_DATA_TEST_CASE(an_unsearchable_state_directory_runs_unless_it_is_the_callers,
                     bdata::make(kCallers) * bdata::make({true, false}), caller, roots) {
  Sandbox box(caller);
  const std::string gitdir = workspace_repository(box, true);
  const std::string state = gitdir + "/rebase-merge";
  box.make_dir(state);
  box.write_file(state + "/git-rebase-todo", "noop\n");
  if (roots)
    root_owned(state, 0700);
  else
    BOOST_TEST_REQUIRE(chmod(state.c_str(), 0) == 0);
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", "echo made > made && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST_REQUIRE(chmod(state.c_str(), 0755) == 0);
  if (roots || caller == Caller::Root) {
    BOOST_TEST(r.exit_code == 0, r.describe());
    BOOST_TEST(read_file(box.ws("made")).value_or("") == "made\n", r.describe());
  } else {
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(r.err.find(state) != std::string::npos, r.describe());
    BOOST_TEST(!exists(box.ws("made")), r.describe());
  }
}

// Positive control: a `HEAD` that is a symlink (`core.preferSymlinkRefs`) names a file inside
// the git directory; the run goes on, git works in it, and the workspace stays writable.
BOOST_DATA_TEST_CASE(a_symlinked_head_runs_as_before, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string gitdir = workspace_repository(box, false);
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && b=$(git symbolic-ref HEAD) && rm HEAD && ln -s \"$b\" HEAD", "sh",
                    gitdir});
  RunSpec spec;
  spec.command = {
      "/bin/sh", "-c",
      "git status -s >/dev/null && echo made > made && echo '" + std::string(kDoneMarker) + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("made")).value_or("") == "made\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
