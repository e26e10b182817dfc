#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "deny_root_runs.hpp"
#include "sandbox_fixture.hpp"

// Red team round 9b (docs/redteam-2026-12.md): a deny root nothing masks, reached through a
// symlink on the host, and the plan's watches of it.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// `link` -> `target`, made by the test (root) on the host.
void make_link(const std::string& target, const std::string& link) {
  BOOST_REQUIRE_MESSAGE(symlink(target.c_str(), link.c_str()) == 0, "symlink " << link);
}

// A directory below `base` whose absolute name is `length` bytes long, holding `link` ->
// `target` (made by root, 0755), built and removed one component at a time through
// descriptors: a lookup of the whole name fails, and so would the fixture's removal.
class DeepDirectory {
 public:
  DeepDirectory(const std::string& base, size_t length, const std::string& target) : path_(base) {
    fds_.push_back(open(base.c_str(), O_PATH | O_DIRECTORY));
    while (path_.size() < length) {
      const std::string name(std::min<size_t>(200, length - path_.size() - 1), 'd');
      BOOST_REQUIRE(mkdirat(fds_.back(), name.c_str(), 0755) == 0);
      names_.push_back(name);
      fds_.push_back(openat(fds_.back(), name.c_str(), O_PATH | O_DIRECTORY));
      BOOST_REQUIRE(fds_.back() >= 0);
      path_ += "/" + name;
    }
    BOOST_REQUIRE(symlinkat(target.c_str(), fds_.back(), "link") == 0);
  }
  ~DeepDirectory() {
    unlinkat(fds_.back(), "link", 0);
    for (size_t i = names_.size(); i-- > 0;) unlinkat(fds_[i], names_[i].c_str(), AT_REMOVEDIR);
    for (int fd : fds_) close(fd);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> names_;
  std::vector<int> fds_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack17b)

// A17B-1: ~/.aws is a symlink to a directory that does not exist yet (a volume mounted
// later, a dotfiles checkout not made). The deny root ~/.aws/credentials resolves through
// nothing, is masked by nothing, and the run watched only the link's own name: the host
// creating the link's target (`mkdir -p`, `aws configure`) showed the secret to the sandbox.
BOOST_DATA_TEST_CASE(a_deny_root_behind_a_dangling_symlink_created_during_the_run_is_never_read,
                     bdata::make(kCallers), caller) {
  using namespace std::chrono_literals;
  Sandbox box(caller);
  const std::string target = box.base() + "/target", secret = target + "/aws/credentials";
  box.make_dir(box.base() + "/h");
  make_link(target + "/aws", box.base() + "/h/.aws");
  RunSpec spec;
  spec.options = {"--policy", deny_policy(box, box.base() + "/h/.aws/credentials")};
  spec.command = {"/bin/sh", "-c",
                  "touch started; i=0; while [ ! -e " + box.base() +
                      "/go ] && [ $i -lt 200 ]; do "
                      "sleep 0.02; i=$((i+1)); done; sleep 0.5; cat " +
                      box.base() + "/h/.aws/credentials; exit 0"};
  Running running = box.start(spec);
  BOOST_REQUIRE(wait_until([&] { return exists(box.ws("started")); }, 10s));
  BOOST_REQUIRE(mkdir(target.c_str(), 0755) == 0 && mkdir((target + "/aws").c_str(), 0755) == 0);
  std::ofstream(secret) << "AKIA-EXAMPLE\n";
  std::ofstream(box.base() + "/go").put('\n');
  const RunResult r = box.finish(running);
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(r.out.find("AKIA") == std::string::npos, "the sandbox read it: " << r.describe());
  BOOST_TEST(r.err.find("did not exist when the run started, was created") != std::string::npos,
             r.describe());
}

// A17B-1: a deny root that is itself a dangling symlink refused every run, saying it "was
// created on the host after the run was verified". Nothing was: it runs, watched.
BOOST_DATA_TEST_CASE(a_deny_root_that_is_a_dangling_symlink_does_not_refuse_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.base() + "/h");
  make_link(box.base() + "/nowhere", box.base() + "/h/.gcloud");
  RunSpec spec;
  spec.options = {"--policy", deny_policy(box, box.base() + "/h/.gcloud")};
  spec.command = {"/bin/sh", "-c", "echo ran"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out == "ran\n", r.describe());
}

