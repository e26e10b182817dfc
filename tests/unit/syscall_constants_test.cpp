// The argument constants seccomp.txt names (ir/syscall_constants.hpp) are the kernel's:
// each name has the value the system headers give it, and reads back to it.
#include "ir/syscall_constants.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>

using namespace zpolicy;

BOOST_AUTO_TEST_SUITE(syscall_constants)

BOOST_AUTO_TEST_CASE(every_name_has_the_headers_value) {
  const std::pair<std::string_view, uint64_t> headers[] = {
      {"AF_UNIX", AF_UNIX},
      {"AF_INET", AF_INET},
      {"AF_INET6", AF_INET6},
      {"AF_NETLINK", AF_NETLINK},
      {"AF_PACKET", AF_PACKET},
      {"AF_VSOCK", AF_VSOCK},
      {"SOCK_STREAM", SOCK_STREAM},
      {"SOCK_DGRAM", SOCK_DGRAM},
      {"SOCK_RAW", SOCK_RAW},
      {"SOCK_SEQPACKET", SOCK_SEQPACKET},
      {"TIOCSTI", TIOCSTI},
      {"TIOCLINUX", TIOCLINUX},
      {"FIOASYNC", FIOASYNC},
      {"F_SETFL", F_SETFL},
      {"F_SETSIG", F_SETSIG},
      {"O_ASYNC", O_ASYNC},
      {"CLONE_NEWNS", CLONE_NEWNS},
      {"CLONE_NEWCGROUP", CLONE_NEWCGROUP},
      {"CLONE_NEWUTS", CLONE_NEWUTS},
      {"CLONE_NEWIPC", CLONE_NEWIPC},
      {"CLONE_NEWUSER", CLONE_NEWUSER},
      {"CLONE_NEWPID", CLONE_NEWPID},
      {"CLONE_NEWNET", CLONE_NEWNET},
      {"S_ISUID", S_ISUID},
      {"S_ISGID", S_ISGID},
      {"AUDIT_ARCH_X86_64", AUDIT_ARCH_X86_64},
      {"AUDIT_ARCH_I386", AUDIT_ARCH_I386},
  };
  for (const auto& [name, value] : headers) BOOST_TEST((ir::constant_value(name) == value), name);
  BOOST_TEST(!ir::constant_value("TIOCSTI2").has_value());
  BOOST_TEST(!ir::constant_value("ioctl").has_value());
}

BOOST_AUTO_TEST_CASE(values_are_named_by_their_argument) {
  BOOST_TEST((ir::constant_words("socket", 0, AF_UNIX) == "AF_UNIX"));
  BOOST_TEST((ir::constant_words("socketpair", 1, SOCK_STREAM) == "SOCK_STREAM"));
  BOOST_TEST((ir::constant_words("ioctl", 1, TIOCSTI) == "TIOCSTI"));
  BOOST_TEST((ir::constant_words("fcntl", 2, O_ASYNC | O_NONBLOCK) == "O_ASYNC|0x800"));
  BOOST_TEST((ir::constant_words("openat", 3, S_ISUID | S_ISGID) == "S_ISUID|S_ISGID"));
  BOOST_TEST((ir::constant_words("clone", 0, CLONE_NEWUSER | 0x11) == "CLONE_NEWUSER|0x11"));
  // A value the argument has no name for, an argument with no names, another call.
  BOOST_TEST(!ir::constant_words("socket", 0, 99).has_value());
  BOOST_TEST(!ir::constant_words("ioctl", 0, TIOCSTI).has_value());
  BOOST_TEST(!ir::constant_words("read", 1, 1).has_value());
  BOOST_TEST(!ir::constant_words("clone", 0, 0x11).has_value());
}

// The one table names the arguments too, for the words of `diff` and `explain`.
BOOST_AUTO_TEST_CASE(arguments_are_named_as_in_the_man_pages) {
  BOOST_TEST(ir::argument_constants("socket", 0).name == "domain");
  BOOST_TEST(ir::argument_constants("socketpair", 2).name == "protocol");
  BOOST_TEST(ir::argument_constants("socketpair", 2).constants.empty());
  BOOST_TEST(ir::argument_constants("ioctl", 1).name == "request");
  BOOST_TEST(ir::argument_constants("clone", 0).name == "flags");
  BOOST_TEST(ir::argument_constants("sendto", 4).name == "dest_addr");
  BOOST_TEST(ir::argument_constants("openat", 3).name == "mode");
  BOOST_TEST(ir::argument_constants("openat", 3).flags);
  BOOST_TEST(ir::argument_constants("read", 0).name.empty());
}

BOOST_AUTO_TEST_SUITE_END()
