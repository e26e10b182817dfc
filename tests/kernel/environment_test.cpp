#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Invariant 9: the caller's environment is dropped but for the policy's `keep` list,
// then the policy's `set` values are added.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_environment)

BOOST_DATA_TEST_CASE(only_kept_variables_reach_the_command, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  // A leading empty line makes every variable start after a '\n'.
  spec.command = {"/bin/sh", "-c", std::string("echo; env; echo '") + kDoneMarker + "'"};
  spec.extra_env = {"AWS_SECRET_ACCESS_KEY=aws-secret-4721", "LC_ALL=C.UTF-8",
                    "LD_LIBRARY_PATH=/nonexistent-4722"};
  auto r = box.run(spec);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  for (const char* gone :
       {kSecretValue, kSecretName, "aws-secret-4721", "AWS_SECRET_ACCESS_KEY", "/nonexistent-4722"})
    BOOST_TEST(r.out.find(gone) == std::string::npos, gone << " leaked\n" << r.describe());
  for (const std::string& kept :
       {std::string("PATH=") + kHostPath, "HOME=" + box.home(), std::string("LANG=C"),
        std::string("LC_ALL=C.UTF-8"), std::string("USER=zpolicy-kt")})
    BOOST_TEST(r.out.find("\n" + kept + "\n") != std::string::npos, kept << " missing\n"
                                                                         << r.describe());
}

BOOST_DATA_TEST_CASE(the_policy_keep_list_and_set_map_apply, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy("env.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  write: ["${WORKSPACE}"]
network: none
process:
  env:
    keep: [PATH, HOME]
    set: {GREETING: "hello world", HOME: /policy-home}
)");
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c", std::string("env; echo '") + kDoneMarker + "'"};
  auto r = box.run(spec);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("GREETING=hello world\n") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find(std::string("PATH=") + kHostPath + "\n") != std::string::npos,
             r.describe());
  BOOST_TEST(r.out.find("HOME=/policy-home\n") != std::string::npos, r.describe());
  for (const char* gone : {"LANG=", "USER=", kSecretName})
    BOOST_TEST(r.out.find(gone) == std::string::npos, gone << " not dropped\n" << r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
