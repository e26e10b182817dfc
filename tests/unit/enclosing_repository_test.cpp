// The repositories above a writable root (compiler/resolve/enclosing_repository.hpp, red
// team A23-4), found as git's discovery tests each directory on the way up.
#include "compiler/resolve/enclosing_repository.hpp"

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

using namespace zpolicy::compiler;
using Shape = EnclosingRepository::Shape;

namespace {

// A git directory as git's discovery takes one: a HEAD, `objects` and `refs`.
void git_directory(const zpolicy::test::TempDir& t, const std::string& rel) {
  t.write(rel + "/HEAD", "ref: refs/heads/main\n");
  t.mkdir(rel + "/objects");
  t.mkdir(rel + "/refs");
}

// What `above` found inside the temporary tree (whatever lies above it is the host's), as
// "shape top gitdir" lines, nearest first.
std::vector<std::string> found(EnclosingRepositories& e, const zpolicy::test::TempDir& t,
                               const std::string& rel) {
  std::vector<std::string> out;
  for (const auto& r : e.above(t / rel)) {
    if (r.top.rfind(t.str(), 0) != 0) continue;
    const std::string shape = r.shape == Shape::GitDirectory ? "dir"
                              : r.shape == Shape::Pointer    ? "pointer"
                              : r.shape == Shape::Link       ? "link"
                              : r.shape == Shape::Unreadable ? "unreadable"
                                                             : "inside";
    out.push_back(shape + " " + r.top.substr(t.str().size()) + " " + r.gitdir);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(enclosing_repository)

BOOST_AUTO_TEST_CASE(every_repository_above_nearest_first_not_the_directory_itself) {
  zpolicy::test::TempDir t;
  git_directory(t, "outer/.git");
  git_directory(t, "outer/mid/.git");
  t.mkdir("outer/mid/app/src");
  t.mkdir("outer/mid/pkg/.git");  // a package's plain `.git` directory: no repository
  EnclosingRepositories e;
  using V = std::vector<std::string>;
  const V expected{"dir /outer/mid " + t / "outer/mid/.git", "dir /outer " + t / "outer/.git"};
  BOOST_TEST(found(e, t, "outer/mid/app/src") == expected, boost::test_tools::per_element());
  BOOST_TEST(found(e, t, "outer/mid/app") == expected, boost::test_tools::per_element());
  BOOST_TEST(found(e, t, "outer/mid/pkg") == expected, boost::test_tools::per_element());
  // The directory's own `.git` is its own repository, protected as the workspace's.
  BOOST_TEST(found(e, t, "outer/mid") == V{"dir /outer " + t / "outer/.git"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_git_file_names_the_git_directory_relative_to_its_directory) {
  zpolicy::test::TempDir t;
  t.write("wt/.git", "gitdir: ../main/.git/worktrees/wt\n");
  t.write("elsewhere/pointer", "gitdir: ../main/.git/worktrees/l\n");
  t.symlink(t / "elsewhere/pointer", "linked/.git");  // relative to `linked`, as git reads it
  t.write("bad/.git", "no gitdir line\n");
  t.mkdir("wt/app");
  t.mkdir("linked/app");
  t.mkdir("bad/app");
  EnclosingRepositories e;
  BOOST_TEST(found(e, t, "wt/app") ==
                 std::vector<std::string>{"pointer /wt " + t / "wt" + "/../main/.git/worktrees/wt"},
             boost::test_tools::per_element());
  BOOST_TEST(
      found(e, t, "linked/app") ==
          std::vector<std::string>{"pointer /linked " + t / "linked" + "/../main/.git/worktrees/l"},
      boost::test_tools::per_element());
  BOOST_TEST(found(e, t, "bad/app").empty());
}

BOOST_AUTO_TEST_CASE(a_directory_inside_a_git_directory_is_inside_it) {
  zpolicy::test::TempDir t;
  git_directory(t, "r.git");
  t.mkdir("r.git/app/x");
  git_directory(t, "repo/.git");
  t.mkdir("repo/.git/hooks");
  EnclosingRepositories e;
  BOOST_TEST(found(e, t, "r.git/app/x") == std::vector<std::string>{"inside /r.git " + t / "r.git"},
             boost::test_tools::per_element());
  BOOST_TEST(found(e, t, "repo/.git/hooks") ==
                 (std::vector<std::string>{"inside /repo/.git " + t / "repo/.git",
                                           "dir /repo " + t / "repo/.git"}),
             boost::test_tools::per_element());
}

// A common directory needs no HEAD (git asks only for its `objects` and `refs`): a linked
// worktree's git directory names it in `commondir`, and git runs its hooks for that worktree.
// A directory inside one is inside a git directory (attack 24's noticed item: `--workspace
// C/hooks` let the command write the worktree's pre-commit hook), also where it is a `.git`
// that lost its HEAD. One with `objects` alone is none.
BOOST_AUTO_TEST_CASE(a_directory_inside_a_common_directory_without_a_head_is_inside_it) {
  zpolicy::test::TempDir t;
  for (const char* d : {"C/objects", "C/refs", "C/hooks", "repo/.git/objects", "repo/.git/refs",
                        "repo/.git/hooks", "half/objects", "half/hooks"})
    t.mkdir(d);
  EnclosingRepositories e;
  using V = std::vector<std::string>;
  BOOST_TEST(found(e, t, "C/hooks") == V{"inside /C " + t / "C"}, boost::test_tools::per_element());
  BOOST_TEST(found(e, t, "repo/.git/hooks") == V{"inside /repo/.git " + t / "repo/.git"},
             boost::test_tools::per_element());
  BOOST_TEST(found(e, t, "half/hooks").empty());
}

BOOST_AUTO_TEST_CASE(each_directory_is_looked_at_once) {
  zpolicy::test::TempDir t;
  git_directory(t, "repo/.git");
  t.mkdir("repo/a/b");
  t.mkdir("repo/c");
  EnclosingRepositories e;
  BOOST_TEST(found(e, t, "repo/a/b").size() == 1u);
  std::filesystem::remove_all(t / "repo/.git");
  // `repo` was looked at for `repo/a/b`: the answer for its other children is the same.
  BOOST_TEST(found(e, t, "repo/c").size() == 1u);
  BOOST_TEST(EnclosingRepositories().above(t / "repo/c").size() ==
             e.above(t / "repo/c").size() - 1);
}

// Review A23R-2: a `.git` symlink that leads to no git directory now is listed, as where it
// leads may be made one; one that leads to a git directory is that directory.
BOOST_AUTO_TEST_CASE(a_git_symlink_to_no_git_directory_is_listed_as_a_link) {
  zpolicy::test::TempDir t;
  t.mkdir("dangling/app");
  t.symlink("app/gd", "dangling/.git");
  t.mkdir("empty/app/gd");
  t.symlink("app/gd", "empty/.git");
  git_directory(t, "store/gd");
  t.mkdir("linked/app");
  t.symlink(t / "store/gd", "linked/.git");
  EnclosingRepositories e;
  using V = std::vector<std::string>;
  BOOST_TEST(found(e, t, "dangling/app") == V{"link /dangling " + t / "dangling/.git"},
             boost::test_tools::per_element());
  BOOST_TEST(found(e, t, "empty/app") == V{"link /empty " + t / "empty/.git"},
             boost::test_tools::per_element());
  BOOST_TEST(found(e, t, "linked/app") == V{"dir /linked " + t / "linked/.git"},
             boost::test_tools::per_element());
}

// Review R24-5: a `.git` whose lstat fails otherwise than by its absence (ENOENT, ENOTDIR) or
// the caller's lack of search permission (EACCES) may be a repository git finds: it was
// taken for none. A name longer than NAME_MAX makes the lstat fail with ENAMETOOLONG; the
// directory is listed as one zpolicy cannot look at (the resolver refuses it), with the
// repository above it still found.
BOOST_AUTO_TEST_CASE(a_dot_git_that_cannot_be_looked_at_is_listed_unreadable) {
  zpolicy::test::TempDir t;
  git_directory(t, "outer/.git");
  const std::string long_name(300, 'n');
  EnclosingRepositories e;
  const auto found_above = found(e, t, "outer/" + long_name + "/app");
  using V = std::vector<std::string>;
  BOOST_TEST(
      found_above == (V{"unreadable /outer/" + long_name + " " + t / "outer/" + long_name + "/.git",
                        "dir /outer " + t / "outer/.git"}),
      boost::test_tools::per_element());
  for (const auto& r : e.above(t / ("outer/" + long_name + "/app")))
    if (r.shape == Shape::Unreadable) BOOST_TEST(r.error == ENAMETOOLONG);
}

BOOST_AUTO_TEST_SUITE_END()
