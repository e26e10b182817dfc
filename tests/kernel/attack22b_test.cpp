#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

// Attack 22b (docs/redteam-2026-12.md "Attack 22b (attack22b)"): loose22's class fix of
// A21B-4 (the walk alone judges a root, past 40 links refused, every later lookup follows
// no link) and ZP016's mount aliases (A21B-5), attacked with the real bwrap and kernel as
// root and as uid 65534. Each case is a finding's reproduction or a pin of what held,
// observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack22b)

namespace {

// Runs the caller's zpolicy under a seccomp filter of the kind written before openat2
// existed, which answers it with EPERM (strace's injection stands for it: every openat2 of
// every process below fails so).
const std::vector<std::string> kOpenat2Eperm = {
    "/usr/bin/strace",           "-f", "-qq", "-o", "/dev/null", "-e", "trace=openat2", "-e",
    "inject=openat2:error=EPERM"};

void symlink_at(const std::string& target, const std::string& at) {
  BOOST_TEST_REQUIRE(symlink(target.c_str(), at.c_str()) == 0, at << ": " << errno);
}

}  // namespace

// A22B-1: loose22's lookups that follow no link used openat2 and fell back to a walk of
// openat(O_NOFOLLOW) only on ENOSYS. Where a seccomp filter answers openat2 with EPERM (one
// written before openat2 existed, as older container runtimes' default profiles are),
// every lookup failed: the workspace was "not a directory" and every bound `compile`,
// `check` and `plan` was refused, exit 2, which worked before (stat(2) followed the links
// the walk had judged). EPERM falls back as ENOSYS does: the bound artifact is byte for
// byte the one made where openat2 works.
// A22B-2: the runner opens every path it binds with openat2 and has no other way; there,
// once resolution got through (with A22B-1's fix, on main, and under ENOSYS), every run
// failed at the bind, exit 125, "writable root '…' is not the directory that was verified
// (replaced or swapped for a symlink)".
// The preflight now says why, exit 4 `openat2-unavailable` for `run` and `plan`, and
// `doctor` has a check for it: nothing runs and the deny root stays unread.
BOOST_DATA_TEST_CASE(where_openat2_answers_eperm_a_bound_compile_works_and_a_run_is_unavailable,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string secret = box.base() + "/secret";
  box.make_dir(secret);
  box.write_file(secret + "/key", "secret-data\n");
  const std::string policy = box.write_policy(
      "deny.yaml", workspace_write_policy("[\"/\"]", "  protect: [.git, .env]\n  deny: [\"" +
                                                          secret + "\"]\n"));
  const std::vector<std::string> command = {
      "/bin/sh", "-c", "cat " + secret + "/key; echo pwned > written; echo " + kDoneMarker};
  // `zpolicy compile POLICY --target linux --workspace WS --emit bwrap.args` (what follows,
  // "--" and the command, is left to sh).
  auto compile = [&](const std::vector<std::string>& prefix) {
    RunSpec spec;
    spec.root_prefix = prefix;
    spec.launcher = {
        "/bin/sh",
        "-c",
        "exec \"$0\" compile \"$1\" --target linux --workspace \"$2\" --emit bwrap.args",
        zpolicy_binary(),
        policy,
        box.workspace()};
    spec.command = {"true"};
    return box.run(spec);
  };
  const RunResult plain = compile({});
  BOOST_TEST_REQUIRE(plain.exit_code == 0, plain.describe());
  BOOST_TEST(plain.out.find(secret) != std::string::npos, plain.describe());
  const RunResult eperm = compile(kOpenat2Eperm);
  BOOST_TEST(eperm.exit_code == 0, eperm.describe());
  BOOST_TEST(eperm.err.find("is not a directory") == std::string::npos, eperm.describe());
  BOOST_TEST(eperm.out == plain.out);

  const std::string before = snapshot(box.workspace());
  for (const bool plan : {false, true}) {
    RunSpec spec;
    spec.root_prefix = kOpenat2Eperm;
    if (plan) spec.launcher = {zpolicy_binary(), "plan", "--format", "json"};
    spec.options = {"--policy", policy};
    spec.command = command;
    const RunResult ran = box.run(spec);
    expect_refused(ran, 4,
                   "refusing to run without a sandbox: openat2-unavailable: openat2(2) is refused "
                   "(EPERM");
    BOOST_TEST(ran.out.find("secret-data") == std::string::npos, ran.describe());
  }
  BOOST_TEST(snapshot(box.workspace()) == before);

  RunSpec doctor;
  doctor.root_prefix = kOpenat2Eperm;
  doctor.launcher = {"/bin/sh", "-c", "exec \"$0\" doctor", zpolicy_binary()};
  const RunResult report = box.run(doctor);
  BOOST_TEST(report.exit_code == 4, report.describe());
  BOOST_TEST(report.out.find("failed\topenat2: openat2(2) is refused (EPERM") != std::string::npos,
             report.describe());
  BOOST_TEST(report.out.find("[openat2-unavailable]") != std::string::npos, report.describe());
}

