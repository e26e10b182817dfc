#include <fcntl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "pty.hpp"
#include "sandbox_fixture.hpp"

// Red team round 17 (docs/redteam-2026-12.md "Round 17 (red17)"): session 16's read-only
// streams, stage protections, device binds and git index reader, attacked. Each case is a
// finding's reproduction, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// Inside the sandbox: a session leader of its own takes stdin for its controlling terminal
// and asks for the console ioctl the kernel allows only a console's own session
// (VT_ACTIVATE of the console already shown: nothing changes when it is granted).
const std::string kTakeConsole = R"(
import fcntl, os, struct, termios
pid = os.fork()
if pid:
    os.waitpid(pid, 0)
    raise SystemExit
os.setsid()
try:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
except OSError:
    pass
st = bytearray(6)
fcntl.ioctl(0, 0x5603, st, True)  # VT_GETSTATE
try:
    fcntl.ioctl(0, 0x5606, struct.unpack("HHH", st)[0])  # VT_ACTIVATE
    open("vt_activate", "w").write("granted")
except OSError as e:
    open("vt_activate", "w").write(e.strerror)
)";

// A git index of version 2 holding one gitlink, `name`, as read-cache.c lays it out (the
// trailing checksum is not checked by zpolicy: zeros).
std::string index_with_gitlinks(const std::vector<std::string>& names) {
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  std::string entries;
  for (const auto& name : names) {
    std::string entry = std::string(24, '\0') + be32(0160000) + std::string(12, '\0') +
                        std::string(20, '\x11') + std::string{0, static_cast<char>(name.size())} +
                        name;
    entry += std::string(8 - entry.size() % 8, '\0');
    entries += entry;
  }
  return "DIRC" + be32(2) + be32(static_cast<uint32_t>(names.size())) + entries +
         std::string(20, '\0');
}

std::string index_with_gitlink(const std::string& name) { return index_with_gitlinks({name}); }

// The run after a sandbox planted something in the workspace, `touch ran` under a 4 GB
// address-space limit (the prefix wraps setpriv, so for either caller), so that a reader
// gone wrong ends at the limit rather than take the host's memory.
RunResult next_run_within_4_gb(const Sandbox& box, std::chrono::milliseconds limit) {
  RunSpec spec;
  spec.root_prefix = {"/bin/sh", "-c", "ulimit -v 4000000; exec \"$@\"", "sh"};
  spec.command = {"/bin/sh", "-c", "touch ran"};
  spec.limit = limit;
  return box.run(spec);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam17)

