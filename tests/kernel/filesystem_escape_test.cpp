#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Invariant 1: nothing outside the writable roots can be written, created, renamed,
// deleted or chmod'ed, even by a command that is root on the host. Read-only mode: not
// even the workspace.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_filesystem_escape)

BOOST_DATA_TEST_CASE(nothing_outside_the_writable_roots_changes, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string out = box.base() + "/outside";
  box.write_file(out + "/keep.txt", "original\n");
  box.write_file(out + "/sub/inner.txt", "inner\n");
  box.write_file(box.home() + "/.ssh/authorized_keys", "ssh-ed25519 AAAA host\n", 0600);
  box.write_file(box.ws("inside.txt"), "in the workspace\n");
  const std::string token = unique_token();
  const std::string host_tmp = "/tmp/zpolicy-kt-" + token;
  box.remove_later(host_tmp);
  box.write_file(host_tmp + "/f", "host tmp\n");
  const std::string before_out = snapshot(out), before_home = snapshot(box.home()),
                    before_tmp = snapshot(host_tmp);

  const std::string O = out, H = box.home();
  auto r = box.sh("echo clobbered > " + O + "/keep.txt; echo appended >> " + O +
                  "/keep.txt\n"
                  "truncate -s 0 " +
                  O + "/keep.txt; touch " + O + "/keep.txt " + O +
                  "/new.txt\n"
                  "mkdir " +
                  O + "/newdir; mv " + O + "/keep.txt " + O + "/moved.txt; mv " + O + "/sub " + O +
                  "/sub2\n"
                  "rm -f " +
                  O + "/keep.txt; rm -rf " + O + "/sub; chmod 0777 " + O + "/keep.txt " + O +
                  "/sub\n"
                  "chown 1:1 " +
                  O + "/keep.txt; ln -s /etc/passwd " + O + "/link; ln " + O + "/keep.txt " + O +
                  "/hard\n"
                  "mv inside.txt " +
                  O + "/; cp inside.txt " + O + "/copied.txt; mv " + O +
                  "/sub/inner.txt .\n"
                  "echo x > " +
                  H + "/.profile; touch " + H + "/.bashrc; mkdir " + H +
                  "/.config\n"
                  "echo evil >> " +
                  H + "/.ssh/authorized_keys; rm -rf " + H + "/.ssh; chmod 0777 " + H +
                  "\n"
                  "mv " +
                  box.workspace() + " " + box.base() + "/ws2; rmdir " + box.base() +
                  "\n"
                  "echo x > /zpolicy-kt-" +
                  token + "; echo x > /etc/zpolicy-kt-" + token +
                  "\n"
                  "echo x > /var/tmp/zpolicy-kt-" +
                  token + "; echo x > /usr/zpolicy-kt-" + token +
                  "\n"
                  "cat " +
                  host_tmp + "/f; mkdir -p " + host_tmp + " && echo overwritten > " + host_tmp +
                  "/f && touch " + host_tmp +
                  "/new\n"
                  "echo control > control.txt\n");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());

  BOOST_TEST(snapshot(out) == before_out);
  BOOST_TEST(snapshot(box.home()) == before_home);
  BOOST_TEST(snapshot(host_tmp) == before_tmp);
  BOOST_TEST(r.out.find("host tmp") == std::string::npos, "the host's /tmp is visible inside");
  for (const auto& p :
       {"/zpolicy-kt-", "/etc/zpolicy-kt-", "/var/tmp/zpolicy-kt-", "/usr/zpolicy-kt-"})
    BOOST_TEST(!exists(p + token), p + token);
  BOOST_TEST(!exists(box.base() + "/ws2"));
  BOOST_TEST(read_file(box.ws("inside.txt")).value_or("<missing>") == "in the workspace\n");
  // The same script could write where it is allowed to: the refusals above are the
  // sandbox's, not a broken script's.
  BOOST_TEST(read_file(box.ws("control.txt")).value_or("<missing>") == "control\n");
}

BOOST_DATA_TEST_CASE(read_only_mode_cannot_write_the_workspace, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("existing.txt"), "original\n");
  box.write_file(box.ws("dir/f"), "f\n");
  const std::string before = snapshot(box.workspace());
  auto r = box.sh(
      "cat existing.txt; echo x > new.txt; echo x > existing.txt; echo y >> existing.txt\n"
      "rm -f existing.txt; mv dir dir2; mkdir newdir; chmod 0777 existing.txt dir\n"
      "ln -s existing.txt link; ln existing.txt hard; touch existing.txt",
      {"--mode", "read-only"});
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("original\n") == 0, r.describe());  // reading still works
  BOOST_TEST(snapshot(box.workspace()) == before);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