// A17B-2: a plan is made while ~/.aws is a dangling symlink; before an executor runs it,
// the host re-points the link at a directory that holds credentials. `run` resolves at run
// time and masks them; run_plan.py watched the old target's name only, and ran.
BOOST_DATA_TEST_CASE(an_executor_refuses_a_plan_whose_deny_root_now_exists_elsewhere,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string link = box.base() + "/h/.aws", deny = link + "/credentials";
  box.make_dir(box.base() + "/h");
  box.write_file(box.base() + "/other/credentials", "AKIA-EXAMPLE\n");
  make_link(box.base() + "/target/aws", link);
  const std::string policy = deny_policy(box, deny);
  const std::vector<std::string> command = {"/bin/sh", "-c", "cat " + deny + "; true"};
  std::vector<std::string> plan_argv = {zpolicy_binary(), "plan", "--format", "json",
                                        "--policy",       policy, "--"};
  plan_argv.insert(plan_argv.end(), command.begin(), command.end());
  const RunResult planned = box.host_command(plan_argv);
  BOOST_REQUIRE_MESSAGE(planned.exit_code == 0, planned.describe());
  BOOST_REQUIRE(unlink(link.c_str()) == 0);
  make_link(box.base() + "/other", link);

  RunSpec spec;
  spec.launcher = {"/usr/bin/python3",
                   box.write_policy("run_plan.py", source_file("examples/python/run_plan.py")),
                   box.write_policy("plan.json", planned.out)};
  const RunResult executed = box.run(spec);
  RunSpec direct;
  direct.options = {"--policy", policy};
  direct.command = command;
  const RunResult ran = box.run(direct);
  BOOST_TEST(executed.exit_code == 125, executed.describe());
  BOOST_TEST(
      executed.err.find("was created on the host after the plan was made") != std::string::npos,
      executed.describe());
  // `run` resolves the policy when it starts: the deny root exists by then, and is masked.
  for (const RunResult* r : {&executed, &ran})
    BOOST_TEST(r->out.find("AKIA") == std::string::npos, "the sandbox read it: " << r->describe());
}

// A17B-3: the status-file check looked names up as absolute strings, and a lookup of
// PATH_MAX bytes or more saw nothing there; the kernel still opened the relative name. From
// a working directory of 4091 bytes (a deep build tree), `link/status.json` through a
// symlink into the workspace was accepted, and the command renamed its own status over it.
BOOST_DATA_TEST_CASE(a_status_file_named_from_a_deep_directory_is_checked_or_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const DeepDirectory deep(box.base(), 4091, box.workspace());
  RunSpec spec;
  spec.cwd = deep.path();
  spec.options = {"--workspace", box.workspace(), "--status-file", "link/status.json"};
  spec.command = {"/bin/sh", "-c",
                  "echo '{\"zpolicy_run_status\": 1, \"exit_code\": 0}' > forged && "
                  "mv forged status.json; exit 3"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.err.find("too long to check") != std::string::npos, r.describe());
  BOOST_TEST(!read_file(box.ws("status.json")).has_value(), "the command wrote the status");
}

// A17B-5: run_plan.py read the sandbox's mountinfo as UTF-8 text; in a workspace whose
// name is not UTF-8 every setup check of a tmpfs or proc mount raised, and the executor
// died with a traceback (exit 1), leaving the placeholders it made. `run` ran there.
BOOST_DATA_TEST_CASE(an_executor_runs_a_plan_in_a_workspace_whose_name_is_not_utf8,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string ws = box.ws("w\xff");
  box.make_dir(ws);
  const std::string before = snapshot(ws);
  const RunResult planned = box.host_command(
      {zpolicy_binary(), "plan", "--format", "json", "--workspace", ws, "--", "/bin/echo", "ran"});
  BOOST_REQUIRE_MESSAGE(planned.exit_code == 0, planned.describe());
  RunSpec spec;
  spec.cwd = ws;
  spec.launcher = {"/usr/bin/python3",
                   box.write_policy("run_plan.py", source_file("examples/python/run_plan.py")),
                   box.write_policy("plan.json", planned.out)};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out == "ran\n", r.describe());
  BOOST_TEST(snapshot(ws) == before, "placeholders left behind: " << r.describe());
}

