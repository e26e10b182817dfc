#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// Red team H17-10 (docs/redteam-2026-12.md): a host name that starts with "${" below the
// first component (a workspace below `/home/u/${proj}`, a nested repository
// `${WORKSPACE}/.git` from a quoting slip, Maven's `${project.basedir}`, or one a sandbox
// planted with `git init '${WORKSPACE}'`) refused every run in the workspace, exit 3: the
// analyzer read it as a symbolic root in a bound artifact. A bound artifact's paths are
// host paths, and such a name is a name: the runs run, and what the name holds stays
// protected. Observed from the host, as root and as uid 65534.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_dollar20)

namespace {

// `script`, then the done marker, in `cwd` (the run's workspace).
RunResult sh_in(const Sandbox& box, const std::string& cwd, const std::string& script,
                std::vector<std::string> options = {}) {
  RunSpec spec;
  spec.cwd = cwd;
  spec.options = std::move(options);
  spec.command = {"/bin/sh", "-c", script + "; echo " + std::string(kDoneMarker)};
  return box.run(spec);
}

// A repository's files a sandbox must not change.
void make_repository(const Sandbox& box, const std::string& dir) {
  box.make_dir(dir + "/.git/hooks");
  box.write_file(dir + "/.git/HEAD", "ref: refs/heads/main\n");
  box.write_file(dir + "/.git/config", "orig\n");
}

// Appends to `dir`/.git/config and plants a hook; prints what the shell says of each.
std::string tamper(const std::string& dir) {
  return "echo '[core] fsmonitor = evil' >> '" + dir + "/.git/config'; echo evil > '" + dir +
         "/.git/hooks/post-checkout'";
}

}  // namespace

// The workspace lies below names spelled like the policy's variables and like none.
BOOST_DATA_TEST_CASE(a_workspace_below_names_that_start_with_a_variable_runs, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string ws = box.ws("${HOME}/${x}/${WORKSPACE}");
  box.make_dir(ws);
  make_repository(box, ws);
  const RunResult r = sh_in(box, ws, "touch made 2>&1; " + tamper("."));
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(exists(ws + "/made"), r.describe());
  BOOST_TEST(r.err.find("Read-only file system") != std::string::npos, r.describe());
  BOOST_TEST(read_file(ws + "/.git/config").value_or("") == "orig\n", r.describe());
  BOOST_TEST(!exists(ws + "/.git/hooks/post-checkout"), r.describe());
}

// A nested repository `${WORKSPACE}/.git` (`mkdir '${WORKSPACE}'`, then `git init` in it)
// is protected as any other: EROFS, the host's files unchanged. Also run as an embedder
// runs its plan, through the C API.
BOOST_DATA_TEST_CASE(a_nested_repository_named_like_a_variable_stays_read_only,
                     bdata::make(kCallers) * bdata::make({false, true}), caller, embedded) {
  Sandbox box(caller);
  make_repository(box, box.ws("${WORKSPACE}"));
  make_repository(box, box.ws("a/${HOME}/b"));
  RunSpec spec;
  if (embedded) spec.launcher = {embedder_binary()};
  spec.command = {"/bin/sh", "-c",
                  "touch made; " + tamper("${WORKSPACE}") + "; " + tamper("a/${HOME}/b") +
                      "; echo " + std::string(kDoneMarker)};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(exists(box.ws("made")), r.describe());
  BOOST_TEST(r.err.find("Read-only file system") != std::string::npos, r.describe());
  for (const char* repo : {"${WORKSPACE}", "a/${HOME}/b"}) {
    BOOST_TEST(read_file(box.ws(repo) + "/.git/config").value_or("") == "orig\n", repo);
    BOOST_TEST(!exists(box.ws(repo) + "/.git/hooks/post-checkout"), repo);
  }
}

// Maven makes a directory `${project.basedir}` when a property is left unexpanded: a
// protected file below it (here the policy's `**/.env`), and a workspace that is such a
// directory, whose missing protected paths get placeholders.
BOOST_DATA_TEST_CASE(a_protected_file_below_a_maven_directory_stays_read_only,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("${project.basedir}/.env"), "TOKEN=orig\n");
  const std::string policy = box.write_policy(
      "dollar.yaml",
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
      "  write: [\"${WORKSPACE}\"]\n  protect: [.git, \"**/.env\"]\nnetwork: none\n");
  const RunResult r = sh_in(box, box.workspace(),
                            "touch made; echo TOKEN=evil >> '${project.basedir}/.env'; "
                            "rm -f '${project.basedir}/.env'",
                            {"--policy", policy});
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(exists(box.ws("made")), r.describe());
  BOOST_TEST(read_file(box.ws("${project.basedir}/.env")).value_or("") == "TOKEN=orig\n",
             r.describe());

  // The default policy in the Maven directory itself: `.env` exists, `.git` and
  // `.env.local` do not (placeholders keep them from being made; a placeholder may stay
  // while another run is live on the host, docs/run.md, so only its content is asked).
  const std::string inner = box.ws("${project.basedir}");
  const RunResult in = sh_in(
      box, inner, "touch made; echo TOKEN=evil >> .env; echo x > .env.local; mkdir -p .git/hooks");
  BOOST_TEST(in.completed(), in.describe());
  BOOST_TEST(exists(inner + "/made"), in.describe());
  BOOST_TEST(read_file(inner + "/.env").value_or("") == "TOKEN=orig\n", in.describe());
  BOOST_TEST(!std::filesystem::is_regular_file(inner + "/.env.local"), in.describe());
  BOOST_TEST(!exists(inner + "/.git/hooks"), in.describe());
}

// A sandbox that plants `git init '${WORKSPACE}'` blocked every later run (exit 3); the
// next run now runs, with the planted repository protected.
BOOST_DATA_TEST_CASE(a_repository_a_sandbox_plants_as_a_variable_blocks_no_later_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult planted =
      sh_in(box, box.workspace(), "git init -q '${WORKSPACE}' && echo planted");
  BOOST_TEST(planted.completed(), planted.describe());
  BOOST_TEST_REQUIRE(exists(box.ws("${WORKSPACE}/.git/config")), planted.describe());
  const std::string config = read_file(box.ws("${WORKSPACE}/.git/config")).value_or("");

  const RunResult next = sh_in(box, box.workspace(), "touch made; " + tamper("${WORKSPACE}"));
  BOOST_TEST(next.completed(), next.describe());
  BOOST_TEST(exists(box.ws("made")), next.describe());
  BOOST_TEST(read_file(box.ws("${WORKSPACE}/.git/config")).value_or("") == config, next.describe());
  BOOST_TEST(!exists(box.ws("${WORKSPACE}/.git/hooks/post-checkout")), next.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