// R17-1: a terminal that is not a pseudo-terminal's, on stdin, and that no session holds
// (a root service writing to /dev/tty5, `zpolicy run ... < /dev/tty0` or `< /dev/ttyS0`
// from a job without a terminal). The sandbox's session leader took it for its own
// (TIOCSCTTY; an open without O_NOCTTY does the same) and then the ioctls of a console's own
// session were granted: VT_ACTIVATE switched the host's shown console, KDSETMODE and
// KDSKBMODE blank it and kill its keyboard; and when the sandbox's session ended, the kernel
// hung up every open file of the terminal, the caller's own. Such a terminal is refused now;
// the caller's own controlling terminal passes, and the sandbox cannot take that one
// (control). By the virtual console /dev/tty5 (a serial line behaves the same; none is free
// on every test host).
BOOST_DATA_TEST_CASE(a_virtual_console_that_is_not_the_callers_terminal_is_refused,
                     bdata::make(kCallers), caller) {
  const int vt = open("/dev/tty5", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (vt < 0) {
    BOOST_TEST_MESSAGE("no virtual console /dev/tty5 here: nothing to try");
    return;
  }
  {
    Sandbox box(caller);
    RunSpec spec;
    spec.stdin_fd = vt;
    spec.command = {"/usr/bin/python3", "-c", kTakeConsole};
    const RunResult r = box.run(spec);
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(
        r.err.find("stdin is a terminal that is neither a pseudo-terminal nor your controlling "
                   "terminal") != std::string::npos,
        r.describe());
    BOOST_TEST(!exists(box.ws("vt_activate")),
               "the command ran: VT_ACTIVATE " << read_file(box.ws("vt_activate")).value_or(""));
    termios t;
    const int got = tcgetattr(vt, &t), why = errno;
    BOOST_TEST(got == 0, "the caller's file was hung up: " << std::strerror(why));
  }
  // A file of its own: a sandbox that held the console as its terminal hangs up every open
  // file of it when its session ends (tty_vhangup_session), the caller's as well.
  close(vt);
  const int own = open("/dev/tty5", O_RDWR | O_NOCTTY | O_CLOEXEC);
  BOOST_TEST_REQUIRE(own >= 0);
  Sandbox box(caller);
  RunSpec spec;
  spec.stdin_fd = own;
  // Root makes the console its session's terminal, then becomes the caller.
  spec.root_prefix = {"/usr/bin/setsid", "-w", "-c"};
  spec.command = {"/usr/bin/python3", "-c", kTakeConsole};
  const RunResult r = box.run(spec);
  close(own);
  BOOST_TEST(r.exit_code == 0, "the caller's own console: " << r.describe());
  BOOST_TEST(read_file(box.ws("vt_activate")).value_or("") == "Operation not permitted",
             r.describe());
}

// R17-2: a git index was read whole into memory, whatever its size. A sandbox makes a
// nested repository and a sparse 3 GiB index in it (no disk used); every later run protects
// that repository's `.git` and read its index: 18 to 50 s of zeros, then bad_alloc under a
// 4 GB address-space limit (without one, 3 GiB of the host's memory; a larger sparse file,
// more). Now an index over 256 MiB refuses the run at once, naming the file.
BOOST_DATA_TEST_CASE(an_oversized_git_index_a_sandbox_planted_refuses_the_next_run_at_once,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const RunResult plant = box.sh(
      "mkdir -p n/.git && echo 'ref: refs/heads/main' > n/.git/HEAD && "
      "mkdir n/.git/objects n/.git/refs && truncate -s 3G n/.git/index");
  BOOST_TEST_REQUIRE(plant.completed(), plant.describe());
  const RunResult r = next_run_within_4_gb(box, std::chrono::milliseconds(90000));
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.err.find(box.ws("n/.git/index") + "' records, and it is larger than 256 MiB") !=
                 std::string::npos,
             r.describe());
  BOOST_TEST(!exists(box.ws("ran")));
}