// A17B-4: bwrap makes the sandbox's mounts slaves of those of the namespace it starts in,
// so a filesystem the host mounted during the run (a stick under a read root, an sshfs in
// the workspace) appeared in the sandbox with the host's flags: writable, and holding a
// deny root nothing masked. The run starts in a mount namespace made shared, as a host's
// is; root mounts two tmpfs there once the command has started. The sandbox must see
// neither: the read root stays read-only, the deny root absent, the workspace's directory
// its own. Through `run`, or through run_plan.py executing the plan (`private_mounts`).
void host_mounts_during_the_run(Caller caller, bool through_executor) {
  using namespace std::chrono_literals;
  Sandbox box(caller);
  const std::string mnt = box.base() + "/ro/mnt", sub = box.ws("sub");
  BOOST_REQUIRE(mkdir((box.base() + "/ro").c_str(), 0755) == 0 && mkdir(mnt.c_str(), 0755) == 0);
  box.make_dir(sub);
  const std::string wait_for = "i=0; while [ ! -e \"$W\" ] && [ $i -lt 400 ]; do sleep 0.02; "
                               "i=$((i+1)); done; ";
  const std::string mounter =
      "( W=" + box.ws("started") + "; " + wait_for + "mount -t tmpfs -o mode=0777 zp " + mnt +
      " && mkdir " + mnt + "/aws && echo AKIA-EXAMPLE > " + mnt + "/aws/credentials; " +
      "mount -t tmpfs -o mode=0777 zp " + sub + "; touch " + box.base() + "/mounted; W=" +
      box.ws("done") + "; " + wait_for + "ls -A " + mnt + " > " + box.base() + "/seen-ro; ls -A " +
      sub + " > " + box.base() + "/seen-ws ) & exec \"$@\"";
  const std::string policy = deny_policy(box, mnt + "/aws");
  const std::vector<std::string> command = {
      "/bin/sh", "-c",
      "touch started; W=" + box.base() + "/mounted; " + wait_for +
          "[ -e \"$W\" ] && echo saw-mounted; echo pwn > " + mnt + "/x && echo wrote-ro; cat " +
          mnt + "/aws/credentials; echo pwn > " + sub + "/x; stat -f -c 'sub:%T' " + sub +
          "; touch done; exit 0"};
  RunSpec spec;
  spec.root_prefix = {"/usr/bin/unshare", "-m", "--propagation", "shared", "/bin/sh", "-c",
                      mounter, "sh"};
  run_through(box, through_executor, policy, command, spec);
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_REQUIRE_MESSAGE(r.out.find("saw-mounted") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("wrote-ro") == std::string::npos, "wrote on the host's new mount: " << r.describe());
  BOOST_TEST(r.out.find("AKIA") == std::string::npos, "read the deny root: " << r.describe());
  BOOST_TEST(r.out.find("sub:tmpfs") == std::string::npos, r.describe());
  BOOST_REQUIRE(wait_until([&] { return exists(box.base() + "/seen-ws"); }, 10s));
  BOOST_TEST(read_file(box.base() + "/seen-ro").value_or("?") == "aws\n");
  BOOST_TEST(read_file(box.base() + "/seen-ws").value_or("?") == "");
}

BOOST_DATA_TEST_CASE(a_filesystem_the_host_mounts_during_the_run_never_reaches_the_sandbox,
                     bdata::make(kCallers), caller) {
  host_mounts_during_the_run(caller, false);
}

BOOST_DATA_TEST_CASE(an_executor_keeps_the_hosts_later_mounts_out_of_the_sandbox,
                     bdata::make(kCallers), caller) {
  host_mounts_during_the_run(caller, true);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
