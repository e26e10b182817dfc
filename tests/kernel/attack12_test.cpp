#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "deny_root_runs.hpp"
#include "sandbox_fixture.hpp"

// Red team round 12 (docs/redteam-2026-12.md): the artifact reader of verify and diff,
// the workspace lints by every name a writable root writes, git's common directory.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

const char* const kWorkspacePolicy =
    "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n  write: "
    "[\"${WORKSPACE}\"]\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack12)

// A12-1: `verify` and `diff --artifacts` opened each artifact by name: a symlink named
// `bwrap.args` (a directory in a pull request is its author's choice) read any file the
// reviewer may read, and the finding (verify: its first line) or the diff (all of it)
// printed it into the CI log; a FIFO blocked verify forever. Now only regular files are
// read, and a directory holding anything else is refused (exit 3 / 2).
BOOST_DATA_TEST_CASE(verify_and_diff_read_no_artifact_through_a_link_or_a_fifo,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string policy = box.write_policy("p.yaml", kWorkspacePolicy);
  const std::string secret = box.base() + "/credentials";
  box.write_file(secret, "https://user:ghp_A12SECRET@example.test\n");
  const std::string out = box.ws("out"), link = box.ws("link"), fifo = box.ws("fifo");
  const std::string z = zpolicy_binary();
  box.host_command({"/bin/sh", "-c",
                    "for d in \"$2\" \"$3\" \"$4\"; do \"$0\" compile \"$1\" --target linux "
                    "--out \"$d\" || exit 1; done && ln -sf \"$5\" \"$3/bwrap.args\" && "
                    "rm \"$4/bwrap.args\" && mkfifo \"$4/bwrap.args\"",
                    z, policy, out, link, fifo, secret});
  const RunResult r = box.host_command(
      {"/bin/sh", "-c",
       "timeout 2 \"$0\" verify \"$1\" \"$2\" --target linux; echo \"verify-link=$?\"; "
       "timeout 2 \"$0\" diff --artifacts \"$3\" \"$2\"; echo \"diff-link=$?\"; "
       "timeout 2 \"$0\" verify \"$1\" \"$4\" --target linux; echo \"verify-fifo=$?\"; "
       "timeout 2 \"$0\" verify \"$1\" \"$3\" --target linux; echo \"verify-control=$?\"",
       z, policy, link, out, fifo});
  BOOST_TEST_REQUIRE(r.out.find("verify-control=0") != std::string::npos, r.describe());
  BOOST_TEST((r.out + r.err).find("A12SECRET") == std::string::npos,
             "a linked file's content printed: " << r.describe());
  BOOST_TEST(r.out.find("verify-link=3") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("diff-link=2") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("verify-fifo=3") != std::string::npos,
             "a FIFO as an artifact (124: blocked): " << r.describe());
}

// A12-2: ZP003 (the home, other accounts' homes, ~/.ssh and the rest, the caller's PATH),
// ZP004 (the policy file) and ZP013's shared directories judged a writable root by its
// names and, for ZP003, by the identity of the root itself, but not by the writable
// mounts below it, which a bind of the root binds too: `mount --bind ~ ws/home` let the
// sandbox write ~/.bashrc, `mount --bind /var/tmp ws/t` the shared /var/tmp. Each member
// is a bind below the workspace, made in a mount namespace of the run's own.
BOOST_DATA_TEST_CASE(a_writable_mount_below_the_workspace_is_judged_as_the_directory_it_shows,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string bin = box.base() + "/bin", shared = box.base() + "/shared",
                    policies = box.base() + "/policies";
  box.make_dir(bin);
  box.make_dir(shared);
  BOOST_REQUIRE(chmod(shared.c_str(), 01777) == 0);
  box.make_dir(policies);
  const std::string policy = box.write_policy("policies/p.yaml", kWorkspacePolicy);
  struct Member {
    const char* name;
    std::string source;
  };
  for (const auto& m : {Member{"home", box.home()}, Member{"path", bin}, Member{"shared", shared},
                        Member{"policy", policies}}) {
    box.make_dir(box.ws(m.name));
    RunSpec spec;
    spec.options = {"--policy", policy};
    spec.extra_env = {"PATH=" + bin + ":" + kHostPath};
    spec.root_prefix = host_bind_mount(m.source, box.ws(m.name));
    spec.command = {"/bin/sh", "-c", "echo planted > \"$0/.bashrc\"", m.name};
    const RunResult r = box.run(spec);
    BOOST_TEST(r.exit_code == 3, m.name << ": " << r.describe());
    BOOST_TEST(access((m.source + "/.bashrc").c_str(), F_OK) != 0,
               m.name << ": written through the bind below the workspace: " << r.describe());
    unlink((m.source + "/.bashrc").c_str());
  }
}

// A12-3: ZP003 refused a writable root holding a directory on the caller's PATH, but
// skipped the relative entries (`.`, an empty one, `bin`, `./node_modules/.bin`), which
// name directories of wherever the caller types next, usually the workspace: the sandbox
// planted `./gti` and the host ran it. They are judged from the run's working directory.
BOOST_DATA_TEST_CASE(a_relative_path_entry_in_the_workspace_is_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  for (const std::string& path : {std::string(".:") + kHostPath, std::string(kHostPath) + ":",
                                  "bin:" + std::string(kHostPath)}) {
    RunSpec spec;
    spec.extra_env = {"PATH=" + path};
    spec.command = {"/bin/sh", "-c", "echo planted > gti"};
    const RunResult r = box.run(spec);
    BOOST_TEST(r.exit_code == 3, path << ": " << r.describe());
    BOOST_TEST(access(box.ws("gti").c_str(), F_OK) != 0, path << ": the command ran");
    unlink(box.ws("gti").c_str());
  }
}

