#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// `zpolicy doctor` on this host, where the sandbox works: every check is reported, the
// verdict is the probe's, and the JSON form carries the same checks.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {
const std::vector<std::string> kCheckIds{"platform", "kernel", "bwrap", "user-namespaces",
                                         "container", "seccomp", "no-new-privs", "landlock",
                                         "state-directory", "host-run-lock", "sandbox-probe"};
}

BOOST_AUTO_TEST_SUITE(kernel_doctor)

BOOST_DATA_TEST_CASE(reports_every_check_and_a_usable_backend, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  auto text = box.host_command({zpolicy_binary(), "doctor"});
  for (const auto& id : kCheckIds)
    BOOST_TEST(text.out.find("\t" + id + ": ") != std::string::npos, id << "\n" << text.out);
  BOOST_TEST(text.out.find("ok\tsandbox-probe: ") != std::string::npos, text.out);
  BOOST_TEST(text.out.find("failed\t") == std::string::npos, text.out);
  BOOST_TEST(text.out.find("status: ") != std::string::npos, text.out);

  auto json = box.host_command({zpolicy_binary(), "doctor", "--format", "json"});
  BOOST_TEST(json.out.rfind("{\"backend\": \"linux backend: /usr/bin/bwrap\", \"usable\": true", 0) == 0,
             json.out);
  for (const auto& id : kCheckIds)
    BOOST_TEST(json.out.find("{\"id\": \"" + id + "\", \"status\": ") != std::string::npos, id);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace zpolicy::tests::kernel