// The pipeline's check that no bind destination crosses a link on this host (bwrap would
// follow it from its setup root, where /oldroot is the host's root: verify18) looked each
// stretch up with openat2 and took any failure but ELOOP for "no link". Where openat2
// answers EPERM (or ENOSYS), `verify` of a bound artifact whose destination passes through
// the host's link `WS/l` passed, exit 0 (linkfold23, session 23). The check now falls back
// to the walk that follows no link, as resolution does: the same refusal, exit 3, with and
// without openat2.
BOOST_DATA_TEST_CASE(where_openat2_answers_eperm_a_destination_through_a_host_link_is_still_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string victim = box.base() + "/victim";
  box.make_dir(victim);
  symlink_at(victim, box.workspace() + "/l");
  const std::string out = box.base() + "/out";
  box.make_dir(out);
  const std::string policy =
      box.write_policy("p.yaml", workspace_write_policy("[\"/usr\"]", "  protect: [.git]\n"));
  // Compile to OUT, add a bind whose destination passes through `l` before `--chdir`
  // (bwrap.args holds one argument per line), then verify what was written.
  auto verify = [&](const std::vector<std::string>& prefix) {
    RunSpec spec;
    spec.root_prefix = prefix;
    spec.launcher = {"/bin/sh",
                     "-c",
                     "\"$0\" compile \"$1\" --target linux --workspace \"$2\" --out \"$3\" && "
                     "sed -i \"s|^--chdir\\$|--ro-bind\\n/dev/null\\n$2/l/pwned\\n--chdir|\" "
                     "\"$3/bwrap.args\" && "
                     "exec \"$0\" verify \"$1\" \"$3\" --target linux --workspace \"$2\"",
                     zpolicy_binary(),
                     policy,
                     box.workspace(),
                     out};
    spec.command = {"true"};
    return box.run(spec);
  };
  const std::string refusal = "--ro-bind /dev/null " + box.workspace() +
                              "/l/pwned: the way to " + box.workspace() +
                              "/l/pwned holds a link on this host";
  for (const auto& prefix : {std::vector<std::string>{}, kOpenat2Eperm}) {
    const RunResult verified = verify(prefix);
    BOOST_TEST(verified.exit_code == 3, verified.describe());
    BOOST_TEST(verified.err.find(refusal) != std::string::npos, verified.describe());
  }
}

// Held: the walk counts links as the kernel does, to the link. A writable root reached
// through exactly 40 (39 `lN -> .`, then `t -> ../target`) is one the kernel opens, and
// runs: the command writes the target's `out`. One more is past the kernel's count (its own
// stat(2) says ELOOP) and is refused at resolution, exit 2, the target unchanged.
BOOST_DATA_TEST_CASE(a_root_through_exactly_the_kernels_forty_links_runs_and_one_more_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string h = box.base() + "/h";
  const std::string target = box.base() + "/target";
  box.make_dir(h);
  box.make_dir(target + "/out");
  for (int i = 1; i <= 40; ++i) symlink_at(".", h + "/l" + std::to_string(i));
  symlink_at("../target", h + "/t");
  auto through = [&](int links) {
    std::string root = h;
    for (int i = 1; i < links; ++i) root += "/l" + std::to_string(i);
    return root + "/t/out";
  };
  auto run_with_root = [&](const std::string& root) {
    RunSpec spec;
    spec.options = {"--policy",
                    box.write_policy("links.yaml",
                                     "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  "
                                     "read: [\"/\"]\n  write: [\"" +
                                         root + "\"]\n  protect: [.git, .env]\nnetwork: none\n")};
    spec.command = {"/bin/sh", "-c", "echo through > " + target + "/out/file; echo " + kDoneMarker};
    return box.run(spec);
  };

  struct stat st;
  BOOST_TEST_REQUIRE(stat(through(40).c_str(), &st) == 0);
  const int past_count = stat(through(41).c_str(), &st) == 0 ? 0 : errno;
  BOOST_TEST_REQUIRE(past_count == ELOOP);

  const std::string before = snapshot(target);
  const RunResult past = run_with_root(through(41));
  expect_refused(past, 2, "crosses more than 40 symlinks");
  BOOST_TEST(snapshot(target) == before);

  const RunResult at = run_with_root(through(40));
  BOOST_TEST(at.completed(), at.describe());
  BOOST_TEST(read_file(target + "/out/file").value_or("") == "through\n");
}

