#include <boost/test/unit_test.hpp>
#include <string>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/expected_setup.hpp"

// What the runner must find in the sandbox before the command starts is read off the
// verified argv alone: the last operation at each destination that no later mount hides,
// with the read-only state a later --remount-ro gives it.
using namespace zpolicy::compiler;

namespace {

// `ops` are bwrap.args lines after the fixed lockdown options; binds by descriptor use
// the table `fds`.
std::string expected(const std::string& ops, const std::string& fds) {
  const std::string args =
      "--new-session\n--die-with-parent\n--unshare-user\n--unshare-ipc\n--unshare-pid\n"
      "--unshare-uts\n--unshare-cgroup-try\n--unshare-net\n--disable-userns\n--cap-drop\nALL\n" +
      ops + "--seccomp\n3\n";
  auto parsed = parse_bwrap_args(args, std::make_shared<PathTable>(), fds);
  BOOST_TEST_REQUIRE(parsed.has_value(), parsed.error().message);
  std::string out;
  for (const auto& e : expected_setup(*parsed)) {
    out += e.dest + " " + to_string(e.kind);
    if (e.source_fd) out += " fd " + std::to_string(*e.source_fd);
    if (!e.link_target.empty()) out += " -> " + e.link_target;
    out += e.read_only ? " ro" : "";
    out += " @" + std::to_string(e.line) + "\n";
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(expected_setup_of_an_argv)

BOOST_AUTO_TEST_CASE(every_visible_destination_in_order_with_its_object) {
  const std::string got = expected(
      "--ro-bind-fd\n5\n/\n--dev\n/dev\n--proc\n/proc\n--remount-ro\n/proc\n--tmpfs\n/tmp\n"
      "--bind-fd\n6\n/w\n--ro-bind-fd\n7\n/w/.git\n--ro-bind-fd\n8\n/w/secret.txt\n"
      "--perms\n000\n--tmpfs\n/w/secrets\n--remount-ro\n/w/secrets\n--symlink\nusr/lib64\n/lib64\n",
      "5 /\n6 /w\n7 /w/.git\n8 /dev/null\n");
  BOOST_TEST(got ==
             "/ bind fd 5 ro @12\n"
             "/dev dev @15\n"
             "/proc proc ro @17\n"
             "/tmp tmpfs @21\n"
             "/w bind fd 6 @23\n"
             "/w/.git bind fd 7 ro @26\n"
             "/w/secret.txt bind fd 8 ro @29\n"
             "/w/secrets tmpfs ro @34\n"
             "/lib64 symlink -> usr/lib64 @38\n");
}

BOOST_AUTO_TEST_CASE(a_later_mount_at_or_above_a_destination_hides_it) {
  // /tmp/x is bound, then /tmp covered by a tmpfs: nothing of the bind is left to find.
  // /w is bound twice: only the second counts.
  const std::string got = expected(
      "--ro-bind-fd\n5\n/tmp/x\n--tmpfs\n/tmp\n--ro-bind-fd\n6\n/w\n--bind-fd\n7\n/w\n",
      "5 /a\n6 /b\n7 /c\n");
  BOOST_TEST(got == "/tmp tmpfs @15\n/w bind fd 7 @20\n");
}

BOOST_AUTO_TEST_CASE(a_remount_applies_to_the_mount_it_follows_only) {
  // The remount-ro of /w comes before the second bind at /w, which stays writable.
  const std::string got = expected(
      "--bind-fd\n5\n/w\n--remount-ro\n/w\n--bind-fd\n6\n/w\n--tmpfs\n/t\n--remount-ro\n/t\n",
      "5 /a\n6 /b\n");
  BOOST_TEST(got == "/w bind fd 6 @17\n/t tmpfs ro @20\n");
}

BOOST_AUTO_TEST_CASE(a_bind_by_path_keeps_no_descriptor_so_it_cannot_be_checked) {
  const std::string got = expected("--ro-bind\n/usr\n/usr\n", "");
  BOOST_TEST(got == "/usr bind ro @12\n");
}

BOOST_AUTO_TEST_SUITE_END()
