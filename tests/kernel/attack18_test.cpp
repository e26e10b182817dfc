#include <sys/stat.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <string>

#include "sandbox_fixture.hpp"

// Attack 18 (docs/redteam-2026-12.md "Attack 18 (attack18)"): the run path's changes of
// session 18 (the special and privileged files walk, the global git config, the stop on
// ^Z) attacked together. Each case is a finding's reproduction, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack18)

namespace {

// On the host, as the caller: a session leader with a pseudo-terminal (a shell), `zpolicy
// run` its foreground job, whose command turns echo and canonical mode off; ^Z (SIGTSTP to
// the job) at 1 s, SIGCONT 0.7 s later. Prints the terminal's echo and icanon flags while
// running, stopped, continued and after the end.
const std::string kTerminalJob = R"(
import fcntl, os, signal, sys, termios, time
z = sys.argv[1]
master, slave = os.openpty()
rd, wr = os.pipe()
leader = os.fork()
if leader == 0:
    os.setsid(); fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    job = os.fork()
    if job == 0:
        os.setpgid(0, 0)
        signal.signal(signal.SIGTTOU, signal.SIG_IGN); os.tcsetpgrp(slave, os.getpgrp())
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        for fd in (0, 1, 2): os.dup2(slave, fd)
        os.execv(z, [z, "run", "--", "sh", "-c", "stty -echo -icanon; sleep 3"])
    os.write(wr, str(job).encode()); os.close(wr)
    while True:
        _, st = os.waitpid(job, os.WUNTRACED | os.WCONTINUED)
        if os.WIFEXITED(st) or os.WIFSIGNALED(st): os._exit(os.waitstatus_to_exitcode(st) & 255)
os.close(wr)
job = int(os.read(rd, 32))
def flags(when):
    a = termios.tcgetattr(slave)
    print(when, "echo" if a[3] & termios.ECHO else "-echo", "icanon" if a[3] & termios.ICANON else "-icanon")
time.sleep(1.0); flags("running")
os.killpg(job, signal.SIGTSTP); time.sleep(0.7); flags("stopped")
os.killpg(job, signal.SIGCONT); time.sleep(0.5); flags("continued")
_, st = os.waitpid(leader, 0)
flags("ended"); print("exit", os.waitstatus_to_exitcode(st))
)";

}  // namespace

// A18-6: R18-3 stops the command with SIGSTOP (its own ^Z handler never runs), and zpolicy
// stopped with the terminal as the command had set it: the prompt the user got back after
// ^Z had echo off. A job's terminal settings are the caller's while it is stopped and the
// command's again once it is continued in the foreground.
BOOST_DATA_TEST_CASE(a_stopped_run_gives_the_terminal_back_as_the_caller_had_it,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult r = box.host_command({"/usr/bin/python3", "-c", kTerminalJob, zpolicy_binary()});
  BOOST_TEST(r.out.find("running -echo -icanon") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("stopped echo icanon") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("continued -echo -icanon") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("ended echo icanon") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("exit 0") != std::string::npos, r.describe());
}

