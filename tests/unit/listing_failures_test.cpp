// The resolver's directory readers on a failure that is neither "nothing there" nor the
// caller's permissions (fix24): a listing that fails part way, a directory that cannot be
// opened for want of descriptors, an entry whose lstat fails for its length. Each such
// failure hides what lies there, so the run is refused; only a name that vanished (ENOENT),
// or one the caller cannot search (which git run by the caller cannot reach either), is
// passed by. Failures are real: the kernel's own answers, a seccomp filter in a child
// making getdents64 or one open fail, or a path longer than PATH_MAX.
#include <fcntl.h>
#include <grp.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

#include "compiler/resolve/gitdir.hpp"
#include "compiler/resolve/resolve.hpp"
#include "support/parse.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;

namespace {

// What `body` returns, run in a child whose seccomp filter `rules` set up (each failing a
// call with an errno); "<child failed: …>" when the child could not load it or died.
std::string in_failing_child(const std::function<void(scmp_filter_ctx)>& rules,
                             const std::function<std::string()>& body) {
  int fds[2];
  BOOST_TEST_REQUIRE(pipe(fds) == 0);
  const pid_t child = fork();
  BOOST_TEST_REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    std::string out = "<child failed: seccomp>";
    if (scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW)) {
      rules(ctx);
      if (seccomp_load(ctx) == 0) out = body();
    }
    for (size_t at = 0; at < out.size();) {
      const ssize_t n = write(fds[1], out.data() + at, out.size() - at);
      if (n <= 0) _exit(1);
      at += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "<child failed: " + out + ">";
  return out;
}

// getdents64 (and the old getdents) fail with `error`: every listing fails after its open.
void listings_fail(scmp_filter_ctx ctx, int error) {
  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(static_cast<uint32_t>(error)), SCMP_SYS(getdents64), 0);
  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(static_cast<uint32_t>(error)), SCMP_SYS(getdents), 0);
}

// A directory `dir` below `t` whose path is about `length` bytes long, made one component at
// a time; `length` stays below PATH_MAX, so it can be opened by name, while a long name in it
// cannot be looked at by its path (ENAMETOOLONG).
std::string long_directory(const test::TempDir& t, size_t length) {
  std::string rel;
  while (t.str().size() + rel.size() + 202 < length)
    rel += (rel.empty() ? "" : "/") + std::string(200, 'd');
  return t.mkdir(rel);
}

// The name `name` (255 bytes long) made in `dir` as a symlink (`target`) or a directory
// (`target` empty), by descriptor; removed the same way on scope exit, since no path
// reaches it (TempDir's removal would leave it).
class LongEntry {
 public:
  LongEntry(const std::string& dir, const std::string& target)
      : fd_(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)), dir_entry_(target.empty()) {
    BOOST_TEST_REQUIRE(fd_ >= 0);
    const int made = dir_entry_ ? mkdirat(fd_, name().c_str(), 0755)
                                : symlinkat(target.c_str(), fd_, name().c_str());
    BOOST_TEST_REQUIRE(made == 0, std::strerror(errno));
  }
  ~LongEntry() {
    unlinkat(fd_, name().c_str(), dir_entry_ ? AT_REMOVEDIR : 0);
    close(fd_);
  }
  static std::string name() { return std::string(255, 'n'); }

 private:
  int fd_;
  bool dir_entry_;
};

ir::Policy policy(const std::string& text) {
  auto r = test::parse(text);
  BOOST_TEST_REQUIRE(r.errors == "");
  return *r.policy;
}

// The diagnostics of resolving a workspace-write policy without patterns (whose walks would
// meet the failure first) for the workspace `ws`, in a child whose filter `rules` set up.
std::string resolve_failing(const test::TempDir& t, const std::string& ws,
                            const std::function<void(scmp_filter_ctx)>& rules) {
  ir::Diagnostics facts;
  auto h = compiler::host_facts(ws, facts);
  BOOST_TEST_REQUIRE(h.has_value(), facts.str());
  h->home = t.mkdir("home");
  h->tmpdir = t.mkdir("tmp");
  h->state_dir.clear();
  const ir::Policy p = policy(
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n"
      "  protect: [.git]\n");
  return in_failing_child(rules, [&] {
    ir::Diagnostics diags;
    compiler::resolve_for_host(p, ir::Mode::WorkspaceWrite, *h, diags);
    return diags.str();
  });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(listing_failures)

// The hard-link walk of a writable root ended a listing that failed as if the directory had
// no more entries: a device node, a privileged program or another name of a protected file
// past that point went unprotected, silently. Now the run is refused, naming the directory.
BOOST_AUTO_TEST_CASE(a_hard_link_walk_whose_listing_fails_refuses) {
  test::TempDir t;
  const std::string ws = t.mkdir("ws");
  t.write("ws/file", "x\n");
  const std::string diags =
      resolve_failing(t, ws, [](scmp_filter_ctx ctx) { listings_fail(ctx, EIO); });
  BOOST_TEST(diags.find("cannot look into '" + ws + "' below '" + ws + "' (" + std::strerror(EIO) +
                        ")") != std::string::npos,
             diags);
  BOOST_TEST(diags.find("refusing to run") != std::string::npos, diags);
}

// The same walk took a directory it could not open for another reason than its permissions
// (here: no descriptor left, EMFILE, for the walk's own open of each directory) for one that
// vanished, and passed by what it holds.
BOOST_AUTO_TEST_CASE(a_hard_link_walk_that_cannot_open_a_directory_refuses) {
  test::TempDir t;
  const std::string ws = t.mkdir("ws");
  t.write("ws/sub/file", "x\n");
  const std::string diags = resolve_failing(t, ws, [](scmp_filter_ctx ctx) {
    constexpr int kWalkOpen = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EMFILE), SCMP_SYS(openat), 1,
                     SCMP_A2(SCMP_CMP_EQ, static_cast<scmp_datum_t>(kWalkOpen)));
  });
  BOOST_TEST(diags.find("cannot look into '" + ws + "' below '" + ws + "' (" +
                        std::strerror(EMFILE) + ")") != std::string::npos,
             diags);
}

