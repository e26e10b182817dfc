// `zpolicy doctor`'s verdicts on the user-namespace switches: the typed reason and the
// exact fix for each way a distribution turns them off.
#include <boost/test/unit_test.hpp>

#include "runner/doctor.hpp"

using zpolicy::runner::HostCheck;
using zpolicy::runner::user_namespaces_check;

BOOST_AUTO_TEST_SUITE(runner_doctor)

BOOST_AUTO_TEST_CASE(enabled_namespaces_pass_and_name_every_switch_found) {
  auto c = user_namespaces_check({"15000", "1", "0", false});
  BOOST_TEST((c.status == HostCheck::Status::Ok));
  BOOST_TEST(c.value == "user.max_user_namespaces=15000, kernel.unprivileged_userns_clone=1, "
                        "kernel.apparmor_restrict_unprivileged_userns=0");
  BOOST_TEST(c.fix == "");
}

BOOST_AUTO_TEST_CASE(a_zero_namespace_limit_fails_for_everyone_with_the_sysctl_to_set) {
  for (bool root : {false, true}) {
    auto c = user_namespaces_check({"0", "", "", root});
    BOOST_TEST((c.status == HostCheck::Status::Failed));
    BOOST_TEST(c.reason == "user-namespaces-disabled");
    BOOST_TEST(c.fix.find("sysctl -w user.max_user_namespaces=15000") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(debian_switch_and_ubuntu_apparmor_restriction_fail_only_for_users) {
  auto debian = user_namespaces_check({"15000", "0", "", false});
  BOOST_TEST(debian.reason == "user-namespaces-disabled");
  BOOST_TEST(debian.fix.find("kernel.unprivileged_userns_clone=1") != std::string::npos);
  auto ubuntu = user_namespaces_check({"15000", "", "1", false});
  BOOST_TEST(ubuntu.reason == "apparmor-restriction");
  BOOST_TEST(ubuntu.fix.find("bwrap-userns-restrict") != std::string::npos);
  BOOST_TEST((user_namespaces_check({"15000", "0", "1", true}).status == HostCheck::Status::Ok));
}

BOOST_AUTO_TEST_SUITE_END()
