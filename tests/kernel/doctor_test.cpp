#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// `zpolicy doctor` on this host, where the sandbox works: every check is reported, the
// verdict is the probe's, and the JSON form carries the same checks.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {
const std::vector<std::string> kCheckIds{
    "platform",        "kernel",        "bwrap",        "user-namespaces", "container",
    "procfs",          "seccomp",       "openat2",      "no-new-privs",    "landlock",
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

// In a pid namespace whose /proc is its parent's (`unshare -pf` without --mount-proc) every
// pid the runner and bwrap look up there names another process: bwrap cannot start, and the
// runner used to wait 30 s for a setup that never came. It refuses at once, with the typed
// reason, and `doctor` names the cause and the fix.
BOOST_DATA_TEST_CASE(a_pid_namespace_with_its_parents_procfs_is_refused_before_anything_runs,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.root_prefix = {"/usr/bin/unshare", "--pid", "--fork"};
  spec.command = {"/bin/sh", "-c", "touch ran"};
  spec.limit = std::chrono::seconds(10);
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 4, r.describe());
  BOOST_TEST(r.err.find("foreign-procfs") != std::string::npos, r.describe());
  BOOST_TEST(access(box.ws("ran").c_str(), F_OK) != 0, "the command ran: " << r.describe());

  const std::vector<std::string> unshare =
      caller == Caller::Root ? std::vector<std::string>{"/usr/bin/unshare", "--pid", "--fork"}
                             : std::vector<std::string>{"/usr/bin/unshare", "--user",
                                                        "--map-current-user", "--pid", "--fork"};
  std::vector<std::string> doctor = unshare;
  doctor.insert(doctor.end(), {"/bin/sh", "-c", "\"$0\" doctor; echo status=$?", zpolicy_binary()});
  const RunResult d = box.host_command(doctor);
  BOOST_TEST(d.out.find("failed\tprocfs: /proc/self is process ") != std::string::npos, d.out);
  BOOST_TEST(d.out.find("--mount-proc") != std::string::npos, d.out);
  BOOST_TEST(d.out.find("status=4\n") != std::string::npos, d.out);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace zpolicy::tests::kernel
