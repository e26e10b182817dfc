#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
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

// The signal masks of `pid`'s threads other than `pid` itself, by thread id (SigBlk in
// /proc/PID/task/TID/status).
std::vector<std::pair<std::string, unsigned long long>> other_threads_masks(pid_t pid) {
  std::vector<std::pair<std::string, unsigned long long>> out;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
    const std::string tid = t.path().filename();
    if (tid == std::to_string(pid)) continue;
    std::ifstream status(t.path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.starts_with("SigBlk:"))
        out.emplace_back(tid, std::stoull(line.substr(7), nullptr, 16));
  }
  return out;
}

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

// A28D-6 (attack 28d): a signal while the policy is resolved, before the signals are held,
// ends zpolicy by its default action (resolution stays interruptible: a walk of a large or
// stalled tree must not hold off ^C). The status file was not opened yet, so the previous
// run's document (`"exit_code": 0`) stood for this run's. It is emptied before resolution
// now: signalled at its look at the workspace, zpolicy dies of the signal and leaves the
// file empty; the command did not run.
BOOST_DATA_TEST_CASE(a_signal_while_the_policy_resolves_leaves_no_earlier_status,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string out = box.base() + "/out";
  box.make_dir(out);
  const std::string status = out + "/status.json";
  for (const char* sig : {"SIGTERM", "SIGINT", "SIGHUP"}) {
    box.write_file(status, kPreviousStatus);
    RunSpec spec;
    spec.root_prefix = signal_at("openat", box.workspace(), sig, 1);
    spec.options = {"--status-file", status};
    spec.command = {"/bin/sh", "-c", "echo ran > ran"};
    const RunResult r = box.run(spec);
    const std::string what = std::string(sig) + ": " + r.describe();
    BOOST_TEST(r.exit_code > 128, what);
    BOOST_TEST(read_file(status).value_or("<missing>") == "", what);
    BOOST_TEST(!exists(box.ws("ran")), what);
  }
}

// A status file named where an earlier sandbox could have made the name a hard link or a
// symlink to a file of the caller's: in this run's workspace (the run refuses such a
// status file), or outside every writable root of this run (an earlier run's workspace).
// Neither the early emptying (A28D-6's fix) nor the status document may reach the file it
// names: on c652582 a hard link's refusal document replaced `~/.bashrc`, in both places.
BOOST_DATA_TEST_CASE(a_status_file_linked_to_another_file_is_refused_and_that_file_kept,
                     bdata::make(kCallers), caller) {
  struct Link {
    const char* what;
    bool in_workspace, hard;
  };
  for (const Link& l : {Link{"hard link in the workspace", true, true},
                        Link{"symlink in the workspace", true, false},
                        Link{"hard link outside the writable roots", false, true}}) {
    Sandbox box(caller);
    const std::string victim = box.home() + "/.bashrc", out = box.base() + "/out";
    box.make_dir(out);
    box.write_file(victim, "export KEEP=1\n");
    const std::string status = l.in_workspace ? box.ws("status.json") : out + "/status.json";
    box.host_command({"/bin/ln", l.hard ? "-T" : "-sT", victim, status});
    RunSpec spec;
    spec.options = {"--status-file", status};
    spec.command = {"/bin/sh", "-c", "echo ran > ran"};
    const RunResult r = box.run(spec);
    const std::string what = std::string(l.what) + ": " + r.describe();
    BOOST_TEST(r.exit_code == 2, what);
    BOOST_TEST(read_file(victim).value_or("<missing>") == "export KEEP=1\n", what);
    BOOST_TEST(!exists(box.ws("ran")), what);
  }
}

// A28D-2 (attack 28d, of A28B-1's fix): the network proxy's listener threads were made in
// supervise() under the caller's signal mask and lived until the run's end, so a SIGTERM
// after supervise() had put the default action back went to one of them and ended zpolicy
// there: the status file empty, copied output lost. Every thread of zpolicy but its main
// one now takes no SIGINT, SIGTERM or SIGHUP: looked at during a run under an allow list,
// whose proxy listens, each blocks all three.
BOOST_DATA_TEST_CASE(no_thread_but_the_main_one_takes_a_signal, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.options = {"--policy", box.write_policy("allow.yaml",
                                               "zpolicy: 1\nmode: workspace-write\nnetwork:\n  "
                                               "allow: [example.org:443]\n")};
  spec.command = {"/bin/sh", "-c", std::string("sleep 2; echo '") + kDoneMarker + "'"};
  Running running = box.start(spec);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto masks = other_threads_masks(running.pid);
  const RunResult r = box.finish(running);
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(!masks.empty(), "no thread beside the main one: the proxy is not listening");
  const unsigned long long must =
      (1ull << (SIGINT - 1)) | (1ull << (SIGTERM - 1)) | (1ull << (SIGHUP - 1));
  for (const auto& [tid, blocked] : masks)
    BOOST_TEST((blocked & must) == must, "thread " << tid << " SigBlk " << std::hex << blocked);
}

// A28D-4 (attack 28d): the first SIGINT, SIGTERM or SIGHUP after the release is forwarded
// to every process of the sandbox but its init; one that came before the init had forked
// the command reached nobody, counted as forwarded, and the command ran to its end (exit 0,
// its file written). strace holds the init's fork of the command 0.5 s while root, on the
// host, sends zpolicy the signal. It is kept until the command exists, which it ends.
BOOST_DATA_TEST_CASE(a_signal_before_the_init_forks_the_command_reaches_the_command,
                     bdata::make(kCallers), caller) {
  BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
  // glibc's fork(): clone(CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD).
  const std::string bwrap_init_forks = "held " + std::to_string(SYS_clone) + " '0x1200011 ' bwrap";
  for (const char* sig : {"TERM", "INT", "HUP"}) {
    Sandbox box(caller);
    // $$ is the shell that execs strace, whose child zpolicy is (and this subshell).
    const std::string signaller =
        std::string(kShellOwnProcesses) + "( i=0; until " + bwrap_init_forks +
        " || [ $i -ge 500 ]; do sleep 0.01; i=$((i+1)); done; "
        "for s in /proc/[0-9]*/status; do grep -qs \"^PPid:\t$$\\$\" $s && "
        "grep -qs \"^Name:\tzpolicy\\$\" $s && d=${s%/status} && kill -" +
        sig + " ${d#/proc/}; done ) >/dev/null 2>&1 & exec \"$@\"";
    RunSpec spec;
    spec.root_prefix = {"/bin/sh", "-c", signaller, "sh"};
    for (auto& a : strace_holding("clone", 500000)) spec.root_prefix.push_back(std::move(a));
    spec.command = {"/bin/sh", "-c", "sleep 1; echo ran > ran"};
    const RunResult r = box.run(spec);
    const std::string what = std::string("SIG") + sig + ": " + r.describe();
    BOOST_TEST(!exists(box.ws("ran")), "the command ran to its end: " << what);
    BOOST_TEST(r.exit_code != 0, what);
    // The status is the interruption's: no hint that the sandbox refused the command.
    BOOST_TEST(r.err.find("zpolicy explain") == std::string::npos, what);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
