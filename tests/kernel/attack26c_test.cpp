#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 26c (docs/redteam-2026-12.md "Attack 26c"): session 26's fixes (A26-*,
// A26B-*) attacked again. Each case runs as root and as uid 65534 and is judged from the
// host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack26c)

// A26C-1: A26-5's class, the files git *writes* by the caller's environment. git opens an
// absolute `$GIT_TRACE*` value (GIT_TRACE, GIT_TRACE2_EVENT, GIT_TRACE2_PERF, GIT_TRACE_PACKET
// ...) with O_APPEND|O_CREAT, through links. On merge26 93a1b20 none was read: with
// GIT_TRACE=WS/trace.log (missing) and GIT_TRACE2_PERF=WS/perf.log (a file) in the caller's
// shell, the command made both links to a file outside every writable root, exit 0, and the
// host's next git in that shell appended its trace to that file. Now each is protected
// wherever it lies (a placeholder where missing): the links cannot be made.
BOOST_DATA_TEST_CASE(git_trace_files_of_the_callers_environment_are_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.host_command({kGit, "init", "-q", box.workspace()});
  const std::string victim = box.base() + "/victim";
  box.write_file(victim, "precious\n");
  box.write_file(box.ws("perf.log"), "");
  RunSpec spec;
  spec.extra_env = {"GIT_TRACE=" + box.ws("trace.log"), "GIT_TRACE2_PERF=" + box.ws("perf.log")};
  const RunResult r = run_script(box, spec,
                                 "{ rm -f perf.log; ln -s '" + victim + "' trace.log && ln -s '" +
                                     victim + "' perf.log; } || exit 1");
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && GIT_TRACE=\"$1/trace.log\" GIT_TRACE2_PERF=\"$1/perf.log\" git "
                    "status >/dev/null 2>&1; true",
                    "sh", box.workspace()});
  BOOST_TEST(read_file(victim).value_or("<missing>") == "precious\n", r.describe());
}

// A26C-1's class in the caller's config (left by attack 26c, fixed in session 27): the
// `trace2.*Target` keys of `~/.gitconfig` name files every git of the caller's appends to,
// with or without a repository in the workspace. On main 35f8e04 the command made
// `normal.log` (a file) and `event.log` (missing) links to a file outside every writable
// root, exit 0, and the host's next `git status` appended its trace to it.
BOOST_DATA_TEST_CASE(git_trace_targets_of_the_global_config_are_protected, bdata::make(kCallers),
                     caller) {
  for (const bool repository : {true, false}) {
    Sandbox box(caller);
    const std::string other = box.base() + "/other";
    box.make_dir(other);
    box.host_command({kGit, "init", "-q", repository ? box.workspace() : other});
    const std::string victim = box.base() + "/victim";
    box.write_file(victim, "precious\n");
    box.write_file(box.ws("normal.log"), "");
    box.write_file(box.home() + "/.gitconfig",
                   "[trace2]\n\tnormalTarget = " + box.ws("normal.log") +
                       "\n\teventTarget = " + box.ws("event.log") + "\n\tperfTarget = 2\n");
    const RunResult r = box.sh("{ rm -f normal.log; ln -s '" + victim + "' normal.log && ln -s '" +
                               victim + "' event.log; } || exit 1");
    BOOST_TEST(r.exit_code != 0, r.describe());
    BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
    box.host_command({"/bin/sh", "-c", "cd \"$1\" && git status >/dev/null 2>&1; true", "sh",
                      repository ? box.workspace() : other});
    BOOST_TEST(read_file(victim).value_or("<missing>") == "precious\n",
               "repository: " << repository << "\n"
                              << r.describe());
  }
}

// The control: a trace to stderr or to a file outside every writable root changes nothing,
// and a run with a trace file of the workspace in its environment or its global config
// still runs git.
BOOST_DATA_TEST_CASE(a_run_with_git_traces_exported_runs, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.host_command({kGit, "init", "-q", box.workspace()});
  RunSpec spec;
  box.write_file(box.home() + "/.gitconfig",
                 "[trace2]\n\tnormalTarget = " + box.ws("normal.log") + "\n");
  spec.extra_env = {"GIT_TRACE=1", "GIT_TRACE2_EVENT=" + box.base() + "/event.log",
                    "GIT_TRACE_PACKET=" + box.ws("packet.log"), "GIT_TRACE2_BRIEF=true"};
  const RunResult r = run_script(box, spec, "git status >/dev/null && echo mine > file || exit 1");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("file")).value_or("<missing>") == "mine\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
