#include <signal.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Invariant 2: protected subpaths of the default policy stay unchanged, whether they
// exist at start (.git, node_modules) or not (.env, .env.local, .next,
// data/agent-sessions with `data` missing too), reached directly, through symlinks, hard
// links, renames of a parent, or mount tricks. Missing ones are still missing afterwards.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// A workspace with the existing protected paths; the missing ones are left missing.
struct ProtectedWorkspace {
  explicit ProtectedWorkspace(Caller caller) : box(caller) {
    box.write_file(box.ws(".git/config"), "[core]\n\trepositoryformatversion = 0\n");
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.make_dir(box.ws(".git/refs/heads"));
    box.write_file(box.ws("node_modules/pkg/index.js"), "module.exports = 1;\n");
    box.write_file(box.ws("src.txt"), "user file\n");
    git = snapshot(box.ws(".git"));
    modules = snapshot(box.ws("node_modules"));
  }

  // Host-side: the existing ones are byte-for-byte, mode and owner unchanged, the
  // missing ones (and the missing parent `data`) still do not exist.
  void check_unchanged() const {
    BOOST_TEST(snapshot(box.ws(".git")) == git);
    BOOST_TEST(snapshot(box.ws("node_modules")) == modules);
    for (const char* missing : {".env", ".env.local", ".next", "data"})
      BOOST_TEST(!exists(box.ws(missing)), missing << " exists on the host after the run");
  }

  Sandbox box;
  std::string git, modules;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_protected_paths)

BOOST_DATA_TEST_CASE(direct_writes_creates_and_deletes_fail, bdata::make(kCallers), caller) {
  ProtectedWorkspace p(caller);
  auto r = p.box.sh(
      "echo x > .git/config; echo x >> .git/config; true > .git/HEAD; touch .git/config\n"
      "touch .git/new; mkdir .git/newdir; rm -f .git/HEAD; rm -rf .git/refs\n"
      "echo x > node_modules/pkg/index.js; touch node_modules/new; rm -rf node_modules/pkg\n"
      "echo SECRET=1 > .env; touch .env.local; mkdir .next/cache; touch .env/x\n"
      "mkdir -p data/agent-sessions/x; touch data/agent-sessions/s.json\n"
      "rm -rf .git node_modules .env .env.local .next data; find . -mindepth 1 -delete\n"
      "echo control > control.txt");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  p.check_unchanged();
  BOOST_TEST(read_file(p.box.ws("control.txt")).value_or("<missing>") == "control\n");
}

BOOST_DATA_TEST_CASE(renaming_a_protected_path_or_its_parent_fails, bdata::make(kCallers), caller) {
  ProtectedWorkspace p(caller);
  auto r = p.box.sh(
      "mv data data2; mkdir -p data/agent-sessions/x; touch data/agent-sessions/y\n"
      "mv data/agent-sessions data/as2; mkdir -p data/agent-sessions/z\n"
      "mv .git .git2; mkdir -p .git; echo x > .git/config\n"
      "mv node_modules nm2; mv .env env2; mv .next next2; mv .git/config .git/config2\n"
      "mv src.txt .env; mv src.txt .git/src.txt\n"
      "/usr/bin/python3 -c 'import os\n"
      "for a, b in [(\".git\", \"g3\"), (\"data\", \"d3\"), (\"node_modules\", \"n3\")]:\n"
      "  try: os.rename(a, b); print(\"renamed\", a)\n"
      "  except OSError as e: print(\"rename\", a, e.strerror)'");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("renamed") == std::string::npos, r.describe());
  p.check_unchanged();
  for (const char* moved : {"data2", ".git2", "nm2", "env2", "next2", "g3", "d3", "n3"})
    BOOST_TEST(!exists(p.box.ws(moved)), moved);
  BOOST_TEST(read_file(p.box.ws("src.txt")).value_or("<missing>") == "user file\n");
}

BOOST_DATA_TEST_CASE(chmod_chown_and_utimes_fail, bdata::make(kCallers), caller) {
  ProtectedWorkspace p(caller);
  auto r = p.box.sh(
      "chmod -R 0777 .git; chmod 000 .git/config node_modules; chown -R 1:1 .git node_modules\n"
      "touch -d 2001-01-01 .git/config .git; chmod 0777 .env .next data/agent-sessions; "
      "chmod 0000 data");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  p.check_unchanged();
}

