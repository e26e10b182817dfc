#include <sys/stat.h>
#include <sys/xattr.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <string>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 27b (docs/redteam-2026-12.md "Attack 27b"): protected paths in the
// workspaces users have, attacked. Each case runs as root and as uid 65534 and is judged
// from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// Inside the sandbox: every way it has to open a directory of the caller's to other
// local users, each tried on every path named, one line each: "OP PATH RESULT". chmod
// (by name, and through an O_PATH descriptor's /proc name), a POSIX access ACL granting
// others rwx, a default ACL doing so for what the host makes there later, and the removal
// of an ACL (which hands the group owner the mask's rights). Then the controls: modes
// without write for others stay the command's to set.
const char* kOpenToOthers = R"(
wide = acl(((1, 7), (4, 5), (0x20, 7)))  # user::rwx group::r-x other::rwx
for p in sys.argv[1:]:
    tryit('chmod', p, lambda: os.chmod(p, 0o777))
    tryit('chmod-fd', p, lambda: chmod_by_fd(p, 0o757))
    tryit('acl', p, lambda: os.setxattr(p, 'system.posix_acl_access', wide))
    tryit('default-acl', p, lambda: os.setxattr(p, 'system.posix_acl_default', wide))
    tryit('remove-acl', p, lambda: os.removexattr(p, 'system.posix_acl_access'))
os.mkdir('build')
tryit('control-700', 'build', lambda: os.chmod('build', 0o700))
tryit('control-775', 'build', lambda: os.chmod('build', 0o775))
open('build/run.sh', 'w').close()
tryit('control-x', 'build/run.sh', lambda: os.chmod('build/run.sh', 0o755))
print('attempts made')
)";

mode_t mode_of(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

// A filesystem without ACLs (EOPNOTSUPP) holds none either.
bool has_xattr(const std::string& path, const char* name) {
  return lgetxattr(path.c_str(), name, nullptr, 0) >= 0;
}

// Another local user than the caller: nobody beside root, an unnamed uid beside nobody.
std::string other_user(Caller caller) { return caller == Caller::Root ? "65534" : "4242"; }

// Runs `script` with sh on the host as `uid` (and that gid), no groups; its exit status.
int as_user(const std::string& uid, const std::string& script) {
  const std::string command = "/usr/bin/setpriv --reuid " + uid + " --regid " + uid +
                              " --clear-groups /bin/sh -c '" + script + "' >/dev/null 2>&1";
  return std::system(command.c_str());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack27b)

// A27B-1: the directories that hold the protected paths (the workspace itself, a nested
// repository's directory, a pinned directory on a protected path's way) are the caller's,
// and the sandbox, keeping the caller's uid, owns them: on main 35f8e04 it made them mode
// 0777 (or gave others rwx by an ACL) and the mode outlived the run. Any other local user
// could then rename the protected `node_modules` and `.git` away and put their own in their
// place, which the caller's next `npm test` (node takes what it finds) or `git status`
// (under `safe.directory = *`, as CI images set it) runs as the caller: root, for a root
// run. Now no call may give others write access: chmod with S_IWOTH and the ACL calls are
// refused by the filter, and the host sees the modes it had. Controls: other modes.
BOOST_DATA_TEST_CASE(the_sandbox_cannot_open_a_protected_paths_directory_to_other_users,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.host_command({"/usr/bin/git", "init", "-q", box.workspace()});
  box.make_dir(box.ws("node_modules"));
  box.make_dir(box.ws("packages/a"));
  box.host_command({"/usr/bin/git", "init", "-q", box.ws("packages/a")});
  const char* dirs[] = {".", "packages", "packages/a"};
  mode_t before[3];
  for (int i = 0; i < 3; ++i) before[i] = mode_of(box.ws(dirs[i]));

  RunSpec spec;
  spec.command = {"/usr/bin/python3", "-c",  python_try_each(kOpenToOthers), ".", "packages",
                  "packages/a",       "data"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find("attempts made") != std::string::npos, r.describe());
  for (int i = 0; i < 3; ++i) {
    const std::string path = box.ws(dirs[i]);
    BOOST_TEST(mode_of(path) == before[i], dirs[i] << ": mode " << std::oct << before[i] << " -> "
                                                   << mode_of(path) << "\n"
                                                   << r.out);
    BOOST_TEST(!has_xattr(path, "system.posix_acl_access"), dirs[i] << "\n" << r.out);
    BOOST_TEST(!has_xattr(path, "system.posix_acl_default"), dirs[i] << "\n" << r.out);
  }
  // The host's other user cannot swap the protected paths.
  const std::string other = other_user(caller);
  BOOST_TEST(as_user(other, "cd \"" + box.workspace() + "\" && mv node_modules nm-old") != 0,
             r.out);
  BOOST_TEST(as_user(other, "cd \"" + box.workspace() + "\" && mv .git git-old") != 0, r.out);
  BOOST_TEST(as_user(other, "cd \"" + box.ws("packages/a") + "\" && mv .git git-old") != 0, r.out);
  BOOST_TEST(mode_of(box.ws("node_modules")) != 0u);
  BOOST_TEST(mode_of(box.ws(".git")) != 0u);
  // Controls: the command's own modes without write for others.
  for (const char* line :
       {"control-700 build ok", "control-775 build ok", "control-x build/run.sh ok"})
    BOOST_TEST(r.out.find(line) != std::string::npos, line << "\n" << r.out);
  BOOST_TEST(mode_of(box.ws("build/run.sh")) == 0755u, r.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
