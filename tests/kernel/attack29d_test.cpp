#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 29d (docs/redteam-2026-12.md "Attack 29d"): session 29's fixes attacked.
// Each case runs as root and as uid 65534 and is judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// What the host's reader of `fifo` (opened before the run, so that the sandbox's open for
// writing neither blocks nor fails for want of one) finds in it after the run.
std::string drained_fifo(int fd) {
  std::string got;
  char buf[256];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  return got;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack29d)

// A29D-1: A29C-3 denied a denied regular file's other names in the workspace, but not a
// FIFO's: a FIFO of a deny root hard-linked into the workspace is bound read-only there as a
// special file, and a read-only mount does not stop a FIFO's open for writing. On lead29
// 151f995c the command's `echo INJECTED > ctl-link` reached the host process reading the denied
// FIFO (a program's control channel kept in a denied directory), exit 0. Now the name is
// denied as the FIFO's deny root: the open fails and the host's reader gets nothing, while the
// rest of the workspace stays writable.
BOOST_DATA_TEST_CASE(a_denied_fifos_other_name_in_the_workspace_is_denied, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string vault = box.base() + "/vault";
  box.make_dir(vault);
  box.make_dir(box.ws("secrets"));
  box.host_command({"/usr/bin/mkfifo", "-m", "0600", vault + "/ctl"});
  box.host_command({"/usr/bin/mkfifo", "-m", "0600", box.ws("secrets/ctl")});
  box.host_command({"/bin/ln", vault + "/ctl", box.ws("ctl-link")});
  box.host_command({"/bin/ln", box.ws("secrets/ctl"), box.ws("docs-ctl")});
  const int outside = open((vault + "/ctl").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  const int inside = open(box.ws("secrets/ctl").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  BOOST_REQUIRE(outside >= 0);
  BOOST_REQUIRE(inside >= 0);
  RunSpec spec;
  spec.options = {"--policy", box.write_policy("deny.yaml",
                                               "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                               "  read: [\"/\"]\n  write: [\"${WORKSPACE}\"]\n"
                                               "  deny: [\"${WORKSPACE}/secrets\", \"" +
                                                   vault + "\"]\n")};
  const RunResult r = run_script(
      box, spec, "echo INJECTED > ctl-link; echo INJECTED > docs-ctl; echo mine > other");
  const std::string got_outside = drained_fifo(outside), got_inside = drained_fifo(inside);
  close(outside);
  close(inside);
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(got_outside.empty(),
             "the denied FIFO outside got '" << got_outside << "'; " << r.describe());
  BOOST_TEST(got_inside.empty(),
             "the denied FIFO in the workspace got '" << got_inside << "'; " << r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A29D-2: A29C-2 completed R18-7's list of command variables with ten; more of the class were
// still passed by. `COMPILER_PATH`: on lead29 151f995c, with `COMPILER_PATH=WS/tools` exported,
// the run went on, exit 0, the command wrote `tools/as`, and the host's `gcc -c x.c` in that
// shell ran it (by hand); `GCC_EXEC_PREFIX` is gcc's other search for its programs, and the
// command variables below are run by rsync and cvs for a remote, by bash's `fc`, `kubectl
// edit`, gh, hg, svn, make's rules, cargo, the JVM build tools and npm; the files and trees
// after them are read as code by cmake (`CMAKE_TOOLCHAIN_FILE=WS/tc.cmake`: the command's
// `execute_process` ran at the host's next `cmake` of another project), npm
// (`NPM_CONFIG_USERCONFIG=WS/.npmrc`: its `script-shell` ran at the next `npm run`), psql,
// irb, R, go and gradle. Now each refuses the run (ZP003, exit 3) before
// anything runs; the command's file is not there.
BOOST_DATA_TEST_CASE(exported_tool_paths_naming_the_workspace_are_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  for (const std::string variable : {"COMPILER_PATH",
                                     "GCC_EXEC_PREFIX",
                                     "RSYNC_RSH",
                                     "CVS_RSH",
                                     "FCEDIT",
                                     "KUBE_EDITOR",
                                     "GH_EDITOR",
                                     "GH_PAGER",
                                     "GH_BROWSER",
                                     "HGEDITOR",
                                     "SVN_EDITOR",
                                     "AS",
                                     "AR",
                                     "LD",
                                     "CPP",
                                     "FC",
                                     "CARGO_BUILD_RUSTC",
                                     "CARGO_BUILD_RUSTDOC",
                                     "RUSTDOC",
                                     "MAVEN_OPTS",
                                     "GRADLE_OPTS",
                                     "SBT_OPTS",
                                     "ANT_OPTS",
                                     "NPM_CONFIG_SCRIPT_SHELL",
                                     "npm_config_script_shell",
                                     "NPM_CONFIG_NODE_OPTIONS",
                                     "npm_config_node_options",
                                     "CMAKE_PREFIX_PATH",
                                     "CMAKE_TOOLCHAIN_FILE",
                                     "NPM_CONFIG_USERCONFIG",
                                     "npm_config_userconfig",
                                     "NPM_CONFIG_GLOBALCONFIG",
                                     "npm_config_globalconfig",
                                     "PSQLRC",
                                     "IRBRC",
                                     "R_PROFILE_USER",
                                     "GOENV",
                                     "GRADLE_USER_HOME"}) {
    const bool directory = variable == "COMPILER_PATH" || variable == "GCC_EXEC_PREFIX";
    const std::string program =
        directory ? box.ws("tools-" + variable + "/as") : box.ws("tools/" + variable);
    RunSpec spec;
    spec.extra_env = {
        variable + "=" +
        (directory ? box.ws("tools-" + variable) + (variable == "GCC_EXEC_PREFIX" ? "/" : "")
                   : program)};
    const std::string dir = program.substr(0, program.rfind('/'));
    const RunResult r =
        run_script(box, spec,
                   "mkdir -p '" + dir + "' && printf '#!/bin/sh\\necho PWNED\\n' > '" + program +
                       "' && chmod +x '" + program + "'");
    BOOST_TEST(r.exit_code == 3, variable + ": " + r.describe());
    BOOST_TEST(r.err.find("ZP003") != std::string::npos, variable + ": " + r.describe());
    BOOST_TEST(!exists(program), variable + ": " + r.describe());
  }
  // Control: a search path outside every writable root runs.
  RunSpec spec;
  spec.extra_env = {"COMPILER_PATH=" + box.base() + "/tools"};
  const RunResult r = run_script(box, spec, "echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A29D-3: without a sandbox init (an unconfined run: `mode: danger-full-access`) zpolicy
// signalled the command through its process group alone. A command that moved to another
// group (setpgid into its parent's) left that group empty: the timeout's SIGTERM and SIGKILL
// met ESRCH, and on lead29 151f995c the command ran on past its `--timeout 1s` to its end and
// wrote its file (A28D-4's re-send then sent the SIGTERM again every millisecond, 1 349 kill()
// calls in a second by strace). Now the child itself is signalled once its group is gone:
// the run times out (124) and the command never writes.
BOOST_DATA_TEST_CASE(an_unconfined_command_out_of_its_process_group_meets_its_timeout,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.options = {"--policy",
                  box.write_policy("full.yaml", "zpolicy: 1\nmode: danger-full-access\n"),
                  "--timeout", "1s"};
  spec.command = {"/usr/bin/python3", "-c",
                  "import os, time\n"
                  "os.setpgid(0, os.getpgid(os.getppid()))\n"
                  "time.sleep(4)\n"
                  "open('late', 'w').write('ran')\n"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 124, r.describe());
  BOOST_TEST(!exists(box.ws("late")), r.describe());
}

// A29D-3 for a stop: the same command, out of its process group, and a SIGTSTP to zpolicy
// (`kill -TSTP`, a job control that signals the run alone). On lead29 151f995c the stop went to
// the empty group (ESRCH) and the command ran on, never in state T, while the run was held.
// Now it is stopped with the run, and continued with it. zpolicy runs as a job of its own
// (a process group whose parent is in another group of the session): in an orphaned group,
// which the kernel does not stop, zpolicy does not stop either, and lets the command go on
// (docs/run.md "Job control"), which is what CI's detached runs gave this case.
BOOST_DATA_TEST_CASE(an_unconfined_command_out_of_its_process_group_is_stopped_with_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string seen = box.base() + "/seen";
  const std::string script = python_own_job(R"(
what, command = 'the command did not start', 0
for _ in range(1000):
    try:
        with open(os.path.join(workspace, 'pid')) as f:
            command = int(f.read())
        break
    except (OSError, ValueError):
        time.sleep(0.01)
if command:
    os.kill(job, signal.SIGTSTP)
    what = 'zpolicy did not stop'
    for _ in range(500):
        if state(job) in 'tT':
            what = 'the command ran on while the run was stopped'
            for _ in range(100):
                if state(command) in 'tT':
                    what = 'stopped'
                    break
                time.sleep(0.01)
            break
        time.sleep(0.01)
    os.kill(command, signal.SIGKILL)
    os.kill(job, signal.SIGCONT)
)");
  RunSpec spec;
  spec.root_prefix = {"/usr/bin/python3", "-c", script, box.workspace(), seen};
  spec.options = {"--policy",
                  box.write_policy("full.yaml", "zpolicy: 1\nmode: danger-full-access\n"),
                  "--timeout", "20s"};
  spec.command = {"/usr/bin/python3", "-c",
                  "import os, time\n"
                  "os.setpgid(0, os.getpgid(os.getppid()))\n"
                  "open('pid.tmp', 'w').write(str(os.getpid()))\n"
                  "os.rename('pid.tmp', 'pid')\n"
                  "time.sleep(15)\n"};
  const RunResult r = box.run(spec);
  BOOST_TEST(read_file(seen).value_or("(the script wrote nothing)") == "stopped", r.describe());
}

// A29D-4: ZP003 judged a relative entry of the caller's $PATH (or of another search path)
// from the directory the run starts in (A12-3), but the caller's shell takes it from every
// directory it runs a command in. Started from outside the workspace (`--workspace ws` from
// its parent), `PATH=bin:…` was judged as PARENT/bin; on lead29 151f995c the command wrote
// ws/bin/ls, exit 0, and the caller's next `ls` in ws ran it (by hand); `PYTHONPATH=src` the
// same with a `sitecustomize.py`. Now a relative entry refuses the run wherever it starts
// (ZP003, exit 3); the command's files are not there. Control: absolute entries run.
BOOST_DATA_TEST_CASE(a_relative_search_path_entry_is_refused_from_outside_the_workspace,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const std::string variable : {"PATH", "PYTHONPATH"}) {
    RunSpec spec;
    spec.cwd = box.base();
    spec.options = {"--workspace", box.workspace()};
    spec.extra_env = {variable == "PATH" ? std::string("PATH=bin:") + kHostPath
                                         : std::string("PYTHONPATH=bin")};
    const RunResult r = run_script(box, spec,
                                   "mkdir -p bin && echo planted > bin/ls && "
                                   "echo planted > bin/sitecustomize.py");
    BOOST_TEST(r.exit_code == 3, variable + ": " + r.describe());
    BOOST_TEST(r.err.find("ZP003") != std::string::npos, variable + ": " + r.describe());
    BOOST_TEST(!exists(box.ws("bin")), variable + ": " + r.describe());
  }
  RunSpec spec;
  spec.cwd = box.base();
  spec.options = {"--workspace", box.workspace()};
  spec.extra_env = {"PYTHONPATH=" + box.base() + "/lib"};
  const RunResult r = run_script(box, spec, "echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