// A12-4: a linked worktree's git directory names in `commondir` the directory whose
// config and hooks git reads; the git directory was protected (a `.git` pointer's target,
// a repository by its HEAD and commondir) but the common directory only when it was a
// repository by itself. Without a HEAD of its own, the sandbox wrote its config
// (`core.fsmonitor`, which the host's next `git status` ran).
BOOST_DATA_TEST_CASE(a_git_common_directory_is_protected, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const auto* dir : {"gd", "common", "common/objects", "common/refs", "common/hooks"})
    box.make_dir(box.ws(dir));
  box.write_file(box.ws(".git"), "gitdir: gd\n");
  box.write_file(box.ws("gd/HEAD"), "ref: refs/heads/main\n");
  box.write_file(box.ws("gd/commondir"), "../common\n");
  box.write_file(box.ws("common/config"), "[core]\n\trepositoryformatversion = 0\n");
  const RunResult r = box.sh(
      "printf '\\tfsmonitor = touch /tmp/x\\n' >> common/config; "
      "echo planted > common/hooks/post-checkout; true");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("common/config")).value_or("").find("fsmonitor") == std::string::npos,
             "the common directory's config written: " << r.describe());
  BOOST_TEST(access(box.ws("common/hooks/post-checkout").c_str(), F_OK) != 0,
             "a hook planted in the common directory: " << r.describe());
}

// A12-5: git's metadata was the only one protected by default. Mercurial reads hooks and
// extensions from `.hg/hgrc` (Sapling `.sl/config`, Jujutsu `.jj/repo/config.toml` run
// programs too), so a sandbox that wrote `.hg/hgrc` ran code in the host's next `hg
// status`; one that made `.jj` in a workspace without one did the same for `jj`.
BOOST_DATA_TEST_CASE(another_version_control_systems_metadata_is_protected, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.make_dir(box.ws(".hg"));
  box.write_file(box.ws(".hg/hgrc"), "[ui]\n");
  for (const auto* dir : {"sub", "sub/.sl"}) box.make_dir(box.ws(dir));
  box.write_file(box.ws("sub/.sl/config"), "[ui]\n");
  const RunResult r = box.sh(
      "printf '[hooks]\\npre-status = touch /tmp/x\\n' >> .hg/hgrc; "
      "printf '[hooks]\\npre-status = touch /tmp/x\\n' >> sub/.sl/config; "
      "mkdir -p .jj/repo && echo '[ui]' > .jj/repo/config.toml; true");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws(".hg/hgrc")).value_or("").find("hooks") == std::string::npos,
             "the sandbox wrote .hg/hgrc");
  BOOST_TEST(read_file(box.ws("sub/.sl/config")).value_or("").find("hooks") == std::string::npos,
             "the sandbox wrote a nested .sl/config");
  BOOST_TEST(access(box.ws(".jj").c_str(), F_OK) != 0, "the sandbox made .jj: " << r.describe());
}

// Round 12b (docs/redteam-2026-12.md), attacks on guard12's A11-4 fix. A12B-1: the run
// looked at the host's mount table again once bwrap ran, but bwrap copied the guard's
// namespace, made at the guard's unshare: a bind the host made before that and removed
// (or covered with another mount) before the look was in the sandbox and in no table the
// run read (low, as A11-4: a window of milliseconds the host's mounts must hit). strace
// holds the guard's unshare 0.3 s (the bind is made) and each process's first execve
// 0.2 s, bwrap's included (the guard's unshare is done, the runner has not looked yet):
// then the host removes or covers it. Now the run reads the guard's own table.
BOOST_DATA_TEST_CASE(a_host_bind_made_and_removed_while_the_run_starts_is_refused,
                     bdata::make(kCallers), caller) {
  BOOST_REQUIRE_MESSAGE(access("/usr/bin/strace", X_OK) == 0, "this test needs /usr/bin/strace");
  Sandbox box(caller);
  const std::string src = box.base() + "/src", alias = box.base() + "/alias";
  for (const auto& dir : {src, src + "/secret", alias})
    BOOST_REQUIRE(mkdir(dir.c_str(), 0755) == 0);
  box.write_file(src + "/secret/key", "AKIA-KEY\n");
  for (const char* undo : {"umount \"$2\"", "mount -t tmpfs zp \"$2\""}) {
    RunSpec spec;
    spec.options = {"--policy", deny_policy(box, src + "/secret")};
    spec.root_prefix = host_acts_while_held(
        kGuardUnshare,
        "mount --bind \"$1\" \"$2\"; w " + std::to_string(SYS_execve) + " ''; " + undo,
        {src, alias}, ":", {"execve"});
    // Shell built-ins only: a command's execve would be held too.
    spec.command = {"/bin/sh", "-c", ": > started; read -r k < \"$0\"/secret/key; echo \"$k\"",
                    alias};
    const RunResult r = box.run(spec);
    BOOST_TEST(r.out.find("AKIA") == std::string::npos,
               undo << ": read through the bind the host no longer shows: " << r.describe());
    BOOST_TEST(r.exit_code == 125, undo << ": " << r.describe());
    BOOST_TEST(!exists(box.ws("started")), undo << ": the command ran: " << r.describe());
    unlink(box.ws("started").c_str());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