// R17-4: an unpopulated submodule's directory is protected as a whole (A16-6), and its
// name came from the index as it was: a nested repository a sandbox made, whose index
// records the gitlink `..`, made its parent, the workspace, read-only for every later run
// (the run went ahead, each write failing with EROFS). A gitlink git never writes now
// refuses the run, naming the index.
BOOST_DATA_TEST_CASE(a_gitlink_git_never_writes_refuses_the_run, bdata::make(kCallers), caller) {
  for (const char* name : {"..", "sub/../..", ".", "a/.git", "a//b"}) {
    Sandbox box(caller);
    box.make_dir(box.ws("n/.git/objects"));
    box.make_dir(box.ws("n/.git/refs"));
    box.write_file(box.ws("n/.git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws("n/.git/index"), index_with_gitlink(name));
    const RunResult r = box.sh("touch wrote");
    BOOST_TEST(r.exit_code == 2, name << ": " << r.describe());
    BOOST_TEST(r.err.find("records '" + std::string(name) + "', a path git never writes") !=
                   std::string::npos,
               name << ": " << r.describe());
    BOOST_TEST(!exists(box.ws("wrote")), name << ": the command ran");
  }
}

// Noticed in round 17: bwrap's setup costs the square of its mounts (it rereads its mount
// table after each bind), and a sandbox decides how many the next run needs: a nested
// repository whose index records 2 500 submodules (each missing directory a placeholder
// and a mount), or as many nested `.git` directories (the default's `**/.git`), held every
// later run 30 s and then failed ("did not finish setting up", exit 125), after making
// every placeholder on the host. Past 1 024 mounts the run is refused at once, naming the
// index or the policy line, and nothing is made.
BOOST_DATA_TEST_CASE(a_sandbox_that_plants_a_thousand_mounts_gets_the_next_run_refused_at_once,
                     bdata::make(kCallers), caller) {
  {
    Sandbox box(caller);
    std::vector<std::string> names;
    for (int i = 0; i < 1100; ++i) names.push_back("sub" + std::to_string(10000 + i));
    box.make_dir(box.ws("n/.git/objects"));
    box.make_dir(box.ws("n/.git/refs"));
    box.write_file(box.ws("n/.git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws("n/.git/index"), index_with_gitlinks(names));
    const RunResult r = next_run_within_4_gb(box, std::chrono::milliseconds(90000));
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(r.err.find("most come from '" + box.ws("n/.git/index") + "' (1100 of them)") !=
                   std::string::npos,
               r.describe());
    BOOST_TEST(!exists(box.ws("ran")));
    BOOST_TEST(!exists(box.ws("n/sub10000")), "a placeholder was made");
    BOOST_TEST(!exists(box.ws("n/sub11099")), "a placeholder was made");
  }
  {
    Sandbox box(caller);
    const RunResult plant = box.sh("i=0; while [ $i -lt 1100 ]; do mkdir -p r$i/.git; i=$((i+1)); done");
    BOOST_TEST_REQUIRE(plant.completed(), plant.describe());
    const RunResult r = next_run_within_4_gb(box, std::chrono::milliseconds(90000));
    BOOST_TEST(r.exit_code == 2, r.describe());
    BOOST_TEST(r.err.find("mounts") != std::string::npos, r.describe());
    BOOST_TEST(r.err.find("most come from '<default-policy>:") != std::string::npos, r.describe());
    BOOST_TEST(!exists(box.ws("ran")));
  }
}

// R17-3: a writable root holding a mount of the host's device nodes (a chroot's `dev/pts`
// bound from the host's /dev/pts, its `dev` from /dev): the writable bind's copy kept that
// mount writable, and the sandbox changed the host's nodes through it: a root-started one
// made root's terminals writable by every user (no lint named it), nobody its own; through
// a bound /dev, after accepting ZP003 and ZP013 (which name home directories and
// /dev/mqueue), /dev/null's mode. Closed by hunt17's H17-11 (ZP017, never accepted, by the
// mount table's type): such a run is refused before anything runs, and the nodes are
// unchanged. The devpts-only bind is this round's member.
BOOST_DATA_TEST_CASE(the_host_device_nodes_a_writable_root_holds_stay_unchanged,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  Pty pty;
  if (caller == Caller::Nobody) BOOST_TEST_REQUIRE(fchown(pty.slave, 65534, -1) == 0);
  const std::string name = ttyname(pty.slave);
  const std::string number = name.substr(name.rfind('/') + 1);
  struct stat before;
  BOOST_TEST_REQUIRE(fstat(pty.slave, &before) == 0);
  box.make_dir(box.ws("chroot/dev/pts"));
  RunSpec spec;
  spec.root_prefix = in_private_mount_namespace(
      "p=$1; shift; mount --bind /dev/pts \"$p\" && exec \"$@\"", {box.ws("chroot/dev/pts")});
  spec.command = {"/bin/sh", "-c",
                  "t=chroot/dev/pts/$1; chmod 666 $t; touch -d 2000-01-01 $t; chown $(id -u) $t; "
                  "echo ran > ran",
                  "sh", number};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 3, r.describe());
  BOOST_TEST(r.err.find("which is devpts") != std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("ran")), r.describe());
  struct stat after;
  BOOST_TEST_REQUIRE(fstat(pty.slave, &after) == 0);
  BOOST_TEST(after.st_mode == before.st_mode,
             "mode " << std::oct << before.st_mode << " -> " << after.st_mode);
  BOOST_TEST(after.st_uid == before.st_uid);
  BOOST_TEST(after.st_mtim.tv_sec > 1'000'000'000, "the sandbox set the terminal's time back");
  BOOST_TEST((after.st_ctim.tv_sec == before.st_ctim.tv_sec &&
              after.st_ctim.tv_nsec == before.st_ctim.tv_nsec),
             "the terminal's attributes changed");

  // A writable root on the host's devtmpfs (the chroot's `dev` itself, bound from /dev).
  Sandbox on(caller);
  on.make_dir(on.ws("dev"));
  RunSpec in_dev;
  in_dev.root_prefix = in_private_mount_namespace(
      "p=$1; shift; mount --bind /dev \"$p\" && exec \"$@\"", {on.ws("dev")});
  in_dev.options = {"--accept", "ZP003", "--accept", "ZP013"};
  in_dev.cwd = on.ws("dev");
  // The mode it has: a chmod that got through changes nothing but the node's ctime, so the
  // host is unharmed when this fails.
  in_dev.command = {"/bin/sh", "-c", "chmod 666 null; echo ran > /proc/self/fd/1"};
  struct stat null_before;
  BOOST_TEST_REQUIRE(stat("/dev/null", &null_before) == 0);
  BOOST_TEST_REQUIRE((null_before.st_mode & 07777) == 0666);
  const RunResult d = on.run(in_dev);
  BOOST_TEST(d.exit_code != 0, d.describe());
  BOOST_TEST(d.out.find("ran") == std::string::npos, d.describe());
  BOOST_TEST(d.err.find("is on devtmpfs") != std::string::npos, d.describe());
  // Refused before its placeholders: made there, they were entries of the host's /dev.
  for (const char* name : {".env", ".git", "node_modules", "data"})
    BOOST_TEST(!exists(std::string("/dev/") + name), "/dev/" << name << " made");
  struct stat null_now;
  BOOST_TEST_REQUIRE(stat("/dev/null", &null_now) == 0);
  BOOST_TEST((null_now.st_ctim.tv_sec == null_before.st_ctim.tv_sec &&
              null_now.st_ctim.tv_nsec == null_before.st_ctim.tv_nsec),
             "the sandbox changed the host's /dev/null");
}

// The branch of the read-only streams (runner/read_only_streams.hpp) that had no test: a
// terminal on stdin that is not the caller's (root: another user's pty, after `su`; nobody:
// root's) and cannot be opened again (root: another node bound over its name; nobody: no
// permission) passes as the caller's own file, on the host's writable devpts. Held: the
// sandbox changes none of its attributes but its times to now (docs/run.md), by name or
// through /proc/self/fd/0, and reads what is typed on it.
BOOST_DATA_TEST_CASE(another_users_terminal_passed_as_it_is_stays_unchanged, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  Pty pty;
  BOOST_TEST_REQUIRE(fchown(pty.slave, caller == Caller::Root ? 65534 : 0, -1) == 0);
  BOOST_TEST_REQUIRE(fchmod(pty.slave, 0620) == 0);
  const std::string name = ttyname(pty.slave);
  struct stat before;
  BOOST_TEST_REQUIRE(fstat(pty.slave, &before) == 0);
  BOOST_TEST_REQUIRE(write(pty.master, "typed\n", 6) == 6);
  RunSpec spec;
  spec.stdin_fd = pty.slave;
  if (caller == Caller::Root)
    spec.root_prefix = in_private_mount_namespace(
        "p=$1; shift; mount --bind /dev/null \"$p\" && exec \"$@\"", {name});
  spec.command = {"/bin/sh", "-c",
                  "{ chmod 666 /proc/self/fd/0; touch -d 2000-01-01 /proc/self/fd/0; "
                  "touch /proc/self/fd/0; chown $(id -u) /proc/self/fd/0; "
                  "python3 -c 'import os; os.fchmod(0, 0o666)'; "
                  "python3 -c 'import os; os.utime(0, (1, 1))'; } 2>/dev/null; "
                  "read line; echo \"$line\" > got"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(read_file(box.ws("got")).value_or("") == "typed\n", r.describe());
  struct stat after;
  BOOST_TEST_REQUIRE(fstat(pty.slave, &after) == 0);
  BOOST_TEST(after.st_mode == before.st_mode);
  BOOST_TEST(after.st_uid == before.st_uid);
  BOOST_TEST(after.st_gid == before.st_gid);
  // Its times to now (`touch`) are what its group's write permission allows anyone.
  BOOST_TEST(after.st_mtim.tv_sec > 1'000'000'000, "the sandbox set the terminal's time back");
}

// R17-7: a nested repository's config is the sandbox's to write, and every later run reads
// it. Eight lines `[include] path = config` (a file including itself eight times) made 8^10
// reads: more than 60 s and 2.6 GB before anything ran. Now the first include nested deeper
// than git's limit stops the reading, as it stops git, and the run is refused at once.
BOOST_DATA_TEST_CASE(a_config_including_itself_refuses_the_next_run_at_once, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const RunResult plant = box.sh(
      "mkdir -p n/.git/objects n/.git/refs && echo 'ref: refs/heads/main' > n/.git/HEAD && "
      "{ echo '[include]'; for i in 1 2 3 4 5 6 7 8; do echo '\tpath = config'; done; } "
      "> n/.git/config");
  BOOST_TEST_REQUIRE(plant.completed(), plant.describe());
  const RunResult r = next_run_within_4_gb(box, std::chrono::milliseconds(60000));
  BOOST_TEST(!r.hit_limit, r.describe());
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.err.find("git config includes nest deeper than 10 files") != std::string::npos,
             r.describe());
  BOOST_TEST(!exists(box.ws("ran")));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
