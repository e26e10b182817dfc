#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Attack 22e (docs/redteam-2026-12.md "Attack 22e (attack22e)"): A22D-1's fix and the
// other paths the host's git uses, attacked with the real bwrap and kernel as root and as
// uid 65534. Each case is a finding's reproduction or a held attack, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack22e)

namespace {

// How the repository's name reaches the workspace through two dangling host links: a link
// to a link (`h -> h2`, `h2 -> WS/l`), or a link to a path below another (`h -> g/l`,
// `g -> WS`).
enum class Chain { LinkToLink, LinkBelowLink };
std::ostream& operator<<(std::ostream& os, Chain c) {
  return os << (c == Chain::LinkToLink ? "a link to a dangling link"
                                       : "a link to a path below a dangling link");
}

}  // namespace

// A22E-1: A22D-1 and A22-5 followed one dangling host link to where the kernel would create
// the repository; a second one after it was spelled from that link, outside every writable
// root, and nothing was refused. `remote.origin.url = BASE/host/h/repo.git` (or a URL
// rewrite to `BASE/host/h/`) with the host's `h -> BASE/host/h2`, `h2 -> WS/l`: the command
// made `l/repo.git` with a post-receive hook, which the host's `git push` ran (exit 0;
// checked by hand: it wrote "PWNED"). Refused now: exit 2, nothing made.
BOOST_DATA_TEST_CASE(a_git_repository_through_two_dangling_host_links_into_the_workspace_is_refused,
                     bdata::make(kCallers) *
                         bdata::make({Chain::LinkToLink, Chain::LinkBelowLink}) *
                         bdata::make(std::vector<bool>{false, true}),
                     caller, chain, rewrite) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  std::string made = "l";
  if (chain == Chain::LinkToLink) {
    host_link(box, host + "/h2", host + "/h");
    host_link(box, box.ws("l"), host + "/h2");
  } else {
    host_link(box, host + "/g/l", host + "/h");
    host_link(box, box.ws("g"), host + "/g");
    made = "g/l";
  }
  git_workspace(box, rewrite ? git_rewrite(host + "/h/") : git_remote(host + "/h/repo.git"));
  const RunResult r = run_script(box, {},
                                 "mkdir -p " + made + " && git init -q --bare " + made +
                                     "/repo.git && echo evil > " + made + "/repo.git/hooks/post-receive");
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws(made + "/repo.git")), r.describe());
}

// A22E-2: a remote's repository that exists on the host, its `.git` a pointer naming a git
// directory through the host's dangling link into the workspace: `remote.origin.url =
// BASE/srv/repo`, `BASE/srv/repo/.git` reading `gitdir: BASE/host/h/gd`, `BASE/host/h ->
// WS/l`. The pointer's target was spelled from the link, outside every writable root; only
// the config files there got placeholders, the command made `HEAD`, `objects`, `refs` and
// `hooks/post-receive` beside them, and once the run removed the placeholders the host's
// `git push origin` ran the hook (exit 0; checked by hand: it wrote "PWNED"). Refused now:
// exit 2, nothing made.
BOOST_DATA_TEST_CASE(
    a_remotes_git_pointer_through_a_dangling_host_link_into_the_workspace_is_refused,
    bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  const std::string repo = box.base() + "/srv/repo";
  box.make_dir(repo);
  host_link(box, box.ws("l"), host + "/h");
  box.write_file(repo + "/.git", "gitdir: " + host + "/h/gd\n");
  git_workspace(box, git_remote(repo));
  const RunResult r = run_script(box, {},
                                 "mkdir -p l/gd/objects l/gd/refs l/gd/hooks && echo 'ref: "
                                 "refs/heads/main' > l/gd/HEAD && echo evil > l/gd/hooks/post-receive");
  expect_refused(r, 2, "the git directory named by '" + repo + "/.git'");
  BOOST_TEST(!exists(box.ws("l")), r.describe());
}

// A22E-3: A22E-2 through a remote's `commondir`: `remote.origin.url = BASE/srv/repo.git`,
// a git directory there (HEAD) whose `commondir` names `BASE/host/h/common`, with the host's
// dangling `BASE/host/h -> WS/l`. The common directory was spelled from the link; only its
// config files got placeholders, the command made `objects`, `refs` and
// `hooks/post-receive` beside them, and the host's `git push origin` ran the hook (exit 0,
// with A22E-1/2's fix too; checked by hand: it wrote "PWNED"). Refused now: exit 2,
// nothing made.
BOOST_DATA_TEST_CASE(a_remotes_commondir_through_a_dangling_host_link_into_the_workspace_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  const std::string repo = box.base() + "/srv/repo.git";
  box.make_dir(repo);
  host_link(box, box.ws("l"), host + "/h");
  box.write_file(repo + "/HEAD", "ref: refs/heads/main\n");
  box.write_file(repo + "/commondir", host + "/h/common\n");
  git_workspace(box, git_remote(repo));
  const RunResult r = run_script(box, {},
                                 "mkdir -p l/common/objects l/common/refs l/common/hooks && echo "
                                 "evil > l/common/hooks/post-receive");
  expect_refused(r, 2, "common git directory named by '" + repo + "/commondir'");
  BOOST_TEST(!exists(box.ws("l")), r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