BOOST_DATA_TEST_CASE(symlinks_do_not_reach_protected_paths, bdata::make(kCallers), caller) {
  ProtectedWorkspace p(caller);
  // Links planted on the host before the run, and links made inside the sandbox.
  p.box.host_command({"/bin/ln", "-s", ".git/config", "host-cfg"});
  p.box.host_command({"/bin/ln", "-s", ".env", "host-env"});
  p.box.host_command({"/bin/ln", "-s", "data", "host-data"});
  auto r = p.box.sh(
      "echo x > host-cfg; echo SECRET=1 > host-env; mkdir -p host-data/agent-sessions/x\n"
      "ln -s .git/config cfg; echo x > cfg; ln -s .git g; touch g/new; echo x > g/HEAD\n"
      "ln -s .env e; echo SECRET=1 > e; ln -s .env.local el; echo x >> el\n"
      "ln -s data/agent-sessions as; touch as/x; mkdir -p sub; ln -s ../.git sub/up; "
      "echo x > sub/up/config\n"
      "ln -s " +
      p.box.ws("node_modules") +
      " nm; echo x > nm/pkg/index.js; rm -rf nm/\n"
      "ln -s . self; echo x > self/.git/config; mkdir -p self/data/agent-sessions/y");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  p.check_unchanged();
  BOOST_TEST(exists(p.box.ws("cfg")));  // the links themselves were allowed
}

BOOST_DATA_TEST_CASE(hard_links_to_protected_files_fail_with_exdev, bdata::make(kCallers), caller) {
  ProtectedWorkspace p(caller);
  p.box.write_file(p.box.ws("mine.txt"), "mine\n");
  auto r = p.box.sh(
      "ln .git/config x 2>&1\n"
      "/usr/bin/python3 -c 'import os, errno\n"
      "for a, b in [(\".git/config\", \"x1\"), (\"node_modules/pkg/index.js\", \"x2\"),\n"
      "             (\".git/HEAD\", \".git/h2\"), (\"mine.txt\", \".env/x\"),\n"
      "             (\"mine.txt\", \"data/agent-sessions/x\"), (\"mine.txt\", \".git/x\")]:\n"
      "  try: os.link(a, b); print(\"linked\", a, b)\n"
      "  except OSError as e: print(\"link\", a, b, errno.errorcode[e.errno])'");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("Invalid cross-device link") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("link .git/config x1 EXDEV") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("link node_modules/pkg/index.js x2 EXDEV") != std::string::npos,
             r.describe());
  BOOST_TEST(r.out.find("linked") == std::string::npos, r.describe());
  p.check_unchanged();
  for (const char* link : {"x", "x1", "x2"}) BOOST_TEST(!exists(p.box.ws(link)), link);
}

BOOST_DATA_TEST_CASE(unmount_and_remount_fail, bdata::make(kCallers), caller) {
  ProtectedWorkspace p(caller);
  // util-linux umount refuses non-root callers before any syscall, so the syscalls are
  // also made directly.
  auto r = p.box.sh(
      "umount .git; umount -l .git; umount node_modules; umount data/agent-sessions; umount data\n"
      "mount -o remount,rw .git; mount -o remount,rw,bind .git; mount --bind . .git\n"
      "mount -t tmpfs none .env; unshare -m sh -c 'umount .git; echo x > .git/config'\n"
      "unshare -rm sh -c 'umount -l .git; echo x > .git/config'\n"
      "/usr/bin/python3 -c 'import ctypes, errno\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "MS_RDONLY, MS_REMOUNT, MS_BIND, MNT_DETACH = 1, 32, 4096, 2\n"
      "calls = [(\"umount2 .git\", lambda: libc.umount2(b\".git\", 0)),\n"
      "         (\"umount2 detach .git\", lambda: libc.umount2(b\".git\", MNT_DETACH)),\n"
      "         (\"umount2 .env\", lambda: libc.umount2(b\".env\", MNT_DETACH)),\n"
      "         (\"umount2 data/agent-sessions\", lambda: libc.umount2(b\"data/agent-sessions\", "
      "MNT_DETACH)),\n"
      "         (\"remount rw .git\", lambda: libc.mount(None, b\".git\", None, MS_REMOUNT | "
      "MS_BIND, None)),\n"
      "         (\"bind over .git\", lambda: libc.mount(b\".\", b\".git\", None, MS_BIND, None))]\n"
      "for name, call in calls:\n"
      "  rc = call(); print(name, \"succeeded\" if rc == 0 else "
      "errno.errorcode[ctypes.get_errno()])'\n"
      "echo x > .git/config; touch .env/x data/agent-sessions/x; echo x > "
      "node_modules/pkg/index.js");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("succeeded") == std::string::npos, r.describe());
  p.check_unchanged();
}

