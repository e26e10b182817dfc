#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "sandbox_fixture.hpp"

// Red team round 13b (docs/redteam-2026-12.md): the round-13 changes attacked. A13B-1: a
// zpolicy holding privileges its caller lacks refused confined runs only.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack13b)

// A13B-1: a set-user-id and set-group-id copy (of zpolicy, and of an embedder of the C
// API), owned by the other caller: nobody runs root's, root runs nobody's. A danger-full-
// access run was let through and kept the effective user (nobody got a root shell);
// `inspect` printed a file only the owner may read; `run --status-file` and `compile
// --out` wrote into a directory only the owner may write. Each now refuses before doing
// anything (exit 125), and the plain binary still runs the same policy.
BOOST_DATA_TEST_CASE(a_set_id_zpolicy_does_nothing_on_its_callers_word, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const uid_t owner = caller == Caller::Root ? 65534 : 0;
  auto set_id_copy = [&](const std::string& from, const std::string& to) {
    std::filesystem::copy_file(from, to);
    BOOST_TEST_REQUIRE(::chown(to.c_str(), owner, owner) == 0);
    BOOST_TEST_REQUIRE(::chmod(to.c_str(), 06755) == 0);
  };
  const std::string copy = box.base() + "/zpolicy-set-id";
  const std::string embedder = box.base() + "/embedder-set-id";
  set_id_copy(zpolicy_binary(), copy);
  set_id_copy(embedder_binary(), embedder);
  const std::string full = box.write_policy("full.yaml", "zpolicy: 1\nmode: danger-full-access\n");
  const std::string confined =
      box.write_policy("ws.yaml",
                       "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n  write: "
                       "[\"${WORKSPACE}\"]\n");
  // The owner's own: a file only it may read, a directory only it may write.
  const std::string secret = box.base() + "/owner-secret";
  const std::string owned = box.base() + "/owner-only";
  {
    std::ofstream(secret) << "A13B-OWNER-SECRET\n";
    std::filesystem::create_directory(owned);
  }
  for (const auto& p : {secret, owned}) BOOST_TEST_REQUIRE(::chown(p.c_str(), owner, owner) == 0);
  BOOST_TEST_REQUIRE(::chmod(secret.c_str(), 0600) == 0);
  BOOST_TEST_REQUIRE(::chmod(owned.c_str(), 0700) == 0);

  RunSpec spec;
  spec.launcher = {
      "/bin/sh",
      "-c",
      "\"$0\" run --policy \"$1\" -- /bin/echo A13B-RAN-UNCONFINED; echo \"run-full=$?\"\n"
      "\"$0\" inspect \"$2\"; echo \"inspect=$?\"\n"
      "\"$0\" run --status-file \"$3/status.json\" -- /bin/true; echo \"status-file=$?\"\n"
      "\"$0\" compile \"$4\" --target linux --out \"$3/out\"; echo \"compile=$?\"\n"
      "\"$5\" --policy \"$1\" -- /bin/echo A13B-RAN-EMBEDDED; echo \"embedded=$?\"\n"
      "\"$6\" run --policy \"$1\" -- /bin/echo A13B-CONTROL; echo \"control=$?\"",
      copy,
      full,
      secret,
      owned,
      confined,
      embedder,
      zpolicy_binary()};
  const RunResult r = box.run(spec);
  std::filesystem::remove(copy);
  std::filesystem::remove(embedder);
  BOOST_TEST_REQUIRE(r.out.find("A13B-CONTROL\ncontrol=0") != std::string::npos, r.describe());
  for (const char* refused :
       {"run-full=125", "inspect=125", "status-file=125", "compile=125", "embedded=125"})
    BOOST_TEST(r.out.find(refused) != std::string::npos, refused << "\n" << r.describe());
  BOOST_TEST(r.out.find("A13B-RAN") == std::string::npos, "a command ran: " << r.describe());
  BOOST_TEST((r.out + r.err).find("A13B-OWNER-SECRET") == std::string::npos, r.describe());
  BOOST_TEST(!std::filesystem::exists(owned + "/status.json"), r.describe());
  BOOST_TEST(!std::filesystem::exists(owned + "/out"), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
