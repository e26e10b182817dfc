#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Attack 22f (docs/redteam-2026-12.md "Attack 22f (attack22f)"): attack 22e's
// created_through_links and the rest of the git-path class, attacked with the real bwrap and
// kernel as root and as uid 65534. Each case is a finding's reproduction or a held attack,
// observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack22f)

namespace {

// A fixed name of a git directory whose content makes git run code, made by the host a
// link into the workspace: `.git/remotes` and `.git/branches` (legacy remotes files: a URL
// whose receive-pack hooks `git push` runs), `.git/modules` (submodule git directories
// `git submodule update` takes over).
enum class FixedName { Remotes, Branches, Modules };
std::ostream& operator<<(std::ostream& os, FixedName n) {
  return os << (n == FixedName::Remotes ? "remotes" : n == FixedName::Branches ? "branches" : "modules");
}
std::string name_of(FixedName n) {
  return n == FixedName::Remotes ? "remotes" : n == FixedName::Branches ? "branches" : "modules";
}

}  // namespace

// A22F-1: git reads `remotes/<r>` and `branches/<r>` for a remote the config gives no url,
// and `git submodule update` takes over an existing `modules/<name>` git directory as it
// is; zpolicy judged only `hooks` among a git directory's fixed names (A14B-1). With the
// host's `GITDIR/NAME -> WS/.NAME` (an existing directory of the workspace, or a dangling
// link to it), the command wrote `.remotes/origin` (`URL: WS/evil.git`, a repository of
// its own with a post-receive hook), or made `.mods/sub` a git directory with a
// post-checkout hook, and the host's `git push origin` or `git submodule update --init`
// ran the hook (exit 0; "PWNED"). Now a link in the workspace's own `.git` refuses (a
// symlink inside a writable root, as `hooks` does), and one in a git directory outside
// (`git init --separate-git-dir`) has its target protected as a whole (the writes fail) or,
// dangling, refuses: exit 2, nothing made, and the host's git runs nothing of the sandbox's.
BOOST_DATA_TEST_CASE(a_git_directorys_remotes_or_modules_linked_into_the_workspace_are_protected,
                     bdata::make(kCallers) *
                         bdata::make({FixedName::Remotes, FixedName::Branches, FixedName::Modules}) *
                         bdata::make(std::vector<bool>{false, true}) *
                         bdata::make(std::vector<bool>{false, true}),
                     caller, fixed, dangling, separate) {
  Sandbox box(caller);
  const std::string name = name_of(fixed), target = "." + name, pwned = box.ws("pwned");
  const std::string gitdir = workspace_repository(box, separate);
  // A submodule `sub` the index records, not populated (deinit), its git directory gone.
  const std::string subsrc =
      fixed == FixedName::Modules ? deinitialized_submodule(box) : std::string();
  box.host_command({"/bin/rm", "-rf", gitdir + "/" + name});
  host_link(box, box.ws(target), gitdir + "/" + name);
  if (!dangling) box.make_dir(box.ws(target));
  std::string script;
  if (fixed == FixedName::Modules) {
    script = "mkdir -p " + target + " && git clone -q --bare " + subsrc + " " + target +
             "/sub && git config -f " + target + "/sub/config core.bare false && " +
             hook(target + "/sub/hooks/post-checkout", pwned);
  } else {
    script = "mkdir -p " + target + " && git init -q --bare evil.git && " +
             hook("evil.git/hooks/post-receive", pwned) + " && echo '" +
             (fixed == FixedName::Remotes ? "URL: " : "") + box.ws("evil.git") + "' > " + target +
             "/origin";
  }
  const RunResult r = run_script(box, {}, script);
  if (dangling || !separate) {
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  } else {
    BOOST_TEST(r.completed(), r.describe());
  }
  BOOST_TEST(!exists(box.ws(target + (fixed == FixedName::Modules ? "/sub" : "/origin"))),
             r.describe());
  // The host's git, after the run: nothing of the sandbox's runs.
  box.host_command({"/bin/sh", "-c",
                    fixed == FixedName::Modules
                        ? "cd \"$1\" && git submodule update --init >/dev/null 2>&1; true"
                        : "cd \"$1\" && git push -q origin HEAD:refs/heads/main >/dev/null 2>&1; true",
                    "sh", box.workspace()});
  BOOST_TEST(!exists(pwned), r.describe());
}