// One rule for `modules`, `remotes`, `branches` and `worktrees` (list_git_level): a listing
// that fails part way is an error, as one that cannot start; nothing there is no entry.
BOOST_AUTO_TEST_CASE(a_git_level_whose_listing_fails_is_an_error) {
  test::TempDir t;
  t.write("remotes/origin", "URL: /srv/r.git\n");
  const compiler::GitLevel listed = compiler::list_git_level(t / "remotes");
  BOOST_TEST(listed.error == 0);
  BOOST_TEST(listed.names == std::vector<std::string>{"origin"}, boost::test_tools::per_element());
  const std::string failed = in_failing_child([](scmp_filter_ctx ctx) { listings_fail(ctx, EIO); },
                                              [&] {
                                                const auto l =
                                                    compiler::list_git_level(t / "remotes");
                                                return std::to_string(l.error);
                                              });
  BOOST_TEST(failed == std::to_string(EIO));
  for (const char* nothing : {"missing", "remotes/origin/below-a-file"}) {
    const compiler::GitLevel none = compiler::list_git_level(t / nothing);
    BOOST_TEST(none.error == 0, nothing);
    BOOST_TEST(none.names.empty(), nothing);
  }
  BOOST_TEST(compiler::unlistable_git_level(t / "remotes", "the legacy remote files in", EIO) ==
             "git reaches the legacy remote files in '" + t / "remotes" +
                 "' by name, and zpolicy cannot list it (" + std::strerror(EIO) +
                 ") to read them; make it readable by the user running zpolicy");
}

// A linked worktree's administrative directory whose lstat failed was passed by silently;
// git reaches it by its name in the `.git` file, and reads its `config.worktree`. Here the
// failure is the path's length (ENAMETOOLONG): the run is refused, naming the entry.
BOOST_AUTO_TEST_CASE(an_admin_directory_that_cannot_be_looked_at_is_an_error) {
  test::TempDir t;
  const std::string common = long_directory(t, 3900);
  BOOST_TEST_REQUIRE(mkdir((common + "/worktrees").c_str(), 0755) == 0);
  const LongEntry entry(common + "/worktrees", "");
  const compiler::AdminDirs admins = compiler::linked_worktree_admin_dirs(common);
  BOOST_TEST(admins.error == ENAMETOOLONG);
  BOOST_TEST(admins.dirs.empty());
}

// A hooks directory's entry whose lstat failed was passed by as no symlink: what it leads to
// went unprotected. Here too the failure is the path's length; the caller refuses.
BOOST_AUTO_TEST_CASE(a_hook_that_cannot_be_looked_at_is_unreadable) {
  test::TempDir t;
  const std::string hooks = long_directory(t, 3900);
  const LongEntry entry(hooks, "/srv/elsewhere/pre-commit");
  const compiler::DirLinks links = compiler::symlinks_in(hooks);
  BOOST_TEST(links.unreadable.value_or("<none>") == hooks + "/" + LongEntry::name());
  BOOST_TEST(links.links.empty());
}

// Held: a listing of the hooks that fails part way was refused before, and still is.
BOOST_AUTO_TEST_CASE(a_hooks_listing_that_fails_is_unreadable) {
  test::TempDir t;
  t.symlink("/srv/elsewhere/pre-commit", "hooks/pre-commit");
  const std::string hooks = t / "hooks";
  BOOST_TEST(compiler::symlinks_in(hooks).links.size() == 1u);
  const std::string failed =
      in_failing_child([](scmp_filter_ctx ctx) { listings_fail(ctx, EIO); },
                       [&] { return compiler::symlinks_in(hooks).unreadable.value_or("<none>"); });
  BOOST_TEST(failed == hooks);
}

// Held, and decided: an entry of a hooks directory the caller may list but not search (mode
// 0644) cannot be looked at (EACCES), and git run by the caller cannot run it either:
// passed by, not refused. As uid 65534 in a child, against root's directory.
BOOST_AUTO_TEST_CASE(a_hook_in_a_directory_the_caller_cannot_search_is_passed_by) {
  if (geteuid() != 0) {
    BOOST_TEST_MESSAGE("needs root to act as another user; skipped");
    return;
  }
  test::TempDir t("/var/tmp");  // searchable by uid 65534 on the way, whatever $TMPDIR is
  BOOST_TEST_REQUIRE(chmod(t.str().c_str(), 0755) == 0);
  t.symlink("/srv/elsewhere/pre-commit", "hooks/pre-commit");
  const std::string hooks = t / "hooks";
  BOOST_TEST_REQUIRE(chmod(hooks.c_str(), 0644) == 0);
  const std::string seen = in_failing_child(
      [](scmp_filter_ctx) {},
      [&] {
        if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
            setresuid(65534, 65534, 65534) != 0)
          return std::string("<setresuid>");
        const auto l = compiler::symlinks_in(hooks);
        return std::to_string(l.links.size()) + " " + l.unreadable.value_or("<none>");
      });
  BOOST_TEST_REQUIRE(chmod(hooks.c_str(), 0755) == 0);
  BOOST_TEST(seen == "0 <none>");
}

BOOST_AUTO_TEST_SUITE_END()