// A18-1: since R18-6 the caller's ~/.gitconfig is read before every git directory's own
// files, and each reading counted toward the bound over every git directory (16 MiB): a
// 1 MB global config (a dotfiles collection of aliases, under git's and zpolicy's 1 MiB a
// file) refused every workspace with 16 repositories, a 64 KB one every workspace with
// 256, as if the workspace's configs were too large. The caller's files are counted once.
BOOST_DATA_TEST_CASE(a_large_global_git_config_does_not_refuse_a_workspace_of_repositories,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  std::string config = "[alias]\n";
  for (int i = 0; config.size() < 1000 * 1024; ++i)
    config += "\ta" + std::to_string(i) + " = log --graph --decorate --all -n 50\n";
  box.write_file(box.home() + "/.gitconfig", config);
  box.host_command({"/usr/bin/git", "init", "-q", box.workspace()});
  for (int i = 0; i < 20; ++i)
    box.host_command({"/usr/bin/git", "init", "-q", box.ws("pkg" + std::to_string(i))});
  RunSpec spec;
  spec.command = {"/bin/true"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  // Its entries are applied again for each git directory (16 ms a MB each time): past
  // 64 MiB applied, as here for 70 repositories more, the run is refused.
  for (int i = 20; i < 70; ++i)
    box.host_command({"/usr/bin/git", "init", "-q", box.ws("pkg" + std::to_string(i))});
  const RunResult many = box.run(spec);
  BOOST_TEST(many.exit_code == 2, many.describe());
  BOOST_TEST(many.err.find("applies to each of the run's git directories") != std::string::npos,
             many.describe());
  // The bound over every git directory still holds for what a sandbox can grow: a
  // repository's own config (here 20 of 1 MB each), with a small global config.
  box.write_file(box.home() + "/.gitconfig", "[alias]\n\tst = status\n");
  for (int i = 0; i < 20; ++i)
    box.write_file(box.ws("pkg" + std::to_string(i) + "/.git/config"), config);
  const RunResult big = box.run(spec);
  BOOST_TEST(big.exit_code == 2, big.describe());
  BOOST_TEST(big.err.find("bytes read in all") != std::string::npos, big.describe());
}

// A18-2: the protected files' hard-link aliases were added to the protected paths while
// pointers to the rules that named them (elements of the same vector) were still read: a
// reallocation freed them, and the next run read freed memory. A sandbox plants it in one
// run (a nested repository and 256 names of a file in its .git): the next run died
// (SIGSEGV in `plan`, std::bad_alloc, exit 125, in `run`), every run after it too.
BOOST_DATA_TEST_CASE(many_aliases_of_a_nested_repositorys_file_leave_the_next_run_working,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.host_command({"/usr/bin/git", "init", "-q", box.workspace()});
  const RunResult plant = box.sh(
      "git init -q nested && for i in $(seq 1 256); do ln nested/.git/description a$i || "
      "exit 1; done");
  BOOST_TEST_REQUIRE(plant.out.find(kDoneMarker) != std::string::npos, plant.describe());
  const std::string before = read_file(box.ws("nested/.git/description")).value_or("");
  const RunResult r = box.sh("echo planted > a1; echo planted > a256; true");
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  BOOST_TEST(r.err.find("Read-only file system") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("nested/.git/description")).value_or("") == before);
}

// A18-5: the names of a privileged program (R18-1) are bound read-only as privileged files,
// but they were counted again toward the 256 hard-link aliases of protected files: 200
// names of one setuid program (a chroot copied with `cp -al`) and 100 of a nested
// repository's file refused the run, "more than 256 names … share their inode with
// protected files", for 100 mounts.
BOOST_DATA_TEST_CASE(a_privileged_programs_names_do_not_count_as_aliases, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.host_command({"/usr/bin/git", "init", "-q", box.workspace()});
  box.host_command({"/usr/bin/git", "init", "-q", box.ws("nested")});
  box.write_file(box.ws("su"), "#!/bin/sh\nexit 0\n", 0755);
  box.host_command({"/bin/chmod", "4755", box.ws("su")});
  box.host_command({"/bin/sh", "-c",
                    "cd \"$0\" && for i in $(seq 1 199); do ln su su$i || exit 1; done && "
                    "for i in $(seq 1 100); do ln nested/.git/description a$i || exit 1; done",
                    box.workspace()});
  const RunResult r = box.sh("echo planted > su7; echo planted > a7; true");
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("su")).value_or("") == "#!/bin/sh\nexit 0\n");
  BOOST_TEST(read_file(box.ws("a7")).value_or("") != "planted\n");
}

// A18-3: a caller whose $HOME is a directory it cannot search (`setpriv` and `runuser`
// keep root's HOME=/root) had every run refused since R18-6: "git reads '/root/.gitconfig'
// as config, and zpolicy cannot read it". git, run by that caller, skips the file with a
// warning, and the sandbox cannot change it; zpolicy skips it too.
BOOST_DATA_TEST_CASE(a_global_git_config_the_caller_cannot_read_does_not_refuse_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string others = box.base() + "/others-home";
  BOOST_TEST_REQUIRE(mkdir(others.c_str(), 0700) == 0);
  std::ofstream(others + "/.gitconfig") << "[core]\n\thooksPath = .githooks\n";
  box.host_command({"/usr/bin/git", "init", "-q", box.workspace()});
  RunSpec spec;
  spec.extra_env = {"HOME=" + others};
  spec.command = {"/bin/true"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  // Root reads it, and what it names in the workspace is protected (R18-6).
  if (caller == Caller::Root) {
    spec.command = {"/bin/sh", "-c", "mkdir .githooks"};
    const RunResult w = box.run(spec);
    BOOST_TEST(w.exit_code != 0, w.describe());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
