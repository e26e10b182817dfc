#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Review 23 (docs/redteam-2026-12.md "Review 23", A23R-3..): error paths of session 23's
// reading of git directories that took a failure for "nothing there", attacked with the
// real bwrap and kernel as root and as uid 65534 and observed from the host: after the
// run the host's own git (the submodule update or push that would run the sandbox's
// hook) runs, and the hook's marker must not appear.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_review23b)

namespace {

RunResult run(const Sandbox& box, const std::string& script) {
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  return box.run(spec);
}

// After the run, as the caller: the host's `git push origin`, which runs the pushed-to
// repository's post-receive hook.
void host_push(const Sandbox& box) {
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git -c user.name=t -c user.email=t@t.test push -q origin "
                    "HEAD:refs/heads/main >/dev/null 2>&1; true",
                    "sh", box.workspace()});
}

}  // namespace

// A23R-3: the walk below `modules` skipped a level it could not list, though git reaches
// `modules/<name>` by name, which search permission allows. With the host's
// `GITDIR/modules` root's and mode 0711 and the deinitialized `sub`'s
// `GITDIR/modules/sub/hooks -> WS/.h`, uid 65534's run did not see the link, the command
// wrote `.h/post-checkout`, and the caller's `git submodule update --init` ran it. Now a
// level that is there, searchable and not listable refuses (exit 2); as root (modes
// ignored) the link is found as in A23-3: it refuses in the workspace's `.git`, and its
// target is protected for a git directory outside (the write fails).
BOOST_DATA_TEST_CASE(an_unlistable_modules_directory_is_refused,
                     bdata::make(kCallers) * bdata::make(std::vector<bool>{false, true}), caller,
                     separate) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string gitdir = workspace_repository(box, separate);
  deinitialized_submodule(box);
  const std::string module = gitdir + "/modules/sub";
  box.host_command({"/bin/rm", "-rf", module + "/hooks"});
  box.make_dir(box.ws(".h"));
  box.host_command({"/bin/ln", "-s", box.ws(".h"), module + "/hooks"});
  root_owned(gitdir + "/modules", 0711);
  const RunResult r = run(box, hook(".h/post-checkout", pwned));
  if (separate && caller == Caller::Root) {
    BOOST_TEST(r.exit_code != 0, r.describe());  // the link's target is read-only
  } else {
    BOOST_TEST(r.exit_code == 2, r.describe());
  }
  if (caller == Caller::Nobody)
    BOOST_TEST(r.err.find("cannot list it") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  host_submodule_update(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

// Held (no false refusal): a `modules` directory the caller cannot even search (root's,
// 0700) hides nothing from the caller's git, which cannot reach below it either; the run
// goes on.
BOOST_DATA_TEST_CASE(an_unsearchable_modules_directory_still_runs, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string gitdir = workspace_repository(box, true);
  deinitialized_submodule(box);
  root_owned(gitdir + "/modules", 0700);
  const RunResult r = box.sh("echo ok > out");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("") == "ok\n", r.describe());
}

// A23R-4: a legacy remote file (`remotes/origin`) zpolicy could not read whole was taken
// for none, and the URL git reads from it went unprotected. With the host's
// `remotes/origin` larger than 1 MiB (`URL: WS/evil.git` after padding git skips), the
// command made `evil.git` a bare repository with a post-receive hook, and the host's `git
// push origin` ran it; with it root's and mode 0600, uid 65534's run made `evil.git` (the
// push as root would run it). Now each refuses as a config file does (exit 2, nothing
// made); root reads the 0600 file and protects its URL.
BOOST_DATA_TEST_CASE(an_unreadable_legacy_remote_file_is_refused,
                     bdata::make(kCallers) * bdata::make(std::vector<bool>{false, true}), caller,
                     too_large) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string gitdir = workspace_repository(box, true);
  const std::string file = gitdir + "/remotes/origin";
  std::string text;
  if (too_large) {
    const std::string pad = "# " + std::string(1000, 'x') + "\n";
    while (text.size() <= (1u << 20)) text += pad;
  }
  box.write_file(file, text + "URL: " + box.ws("evil.git") + "\n");
  if (!too_large) root_owned(file, 0600);
  const RunResult r = run(box, "git init -q --bare evil.git && " +
                                   hook("evil.git/hooks/post-receive", pwned));
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  if (too_large || caller == Caller::Nobody) {
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(r.err.find(file) != std::string::npos, r.describe());
    BOOST_TEST(!exists(box.ws("evil.git")), r.describe());
  }
  host_push(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

// A23R-3's rule for the directory of the legacy remote files: with the host's
// `GITDIR/remotes` root's and mode 0711 and `remotes/origin` (`URL: WS/evil.git`)
// readable, uid 65534's run did not list it, the command made `evil.git` with a
// post-receive hook, and the caller's `git push origin` (which opens `remotes/origin` by
// name) ran it. Now refused (exit 2); root lists it and protects the URL.
BOOST_DATA_TEST_CASE(an_unlistable_remotes_directory_is_refused, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string gitdir = workspace_repository(box, true);
  box.write_file(gitdir + "/remotes/origin", "URL: " + box.ws("evil.git") + "\n");
  root_owned(gitdir + "/remotes", 0711);
  const RunResult r = run(box, "git init -q --bare evil.git && " +
                                   hook("evil.git/hooks/post-receive", pwned));
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  if (caller == Caller::Nobody) {
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(r.err.find("cannot list it") != std::string::npos, r.describe());
    BOOST_TEST(!exists(box.ws("evil.git")), r.describe());
  }
  host_push(box);
  BOOST_TEST(!exists(pwned), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
