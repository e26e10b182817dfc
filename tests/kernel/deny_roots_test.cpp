#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "sandbox_fixture.hpp"

// Invariant 3: nothing under a deny root can be read or listed: a directory and a file
// in HOME (read-only roots), and an existing and a missing directory inside the
// writable workspace, which must also stay uncreatable.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

const char* kPolicy = R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/"]
  write: ["${WORKSPACE}"]
  protect: [.git, .env, .env.local, node_modules, .next, data/agent-sessions]
  deny: ["${HOME}/.ssh", "${HOME}/.netrc", "${WORKSPACE}/secrets", "${WORKSPACE}/.aws"]
network: none
)";

std::vector<std::string> files_containing(const std::string& root, const std::string& needle) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    if (e.is_regular_file() && read_file(e.path()).value_or("").find(needle) != std::string::npos)
      found.push_back(e.path());
  return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_deny_roots)

BOOST_DATA_TEST_CASE(deny_roots_cannot_be_read_listed_or_created, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy("deny.yaml", kPolicy);
  const std::string H = box.home();
  box.write_file(H + "/.ssh/id_ed25519", "SSH-KEY-MATERIAL-4711\n", 0600);
  box.write_file(H + "/.ssh/config", "Host leaked-hostname-4712\n", 0600);
  // Names the script never mentions: seeing them means the directory was listed.
  box.write_file(H + "/.ssh/hidden-name-4715", "x\n", 0600);
  box.write_file(box.ws("secrets/hidden-name-4716"), "x\n", 0600);
  box.write_file(H + "/.netrc", "machine x password NETRC-PASSWORD-4713\n", 0600);
  box.write_file(box.ws("secrets/api.key"), "API-KEY-4714\n", 0600);
  box.write_file(H + "/visible.txt", "visible-home-file\n");
  const std::string before_secrets = snapshot(box.ws("secrets"));
  auto r = box.sh("cat " + H +
                      "/visible.txt\n"
                      "cat " +
                      H + "/.ssh/id_ed25519; ls -la " + H + "/.ssh; cat " + H +
                      "/.ssh/config\n"
                      "find " +
                      H + " -type f 2>&1; grep -r 47 " + H + " 2>&1; cat " + H +
                      "/.netrc\n"
                      "cp -r " +
                      H + "/.ssh stolen-ssh; tar cf - " + H +
                      " 2>/dev/null | strings | grep 47\n"
                      "cat secrets/api.key; ls -la secrets; cp -r secrets stolen-secrets\n"
                      "/usr/bin/python3 -c 'import os\n"
                      "for p in [\"" +
                      H +
                      "/.ssh\", \"secrets\"]:\n"
                      "  try: print(p, os.listdir(p))\n"
                      "  except OSError as e: print(p, e.strerror)\n"
                      "for p in [\"" +
                      H +
                      "/.ssh/id_ed25519\", \"secrets/api.key\"]:\n"
                      "  try: print(p, open(p).read())\n"
                      "  except OSError as e: print(p, e.strerror)'\n"
                      "echo x > secrets/new; mkdir -p .aws/x; echo x > .aws/credentials; rm -rf "
                      "secrets; mv secrets s2\n"
                      "echo evil >> " +
                      H + "/.ssh/authorized_keys",
                  {"--policy", policy});
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  // The home directory itself stays readable: the deny is what hides the secrets.
  BOOST_TEST(r.out.find("visible-home-file") != std::string::npos, r.describe());
  for (const char* secret : {"SSH-KEY-MATERIAL-4711", "leaked-hostname-4712", "NETRC-PASSWORD-4713",
                             "API-KEY-4714", "hidden-name-4715", "hidden-name-4716"}) {
    BOOST_TEST(r.out.find(secret) == std::string::npos, secret << " leaked:\n" << r.describe());
    BOOST_TEST(r.err.find(secret) == std::string::npos, secret << " leaked:\n" << r.describe());
  }
  // Nothing copied out, nothing created or removed.
  BOOST_TEST(files_containing(box.workspace(), "SSH-KEY-MATERIAL-4711").empty());
  BOOST_TEST(files_containing(box.workspace(), "API-KEY-4714") ==
             std::vector<std::string>{box.ws("secrets/api.key")});
  BOOST_TEST(snapshot(box.ws("secrets")) == before_secrets);
  BOOST_TEST(!exists(box.ws(".aws")));
  BOOST_TEST(!exists(box.ws("s2")));
  BOOST_TEST(!exists(H + "/.ssh/authorized_keys"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