namespace {

// A way from a remote's name on the host (or a URL rewrite's base) to where the kernel would
// create its repository in the workspace, through host links; `made` is where, relative to
// the workspace.
struct Way {
  std::string what;
  // Makes the host's links; returns the config lines naming the repository.
  std::function<std::string(Sandbox&, const std::string& host)> setup;
  std::string made = "l";
  bool bind = false;  // the host binds BASE/srvdata at WS/mnt
};
std::ostream& operator<<(std::ostream& os, const Way& w) { return os << w.what; }

// `n` dangling host links in a row, `h1 -> h2 -> … -> hn -> WS/l`.
std::string chain(Sandbox& box, const std::string& host, int n) {
  for (int i = 1; i < n; ++i)
    host_link(box, host + "/h" + std::to_string(i + 1), host + "/h" + std::to_string(i));
  host_link(box, box.ws("l"), host + "/h" + std::to_string(n));
  return git_remote(host + "/h1/repo.git");
}

const std::vector<Way> kWays{
    {"40 dangling links in a row", [](Sandbox& b, const std::string& h) { return chain(b, h, 40); }},
    {"41 dangling links in a row", [](Sandbox& b, const std::string& h) { return chain(b, h, 41); }},
    {"relative link targets",
     [](Sandbox& b, const std::string& h) {
       b.make_dir(h + "2");
       host_link(b, "../host2/h2", h + "/h");
       host_link(b, "../host2/h3", h + "2/h2");
       host_link(b, b.ws("l"), h + "2/h3");
       return git_remote(h + "/h/repo.git");
     }},
    {"'..' after an existing link in a link's target",
     [](Sandbox& b, const std::string& h) {
       b.make_dir(b.ws("sub"));
       host_link(b, h + "/e/../l", h + "/h");
       host_link(b, b.ws("sub"), h + "/e");
       return git_remote(h + "/h/repo.git");
     }},
    {"a dangling link to a path below an existing link to the workspace",
     [](Sandbox& b, const std::string& h) {
       host_link(b, h + "/e/l", h + "/h");
       host_link(b, b.workspace(), h + "/e");
       return git_remote(h + "/h/repo.git");
     }},
    {"an existing link to a dangling link",
     [](Sandbox& b, const std::string& h) {
       b.make_dir(h + "/real");
       host_link(b, h + "/real", h + "/e");
       host_link(b, b.ws("l"), h + "/real/d");
       return git_remote(h + "/e/d/repo.git");
     }},
    {"a remote in an includeIf-included file",
     [](Sandbox& b, const std::string& h) {
       host_link(b, h + "/h2", h + "/h");
       host_link(b, b.ws("l"), h + "/h2");
       b.write_file(h + "/inc", git_remote(h + "/h/repo.git"));
       return "[includeIf \"gitdir:/\"]\n\tpath = " + h + "/inc\n";
     }},
    {"a pushInsteadOf base",
     [](Sandbox& b, const std::string& h) {
       host_link(b, h + "/h2", h + "/h");
       host_link(b, b.ws("l"), h + "/h2");
       return git_rewrite(h + "/h/", "pushInsteadOf");
     }},
    {"a rewrite of a rewrite (git rewrites once: the local base is judged alone)",
     [](Sandbox& b, const std::string& h) {
       host_link(b, h + "/h2", h + "/h");
       host_link(b, b.ws("l"), h + "/h2");
       return "[url \"https://mirror.test/\"]\n\tinsteadOf = https://example.test/\n"
              "[url \"" +
              h + "/h/\"]\n\tinsteadOf = https://mirror.test/\n" +
              git_remote("https://example.test/repo.git");
     }},
    {"'~/' through the caller's home",
     [](Sandbox& b, const std::string& h) {
       host_link(b, h + "/h2", b.home() + "/h");
       host_link(b, b.ws("l"), h + "/h2");
       return git_remote("~/h/repo.git");
     }},
    {"a chain into a host bind mount of the workspace",
     [](Sandbox& b, const std::string& h) {
       b.make_dir(b.base() + "/srvdata");
       host_link(b, h + "/h2", h + "/h");
       host_link(b, b.base() + "/srvdata/l", h + "/h2");
       return git_remote(h + "/h/repo.git");
     },
     "mnt/l", true},
};

}  // namespace

// Held: created_through_links (A22E-1) in other shapes, a remote's repository (or a rewrite
// base) the kernel would create in the workspace through host links: exactly 40 dangling
// links (the kernel follows 40) and 41 (more than it follows: refused too), relative targets,
// a '..' after an existing link, existing and dangling links mixed, a remote in an
// includeIf-included file, a pushInsteadOf base, a rewrite whose result another rewrite
// matches, `~/`, a chain into a host bind mount of the workspace. Each refused: exit 2,
// nothing made.
BOOST_DATA_TEST_CASE(a_git_repository_through_host_links_into_the_workspace_is_refused_in_every_shape,
                     bdata::make(kCallers) * bdata::make(kWays), caller, way) {
  Sandbox box(caller);
  const std::string host = host_dir(box);
  git_init(box);
  git_config(box, way.setup(box, host));
  RunSpec spec;
  if (way.bind) {
    box.make_dir(box.ws("mnt"));
    spec.root_prefix = host_bind_mount(box.base() + "/srvdata", box.ws("mnt"));
  }
  const RunResult r =
      run_script(box, spec, "mkdir -p " + way.made + " && git init -q --bare " + way.made + "/repo.git");
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws(way.made)), r.describe());
}

// Held (no false refusal): ordinary setups run: a remote that is a bare repository on the
// host, a rewrite to `https://`, a rewrite to the caller's `~/src/` (no links, the workspace
// not below it), a pushInsteadOf to a host directory of repositories, a remote in an
// includeIf-included file.
BOOST_DATA_TEST_CASE(ordinary_remotes_and_rewrites_still_run, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string srv = box.base() + "/srv";
  box.make_dir(srv);
  box.make_dir(box.home() + "/src");
  box.host_command({kGit, "init", "-q", "--bare", srv + "/proj.git"});
  box.write_file(srv + "/inc", git_remote(srv + "/proj.git"));
  git_workspace(box, git_remote(srv + "/proj.git") +
                     "[url \"https://mirror.test/\"]\n\tinsteadOf = https://example.test/\n"
                     "[url \"~/src/\"]\n\tinsteadOf = https://local.test/\n"
                     "[url \"" +
                     srv + "/\"]\n\tpushInsteadOf = https://push.test/\n" +
                     "[includeIf \"gitdir:/\"]\n\tpath = " + srv + "/inc\n");
  const RunResult r = box.sh("echo ok > out");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("out")).value_or("") == "ok\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
