#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// Red team attack 28b (docs/redteam-2026-12.md "Attack 28b"): host tools that run what the
// sandbox wrote, odd workspaces, and the truth of the run's status. Each case runs as root
// and as uid 65534 and is judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// What the workspace holds, by name.
std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    out.insert(e.path().filename().string());
  return out;
}

// strace, as root before setpriv, delivering `sig` to zpolicy (no child is traced) on
// entering its `when`-th call `call` that names `path` (the workspace: by the directory
// descriptor of a placeholder's mkdirat; the status file: by its openat). The call itself
// goes on; a signal at its default ends zpolicy on the way back.
std::vector<std::string> signal_at(const std::string& call, const std::string& path,
                                   const std::string& sig, int when) {
  return {"/usr/bin/strace",
          "-qq",
          "-o",
          "/dev/null",
          "-P",
          path,
          "-e",
          "trace=" + call,
          "-e",
          "inject=" + call + ":signal=" + sig + ":when=" + std::to_string(when)};
}

// A previous run's document, left in the status file a harness reuses.
const std::string kPreviousStatus =
    "{\"zpolicy_run_status\": 1, \"exit_code\": 0, \"network_refusals\": [], "
    "\"network_refusals_omitted\": 0, \"nothing_ran\": false}\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack28b)

// A28B-1: `run` took SIGINT, SIGTERM and SIGHUP only from supervise() on; before, from the
// status file's truncation through the placeholders' creation, such a signal ended zpolicy
// by its default action: the status file was left empty (or, at its opening, with the
// previous run's document, which said exit 0), nothing said "nothing ran", and the
// placeholders made so far stayed in the workspace (`data`, and `.env`, made but not yet
// recorded, for good: `zpolicy cleanup` did not know it). Held until supervise() takes
// them, each is the interruption before the release it is documented to be: 128+N, the
// status says nothing ran, no placeholder is left, the command did not run.
BOOST_DATA_TEST_CASE(a_signal_while_the_run_sets_up_leaves_a_true_status_and_no_placeholders,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string out = box.base() + "/out";
  box.make_dir(out);
  const std::string status = out + "/status.json";
  const std::set<std::string> before = entries(box.workspace());
  struct Interruption {
    const char* name;
    int number;
    std::vector<std::string> prefix;
  };
  for (const Interruption& i :
       {Interruption{"SIGINT", SIGINT, signal_at("mkdirat", box.workspace(), "SIGINT", 2)},
        Interruption{"SIGTERM", SIGTERM, signal_at("mkdirat", box.workspace(), "SIGTERM", 2)},
        Interruption{"SIGHUP", SIGHUP, signal_at("mkdirat", box.workspace(), "SIGHUP", 2)},
        Interruption{"SIGTERM", SIGTERM, signal_at("openat", status, "SIGTERM", 1)}}) {
    box.write_file(status, kPreviousStatus);
    RunSpec spec;
    spec.root_prefix = i.prefix;
    spec.options = {"--status-file", status};
    spec.command = {"/bin/sh", "-c", "echo ran > ran"};
    const RunResult r = box.run(spec);
    const std::string what =
        std::string(i.name) + " at " + i.prefix[7] + " of " + i.prefix[5] + ": " + r.describe();
    const std::string code = std::to_string(128 + i.number);
    BOOST_TEST(r.exit_code == 128 + i.number, what);
    BOOST_TEST(r.err.find(std::string("interrupted by ") + i.name +
                          " before the command started; nothing ran") != std::string::npos,
               what);
    const std::string doc = read_file(status).value_or("");
    BOOST_TEST(doc.find("\"exit_code\": " + code) != std::string::npos, what + " status: " + doc);
    BOOST_TEST(doc.find("\"nothing_ran\": true") != std::string::npos, what + " status: " + doc);
    const std::set<std::string> after = entries(box.workspace());
    for (const auto& e : after)
      BOOST_TEST(before.count(e) == 1, what + ": left in the workspace: " + e);
  }
  // Control: the same run, not interrupted, runs its command and leaves only its file.
  box.write_file(status, kPreviousStatus);
  RunSpec spec;
  spec.options = {"--status-file", status};
  spec.command = {"/bin/sh", "-c", "echo ran > ran"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(read_file(box.ws("ran")).value_or("") == "ran\n", r.describe());
  const std::string doc = read_file(status).value_or("");
  BOOST_TEST(doc.find("\"nothing_ran\": false") != std::string::npos, doc);
  std::set<std::string> expected = before;
  expected.insert("ran");
  BOOST_TEST((entries(box.workspace()) == expected), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
