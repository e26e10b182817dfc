#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdio>

#include "sandbox_fixture.hpp"

// Invariant 6: no capability inside (even when root started it), no_new_privs set, no
// nested user namespace, and a setuid-root binary does not raise privileges.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_privileges)

BOOST_DATA_TEST_CASE(no_capabilities_and_no_new_privs, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  auto r = box.sh("grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  for (const char* line :
       {"CapInh:\t0000000000000000\n", "CapPrm:\t0000000000000000\n", "CapEff:\t0000000000000000\n",
        "CapBnd:\t0000000000000000\n", "CapAmb:\t0000000000000000\n", "NoNewPrivs:\t1\n"})
    BOOST_TEST(r.out.find(line) != std::string::npos, line << r.describe());
}

BOOST_DATA_TEST_CASE(nested_user_namespaces_are_refused, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  // The markers are assembled at run time so the script text itself never contains them.
  auto r = box.sh(
      "unshare -U sh -c 'echo nested-\"\"userns'; unshare -Ur sh -c 'echo nested-\"\"root'\n"
      "unshare -Urm sh -c 'echo nested-\"\"mount'\n"
      "/usr/bin/python3 -c 'import ctypes\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "if libc.unshare(0x10000000) == 0: print(\"nested-\" + \"unshare-call\")'");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("nested-") == std::string::npos, r.describe());
}

BOOST_DATA_TEST_CASE(setuid_root_binaries_are_inert, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  // Built on the host, then made setuid root outside the workspace.
  const std::string probe = box.base() + "/suid-probe";
  box.write_file(box.ws("probe.c"),
                 "#include <stdio.h>\n#include <unistd.h>\n"
                 "int main(void) { printf(\"euid=%d\\n\", (int)geteuid()); return 0; }\n");
  box.host_command({"/usr/bin/cc", "-o", "probe", "probe.c"});
  BOOST_TEST_REQUIRE(rename(box.ws("probe").c_str(), probe.c_str()) == 0);
  BOOST_TEST_REQUIRE(chown(probe.c_str(), 0, 0) == 0);
  BOOST_TEST_REQUIRE(chmod(probe.c_str(), 04755) == 0);
  // Control: on the host the bit works for the same caller.
  auto control = box.host_command({probe});
  BOOST_TEST_REQUIRE(control.out == "euid=0\n", control.describe());

  auto r = box.sh(probe + "; grep -E '^CapEff:' /proc/self/status");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("euid=" + std::to_string(uid_of(caller)) + "\n") == 0, r.describe());
  BOOST_TEST(r.out.find("CapEff:\t0000000000000000\n") != std::string::npos, r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
