// The machine-readable run status (docs/run.md "Run status"): `run --status-file` and
// run_status_json, what a harness reads to tell a network refusal from a failure.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <sstream>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "zpolicy/json.hpp"
#include "zpolicy/zpolicy.hpp"

namespace {

// No sandbox: these tests are about the status, not the confinement.
const char* kUnconfined = "zpolicy: 1\nmode: danger-full-access\n";

zpolicy::test::ProcessResult zpolicy_cli(const zpolicy::test::TempDir& dir,
                                         const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ZPOLICY_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return zpolicy::test::run_process(argv, dir.str(), dir.str());
}

// The status file as python's strict JSON parser reads it, one field per line.
std::string parsed(const zpolicy::test::TempDir& dir, const std::string& name) {
  auto r = zpolicy::test::run_process(
      {"/usr/bin/python3", "-c",
       "import json,sys\n"
       "s=json.loads(open(sys.argv[1],'rb').read().decode('utf-8','strict'))\n"
       "print(sorted(s), s['zpolicy_run_status'], s['exit_code'], s['network_refusals_omitted'],\n"
       "      s['nothing_ran'])\n"
       "for r in s['network_refusals']: print(r['host'], r['port'], r['reason'], r['detail'])\n",
       dir.str() + "/" + name},
      dir.str(), dir.str());
  BOOST_TEST(r.exit_code == 0, r.err);
  return r.out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_status)

BOOST_AUTO_TEST_CASE(the_status_json_is_strict_json_with_each_refusal_in_order) {
  zpolicy::RunStatus status;
  status.exit_code = 7;
  status.network_refusals_omitted = 9;
  status.network_refusals = {
      {"198.51.100.7", 8080, "not-listed", "198.51.100.7:8080 is not listed"},
      {"odd\"name\x01\xff", 443, "not-listed", "quoted \"and\" \\ escaped"},
      {"pypi.org", 22, "port-not-listed", "pypi.org is listed for ports 80, 443 only"}};
  zpolicy::test::TempDir dir;
  dir.write("status.json", zpolicy::run_status_json(status));
  BOOST_TEST(parsed(dir, "status.json") ==
             "['exit_code', 'network_refusals', 'network_refusals_omitted', 'nothing_ran', "
             "'zpolicy_run_status'] 1 7 9 True\n"
             "198.51.100.7 8080 not-listed 198.51.100.7:8080 is not listed\n"
             "odd\"name\x01\xef\xbf\xbd 443 not-listed quoted \"and\" \\ escaped\n"
             "pypi.org 22 port-not-listed pypi.org is listed for ports 80, 443 only\n");
  BOOST_TEST(zpolicy::run_status_json({}) ==
             "{\"zpolicy_run_status\": 1, \"exit_code\": 0, \"network_refusals\": [], "
             "\"network_refusals_omitted\": 0, \"nothing_ran\": true}\n");
}

BOOST_AUTO_TEST_CASE(run_writes_the_command_status_to_the_status_file) {
  zpolicy::test::TempDir dir;
  const std::string policy = dir.write("unconfined.yaml", kUnconfined);
  auto r = zpolicy_cli(dir, {"run", "--policy", policy, "--status-file", dir.str() + "/status.json",
                             "--", "/bin/sh", "-c", "exit 3"});
  BOOST_TEST(r.exit_code == 3, r.err);
  BOOST_TEST(parsed(dir, "status.json") ==
             "['exit_code', 'network_refusals', 'network_refusals_omitted', 'nothing_ran', "
             "'zpolicy_run_status'] 1 3 0 False\n");
  // A refusal before anything starts is a status too.
  r = zpolicy_cli(dir, {"run", "--mode", "sideways", "--status-file", dir.str() + "/status.json",
                        "--", "/bin/true"});
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(parsed(dir, "status.json") ==
             "['exit_code', 'network_refusals', 'network_refusals_omitted', 'nothing_ran', "
             "'zpolicy_run_status'] 1 2 0 True\n");
}

// An embedder gets the same document through the API, without a zpolicy process.
BOOST_AUTO_TEST_CASE(run_with_status_writes_the_status_file_of_the_request) {
  zpolicy::test::TempDir dir;
  zpolicy::RunRequest request;
  request.policy_file = dir.write("unconfined.yaml", kUnconfined);
  request.status_file = dir / "status.json";
  request.command = {"/bin/sh", "-c", "exit 5"};
  std::ostringstream messages;
  BOOST_TEST(zpolicy::run_with_status(request, messages).exit_code == 5, messages.str());
  BOOST_TEST(parsed(dir, "status.json") ==
             "['exit_code', 'network_refusals', 'network_refusals_omitted', 'nothing_ran', "
             "'zpolicy_run_status'] 1 5 0 False\n");
  request.mode = "sideways";
  BOOST_TEST(zpolicy::run_with_status(request, messages).exit_code == 2, messages.str());
  BOOST_TEST(parsed(dir, "status.json") ==
             "['exit_code', 'network_refusals', 'network_refusals_omitted', 'nothing_ran', "
             "'zpolicy_run_status'] 1 2 0 True\n");
}

BOOST_AUTO_TEST_CASE(a_status_file_that_cannot_be_written_refuses_before_the_command_starts) {
  zpolicy::test::TempDir dir;
  const std::string policy = dir.write("unconfined.yaml", kUnconfined);
  dir.write("target", "kept");
  std::filesystem::create_symlink(dir / "target", dir / "link");
  for (const std::string name : {"link", "missing/status.json"}) {
    auto r = zpolicy_cli(dir, {"run", "--policy", policy, "--status-file", dir / name, "--",
                               "/usr/bin/touch", dir / "ran"});
    BOOST_TEST(r.exit_code == 2, name);
    BOOST_TEST(
        r.err.find("zpolicy: run: cannot write --status-file '" + (dir / name) + "': ") == 0u,
        r.err);
    BOOST_TEST(r.err.ends_with("; nothing ran\n"), r.err);
    BOOST_TEST(!std::filesystem::exists(dir / "ran"), name);
  }
  BOOST_TEST(std::filesystem::read_symlink(dir / "link") == dir / "target");
}

BOOST_AUTO_TEST_SUITE_END()