BOOST_DATA_TEST_CASE(a_git_pointer_file_protects_the_git_directory_it_names, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  // A submodule or worktree layout: .git is a file naming the real git directory, here
  // inside the writable workspace, where nothing else would protect it.
  box.write_file(box.ws(".git"), "gitdir: modules/real-git\n");
  box.write_file(box.ws("modules/real-git/config"), "[core]\n");
  box.write_file(box.ws("modules/real-git/HEAD"), "ref: refs/heads/main\n");
  const std::string pointer = snapshot(box.ws(".git")),
                    gitdir = snapshot(box.ws("modules/real-git"));
  auto r = box.sh(
      "echo x > modules/real-git/config; touch modules/real-git/new; rm -f modules/real-git/HEAD\n"
      "mv modules/real-git modules/moved; mv modules m2; echo 'gitdir: /tmp' > .git; rm -f .git\n"
      "echo control > modules/control.txt");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(snapshot(box.ws(".git")) == pointer);
  BOOST_TEST(snapshot(box.ws("modules/real-git")) == gitdir);
  BOOST_TEST(!exists(box.ws("m2")));
  BOOST_TEST(read_file(box.ws("modules/control.txt")).value_or("<missing>") == "control\n");
}

BOOST_DATA_TEST_CASE(a_protected_path_through_a_symlink_refuses_to_run, bdata::make(kCallers),
                     caller) {
  // A symlinked `data` or `.env` would make the rule protect the link, not what it names.
  for (const auto& [link, target] :
       {std::pair<std::string, std::string>{"data", "elsewhere"}, {".env", "real.env"}}) {
    Sandbox box(caller);
    box.make_dir(box.ws("elsewhere"));
    box.write_file(box.ws("real.env"), "SECRET=1\n");
    box.host_command({"/bin/ln", "-s", target, link});
    const std::string marker = box.ws("MARKER");
    RunSpec spec;
    spec.command = {"/usr/bin/touch", marker};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code != 0, link << "\n" << r.describe());
    BOOST_TEST(r.err.find(box.ws(link)) != std::string::npos, r.describe());
    BOOST_TEST(!exists(marker), link << ": the command ran");
    BOOST_TEST(read_file(box.ws("real.env")).value_or("<missing>") == "SECRET=1\n");
  }
}

BOOST_DATA_TEST_CASE(a_run_leaves_no_placeholder_and_keeps_user_data, bdata::make(kCallers),
                     caller) {
  ProtectedWorkspace p(caller);
  const std::string before = snapshot(p.box.workspace());
  auto r = p.box.sh("ls -a; test -d .env && test -d data/agent-sessions && echo protected-present");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("protected-present") != std::string::npos, r.describe());
  BOOST_TEST(snapshot(p.box.workspace()) == before);

  // `data` exists with user data but data/agent-sessions does not.
  p.box.write_file(p.box.ws("data/notes.txt"), "user notes\n");
  r = p.box.sh("mv data data2; mkdir -p data/agent-sessions/x; echo note >> data/notes.txt");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(p.box.ws("data/notes.txt")).value_or("<missing>") == "user notes\nnote\n");
  BOOST_TEST(!exists(p.box.ws("data/agent-sessions")));
  BOOST_TEST(!exists(p.box.ws("data2")));
  BOOST_TEST(snapshot(p.box.ws(".git")) == p.git);
}

BOOST_DATA_TEST_CASE(placeholders_of_a_killed_run_are_reconciled, bdata::make(kCallers), caller) {
  ProtectedWorkspace p(caller);
  const std::string seconds = unique_sleep_seconds();
  RunSpec spec;
  spec.command = {"/bin/sleep", seconds};
  Running running = p.box.start(spec);
  bool sandbox_up = wait_until(
      [&] {
        return !processes_with_argv({"/bin/sleep", seconds}).empty();
      },
      std::chrono::seconds(10));
  kill(running.pid, SIGKILL);
  RunResult r = p.box.finish(running);
  BOOST_TEST_REQUIRE(sandbox_up, r.describe());
  BOOST_TEST(r.exit_code == 128 + SIGKILL, r.describe());
  BOOST_TEST(wait_until(
      [&] {
        return processes_with_argv({"/bin/sleep", seconds}).empty();
      },
      std::chrono::seconds(5)));
  // The premise: SIGKILL gave zpolicy no chance to clean up.
  BOOST_TEST_REQUIRE(exists(p.box.ws(".env")), "no placeholder was left behind to reconcile");
  BOOST_TEST_REQUIRE(exists(p.box.ws("data/agent-sessions")));
  // The user puts data into one leftover placeholder: it must survive reconciliation.
  p.box.write_file(p.box.ws(".next/user.txt"), "keep me\n");

  auto next = p.box.sh("true");
  BOOST_TEST_REQUIRE(next.completed(), next.describe());
  for (const char* gone : {".env", ".env.local", "data"})
    BOOST_TEST(!exists(p.box.ws(gone)), gone << " was not reconciled");
  BOOST_TEST(read_file(p.box.ws(".next/user.txt")).value_or("<missing>") == "keep me\n");
  BOOST_TEST(snapshot(p.box.ws(".git")) == p.git);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
