// compiler/resolve/dir_fd.hpp's open_walking_without_links_at, the walk the resolver and
// the runner fall back on where openat2 cannot be used: it must answer every lookup as
// openat2 with RESOLVE_NO_SYMLINKS does (the same object, or the same errno), since what a
// caller makes of the answer was written against openat2's.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <string>
#include <vector>

#include "compiler/resolve/dir_fd.hpp"
#include "compiler/resolve/resolve.hpp"
#include "support/failing_fstat.hpp"
#include "support/temp_dir.hpp"

using zpolicy::compiler::open_walking_without_links_at;
using zpolicy::compiler::openat2;
using zpolicy::compiler::Resolve;

namespace {

// What a lookup found: the object and whether it was opened O_PATH, or the errno.
struct Answer {
  int error = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  bool path_only = false;
  friend bool operator==(const Answer&, const Answer&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Answer& a) {
    return os << "errno " << a.error << " dev " << a.dev << " ino " << a.ino
              << (a.path_only ? " O_PATH" : "");
  }
};

Answer answer(int fd) {
  Answer a;
  if (fd < 0) {
    a.error = errno;
    return a;
  }
  struct stat st;
  if (fstat(fd, &st) == 0) {
    a.dev = st.st_dev;
    a.ino = st.st_ino;
  }
  a.path_only = (fcntl(fd, F_GETFL) & O_PATH) != 0;
  close(fd);
  return a;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(link_free_walk)

BOOST_AUTO_TEST_CASE(the_walk_answers_as_openat2_with_no_symlinks) {
  const int probe = openat2(AT_FDCWD, "/", O_PATH, Resolve::NoSymlinks);
  if (probe < 0) return;  // nothing to compare against
  close(probe);
  zpolicy::test::TempDir t;
  t.write("root/sub/file", "x\n");
  t.symlink("sub", "root/to_sub");
  t.symlink("file", "root/sub/to_file");
  t.symlink("missing", "root/sub/dangling");
  const int root = open((t / "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  BOOST_TEST_REQUIRE(root >= 0);
  struct Lookup {
    std::string path;
    int flags;
  };
  const std::vector<Lookup> lookups{
      {"sub/file", O_RDONLY},
      {"sub//file", O_PATH},
      {"sub/", O_RDONLY | O_DIRECTORY},
      {".", O_RDONLY | O_DIRECTORY},
      {"to_sub/file", O_PATH},
      {"to_sub", O_PATH},
      {"to_sub", O_RDONLY},
      {"to_sub", O_PATH | O_NOFOLLOW},
      {"sub/to_file", O_RDONLY},
      {"sub/dangling", O_PATH | O_NOFOLLOW},
      {"sub/dangling/x", O_PATH},
      {"sub/missing", O_PATH},
      {"sub/file/x", O_PATH},
      {"sub/file", O_RDONLY | O_DIRECTORY},
      {t / "root/sub/file", O_PATH},
      {t / "root/to_sub/file", O_PATH},
      {"/", O_RDONLY | O_DIRECTORY},
      {"/", O_PATH | O_DIRECTORY},
  };
  for (const auto& l : lookups) {
    const Answer want = answer(openat2(root, l.path.c_str(), l.flags, Resolve::NoSymlinks));
    const Answer walked = answer(open_walking_without_links_at(root, l.path, l.flags));
    BOOST_TEST(walked == want, l.path << " flags " << l.flags);
  }
  close(root);
}

// Review R24-4: a last component the walk opened O_PATH|O_NOFOLLOW whose fstat failed was
// returned, unlooked at, where it may be a link openat2 refuses (ELOOP); the runner's own
// walk had refused it. With fstat failing (EIO), a link as the last component is ELOOP, as
// a file is (whose kind is unknown as well); a link asked for itself (O_NOFOLLOW) is opened.
BOOST_AUTO_TEST_CASE(a_last_component_whose_status_fails_is_refused) {
  zpolicy::test::TempDir t;
  t.write("root/file", "x\n");
  t.symlink("file", "root/to_file");
  const std::string root = t / "root";
  const auto walked = [&](const std::string& name, int flags) {
    return zpolicy::test::with_failing_fstat([&] {
      const int dir = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      const int fd = open_walking_without_links_at(dir, name, flags);
      return fd >= 0 ? 0 : errno == ELOOP ? 1 : 2;
    });
  };
  const int link = walked("to_file", O_PATH);
  if (link < 0) return;  // no seccomp filter here
  BOOST_TEST(link == 1);
  BOOST_TEST(walked("file", O_PATH) == 1);
  BOOST_TEST(walked("to_file", O_PATH | O_NOFOLLOW) == 0);
}

// Review R24-5: the resolver's look-up without links took a found last component whose
// fstat failed for "no link here" (host_link_on_the_way answered none for a host link).
BOOST_AUTO_TEST_CASE(a_host_link_whose_status_fails_is_still_named) {
  zpolicy::test::TempDir t;
  t.write("dir/file", "x\n");
  t.symlink("dir", "to_dir");
  const std::string link = t / "to_dir";
  BOOST_TEST(zpolicy::compiler::host_link_on_the_way(link + "/file").value_or("<none>") == link);
  const int named = zpolicy::test::with_failing_fstat(
      [&] { return zpolicy::compiler::host_link_on_the_way(link) == link ? 0 : 1; });
  if (named < 0) return;  // no seccomp filter here
  BOOST_TEST(named == 0);
}

BOOST_AUTO_TEST_SUITE_END()
