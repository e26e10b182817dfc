// compiler/resolve/openat2.hpp: each named resolve policy reaches the kernel as its own
// flag. A policy mapped to the wrong flag (Beneath to InRoot, NoSymlinks to nothing) would
// leave every lookup that names it open to the links it is there to refuse.
#include "compiler/resolve/openat2.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <string>

#include "support/temp_dir.hpp"

using zpolicy::compiler::openat2;
using zpolicy::compiler::Resolve;

namespace {

// Where openat2 cannot be used (ENOSYS, or EPERM from a seccomp filter older than it) the
// wrapper's callers take their own ways; there is nothing here to test.
bool available() {
  const int fd = openat2(AT_FDCWD, "/", O_PATH, Resolve::NoSymlinks);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

// A descriptor closed on scope exit.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// The errno of a lookup that must fail (0 when it succeeded).
int failure(int dir, const char* path, int flags, Resolve resolve) {
  errno = 0;
  const Fd f{openat2(dir, path, flags, resolve)};
  return f.fd >= 0 ? 0 : errno;
}

// Whether `fd` holds the object at the host path `path`.
bool same_object(int fd, const std::string& path) {
  struct stat a, b;
  return fd >= 0 && fstat(fd, &a) == 0 && lstat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// root/sub/file, root/to_sub -> sub, root/absolute -> /sub (the root's, under InRoot).
struct Tree {
  zpolicy::test::TempDir dir;
  bool made = (dir.write("root/sub/file", "x\n"), dir.symlink("sub", "root/to_sub"),
               dir.symlink("/sub", "root/absolute"), true);
  Fd root{open((dir / "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
  Fd sub{open((dir / "root/sub").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
};

}  // namespace

BOOST_AUTO_TEST_SUITE(resolve_openat2)

BOOST_AUTO_TEST_CASE(no_symlinks_refuses_a_link_on_the_way_and_opens_one_at_the_end_with_nofollow) {
  if (!available()) return;
  const Tree t;
  const Fd plain{openat2(t.root.fd, "sub/file", O_PATH, Resolve::NoSymlinks)};
  BOOST_TEST(same_object(plain.fd, t.dir / "root/sub/file"));
  BOOST_TEST(failure(t.root.fd, "to_sub/file", O_PATH, Resolve::NoSymlinks) == ELOOP);
  BOOST_TEST(failure(t.root.fd, "to_sub", O_PATH, Resolve::NoSymlinks) == ELOOP);
  const Fd link{openat2(t.root.fd, "to_sub", O_PATH | O_NOFOLLOW, Resolve::NoSymlinks)};
  struct stat st;
  BOOST_TEST_REQUIRE(link.fd >= 0);
  BOOST_TEST((fstat(link.fd, &st) == 0 && S_ISLNK(st.st_mode)));
}

BOOST_AUTO_TEST_CASE(no_magic_links_refuses_procs_links_to_open_files_only) {
  if (!available()) return;
  const Tree t;
  const std::string magic = "/proc/self/fd/" + std::to_string(t.sub.fd) + "/file";
  BOOST_TEST(failure(AT_FDCWD, magic.c_str(), O_PATH, Resolve::NoMagicLinks) == ELOOP);
  // /proc/self is an ordinary symlink: followed.
  const Fd self{openat2(AT_FDCWD, "/proc/self/status", O_RDONLY, Resolve::NoMagicLinks)};
  BOOST_TEST(self.fd >= 0);
  // And the links of the tree too.
  const Fd through{openat2(t.root.fd, "to_sub/file", O_PATH, Resolve::NoMagicLinks)};
  BOOST_TEST(same_object(through.fd, t.dir / "root/sub/file"));
}

BOOST_AUTO_TEST_CASE(beneath_refuses_every_way_out_of_the_directory) {
  if (!available()) return;
  const Tree t;
  BOOST_TEST(failure(t.sub.fd, "../sub/file", O_PATH, Resolve::Beneath) == EXDEV);
  BOOST_TEST(failure(t.sub.fd, "/etc", O_PATH, Resolve::Beneath) == EXDEV);
  BOOST_TEST(failure(t.root.fd, "absolute", O_PATH, Resolve::Beneath) == EXDEV);
  const Fd inside{openat2(t.root.fd, "to_sub/file", O_PATH, Resolve::Beneath)};
  BOOST_TEST(same_object(inside.fd, t.dir / "root/sub/file"));
}

BOOST_AUTO_TEST_CASE(in_root_takes_the_directory_for_slash) {
  if (!available()) return;
  const Tree t;
  const Fd absolute{openat2(t.root.fd, "absolute/file", O_PATH, Resolve::InRoot)};
  BOOST_TEST(same_object(absolute.fd, t.dir / "root/sub/file"));
  const Fd up{openat2(t.root.fd, "../../../sub/file", O_PATH, Resolve::InRoot)};
  BOOST_TEST(same_object(up.fd, t.dir / "root/sub/file"));
  BOOST_TEST(failure(t.root.fd, "absolute/file", O_PATH, Resolve::InRoot | Resolve::NoSymlinks) ==
             ELOOP);
}

BOOST_AUTO_TEST_CASE(every_descriptor_is_close_on_exec_and_created_with_the_mode_given) {
  if (!available()) return;
  const Tree t;
  const Fd opened{openat2(t.root.fd, "sub", O_PATH, Resolve::NoSymlinks)};
  BOOST_TEST_REQUIRE(opened.fd >= 0);
  BOOST_TEST((fcntl(opened.fd, F_GETFD) & FD_CLOEXEC) != 0);
  const mode_t old = umask(0);
  const Fd made{openat2(t.sub.fd, "made", O_WRONLY | O_CREAT | O_EXCL, Resolve::NoSymlinks, 0604)};
  umask(old);
  struct stat st;
  BOOST_TEST_REQUIRE(made.fd >= 0);
  BOOST_TEST((fstat(made.fd, &st) == 0 && (st.st_mode & 07777) == 0604));
}

BOOST_AUTO_TEST_SUITE_END()