// Held: ZP016 judges a workspace by every name the host's mounts give a deny root or a
// part of it, however either is spelled. With `mount --bind SRV/data WS/mnt`: a workspace
// inside the alias (`WS/mnt/sub`), a deny root spelled through a host link
// (`BASE/srvlink/data`, `srvlink -> srv`), a deny root below the mount's root
// (`SRV/data/sub`, workspace `WS/mnt/sub`) and an alias of the alias (`WS/mnt2`, bound from
// `WS/mnt`) are each refused before resolution, exit 3, nothing ran and the deny root
// unread. An alias another mount covers shows something else and runs, the deny root
// still unreadable by its own name.
BOOST_DATA_TEST_CASE(a_workspace_in_a_deny_root_by_any_mount_alias_or_spelling_is_zp016,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string data = box.base() + "/srv/data";
  box.make_dir(data + "/sub");
  box.write_file(data + "/secret", "secret-data\n");
  symlink_at("srv", box.base() + "/srvlink");
  box.make_dir(box.ws("mnt"));
  box.make_dir(box.ws("mnt2"));
  const std::string before = snapshot(data);
  auto attempt = [&](const std::string& deny, const std::string& mounts,
                     const std::string& workspace) {
    RunSpec spec;
    // The workspace is entered once the mounts show it.
    spec.root_prefix =
        in_private_mount_namespace(mounts + " && cd \"$1\" && shift && exec \"$@\"", {workspace});
    spec.options = {"--policy", box.write_policy("alias.yaml",
                                                 workspace_write_policy(
                                                     "[\"/\"]", "  protect: [.git, .env]\n  deny: [\"" +
                                                                    deny + "\"]\n"))};
    spec.command = {"/bin/sh", "-c", "cat " + data + "/secret; echo " + kDoneMarker};
    return box.run(spec);
  };
  const std::string bind = "mount --bind " + data + " " + box.ws("mnt");
  struct Case {
    std::string deny, mounts, workspace;
  };
  for (const Case& c :
       std::vector<Case>{{data, bind, box.ws("mnt/sub")},
                         {box.base() + "/srvlink/data", bind, box.ws("mnt")},
                         {data + "/sub", bind, box.ws("mnt/sub")},
                         {data, bind + " && mount --bind " + box.ws("mnt") + " " + box.ws("mnt2"),
                          box.ws("mnt2")}}) {
    BOOST_TEST_CONTEXT(c.workspace << " " << c.deny) {
      const RunResult r = attempt(c.deny, c.mounts, c.workspace);
      expect_refused(r, 3, "ZP016");
      BOOST_TEST(r.err.find("by another name") != std::string::npos, r.describe());
      BOOST_TEST(r.out.find("secret-data") == std::string::npos, r.describe());
    }
  }
  const RunResult covered = attempt(
      data, bind + " && mount --bind " + box.ws("mnt2") + " " + box.ws("mnt"), box.ws("mnt"));
  BOOST_TEST(covered.completed(), covered.describe());
  BOOST_TEST(covered.out.find("secret-data") == std::string::npos, covered.describe());
  BOOST_TEST(snapshot(data) == before);
}

// Held (A22B-3): hard_links.cpp walks the writable roots by name, so a directory renamed
// back and forth while it walks (`backup` <-> `backup.x`) hides what it holds: with a host
// process flipping them, `backup/.env`, a hard link of the protected `.env`, was missing
// from 9 plans in 20, and 5 runs in 20 rewrote `.env` through it. A run in the same
// workspace cannot be that process: its own walk found the link and bound it read-only, and
// the kernel refuses to rename a directory that holds a mount of the sandbox's (EBUSY), the
// link's directory and every one above it alike, as it refuses to move (EXDEV) or write
// (EROFS) the link.
BOOST_DATA_TEST_CASE(a_run_cannot_move_what_would_hide_a_protected_files_other_name_from_a_walk,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws(".env"), "SECRET=1\n");
  box.make_dir(box.ws("x/backup"));
  BOOST_TEST_REQUIRE(link(box.ws(".env").c_str(), box.ws("x/backup/.env").c_str()) == 0);
  const std::string before = snapshot(box.workspace());
  const RunResult r = box.sh(
      "python3 -c '\n"
      "import errno, os\n"
      "for a, b in ((\"x\", \"y\"), (\"x/backup\", \"x/b2\"), (\"x/backup/.env\", \"x/e2\")):\n"
      "    try:\n"
      "        os.rename(a, b)\n"
      "        print(\"moved\", a)\n"
      "    except OSError as e:\n"
      "        print(\"refused\", a, errno.errorcode[e.errno])\n"
      "'; echo evil >> x/backup/.env || echo write-refused");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("moved") == std::string::npos, r.describe());
  // The link itself is a mount's root: moved, it would leave that mount (EXDEV).
  for (const char* name : {"x EBUSY", "x/backup EBUSY", "x/backup/.env EXDEV"})
    BOOST_TEST(r.out.find(std::string("refused ") + name) != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("write-refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws(".env")).value_or("") == "SECRET=1\n");
  BOOST_TEST(snapshot(box.workspace()) == before);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
