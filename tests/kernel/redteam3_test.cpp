#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "sandbox_fixture.hpp"

// Round 3 of the 2026-12 red-team pass (docs/redteam-2026-12.md, "Round 3"): `zpolicy
// verify` handed a compiled directory whose bwrap.args an attacker edited, and the host
// run lock in /dev/shm owned by another local user. A test named after an open finding is
// disabled (it fails until the finding is closed); the others hold today.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) out.push_back(line);
  return out;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path, std::ios::trunc);
  for (const auto& l : lines) f << l << "\n";
  if (!f) throw std::runtime_error("write " + path);
}

// Where an edit goes in the compiled argv.
enum class At {
  End,            // before the closing --chdir: after every mount
  BeforeGitBind,  // before the read-only bind that protects WORKSPACE/.git
};

struct Edit {
  std::string name;
  At at;
  std::vector<std::string> args;  // "WS" stands for the workspace
};

std::ostream& operator<<(std::ostream& os, const Edit& e) { return os << e.name; }

// The default policy compiled for box's workspace into box.home()/out, `edit` spliced into
// its bwrap.args, then `zpolicy verify` of that directory as the caller. Returns verify's
// exit status and output.
std::pair<int, std::string> verify_edited(Sandbox& box, const Edit& edit) {
  const std::string policy =
      box.write_policy("policy.yaml", box.host_command({zpolicy_binary(), "show-default"}).out);
  const std::string out = box.home() + "/out";
  box.host_command({zpolicy_binary(), "compile", policy, "--target", "linux", "--workspace",
                    box.workspace(), "--out", out});
  auto args = read_lines(out + "/bwrap.args");
  std::vector<std::string> inserted;
  for (const auto& a : edit.args)
    inserted.push_back(a == "WS"                ? box.workspace()
                       : a.rfind("WS/", 0) == 0 ? box.workspace() + a.substr(2)
                                                : a);
  auto where = std::find(args.begin(), args.end(), "--chdir");
  if (edit.at == At::BeforeGitBind)
    for (size_t i = 0; i + 2 < args.size(); ++i)
      if (args[i] == "--ro-bind" && args[i + 2] == box.ws(".git"))
        where = args.begin() + static_cast<long>(i);
  BOOST_TEST_REQUIRE((where != args.end()),
                     "no place for the edit in\n"
                         << box.host_command({"/bin/cat", out + "/bwrap.args"}).out);
  args.insert(where, inserted.begin(), inserted.end());
  write_lines(out + "/bwrap.args", args);
  auto r = box.host_command({"/bin/sh", "-c",
                             "\"$0\" verify \"$1\" \"$2\" --target linux --workspace \"$3\" 2>&1; "
                             "echo \"verify-exit=$?\"",
                             zpolicy_binary(), policy, out, box.workspace()});
  const auto pos = r.out.rfind("verify-exit=");
  BOOST_TEST_REQUIRE(pos != std::string::npos, r.describe());
  return {std::stoi(r.out.substr(pos + 12)), r.out};
}

void expect_refused(const Edit& edit) {
  for (Caller caller : kCallers) {
    Sandbox box(caller);
    auto [code, text] = verify_edited(box, edit);
    BOOST_TEST(code == 3, caller << ": verify accepted bwrap.args with " << edit.name << " (exit "
                                 << code << ")\n"
                                 << text);
  }
}

// A private mount namespace with its own /dev/shm, held open by a sleeping process, so
// that runs can share a run lock other than the host's; uid 4242 acts in it as a hostile
// local user.
class PrivateShm {
 public:
  explicit PrivateShm(const Sandbox& root)
      : root_(root),
        ns_(Caller::Root, {"/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                           "mount -t tmpfs -o mode=1777 tmpfs /dev/shm && touch /dev/shm/ready && "
                           "exec sleep 600"}) {
    const std::string ready = "/proc/" + std::to_string(ns_.pid()) + "/root/dev/shm/ready";
    BOOST_TEST_REQUIRE(wait_until([&] { return exists(ready); }, std::chrono::seconds(10)));
  }
  // A RunSpec::root_prefix that enters the namespace and the directory `cwd` (nsenter
  // starts in the namespace's "/").
  std::vector<std::string> enter_in(const std::string& cwd) const {
    return {"/usr/bin/nsenter", "-t", std::to_string(ns_.pid()),  "-m", "--",
            "/bin/sh",          "-c", "cd \"$0\" && exec \"$@\"", cwd};
  }
  // Runs `script` in the namespace as uid 4242; throws unless it exits 0.
  void as_other(const std::string& script) const {
    root_.host_command({"/usr/bin/nsenter", "-t", std::to_string(ns_.pid()), "-m", "--",
                        "/usr/bin/setpriv", "--reuid=4242", "--regid=4242", "--clear-groups",
                        "/bin/sh", "-c", script});
  }
  // `path` as seen in the namespace, reached from the host.
  std::string host_path_of(const std::string& path) const {
    return "/proc/" + std::to_string(ns_.pid()) + "/root" + path;
  }
  // Starts `script` in the namespace as uid 4242, in the background.
  HostProcess start_other(const std::string& script) const {
    return HostProcess(Caller::Root, {"/usr/bin/nsenter", "-t", std::to_string(ns_.pid()), "-m",
                                      "--", "/usr/bin/setpriv", "--reuid=4242", "--regid=4242",
                                      "--clear-groups", "/bin/sh", "-c", script});
  }

 private:
  const Sandbox& root_;
  HostProcess ns_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam3)

// R3-V1 (fixed: accepted on main db78682, refused since the bwrap region proof landed,
// main 3735898): a writable bind of a system directory the policy only reads, accepted
// while the verifier probed only the paths the policy names. Run by hand, the edited argv
// let the command write /etc on the host.
const Edit kWritableSystemBinds[] = {
    {"--bind /etc /etc", At::End, {"--bind", "/etc", "/etc"}},
    {"--bind-try /etc /etc", At::End, {"--bind-try", "/etc", "/etc"}},
    {"--bind /usr/bin /usr/bin", At::End, {"--bind", "/usr/bin", "/usr/bin"}},
};
BOOST_DATA_TEST_CASE(verify_refuses_a_writable_bind_of_a_read_only_system_directory,
                     bdata::make(kWritableSystemBinds), edit) {
  expect_refused(edit);
}

// R3-V2 (fixed: accepted on main 3735898; --chmod is outside the verified subset).
// bwrap chmods host files through the writable workspace bind: a root-owned file in the
// workspace becomes setuid root (E0 through the artifact), and a protected directory
// chmodded before its read-only bind is world-writable on the host.
const Edit kChmods[] = {
    {"--chmod 4755 WS/tool", At::End, {"--chmod", "4755", "WS/tool"}},
    {"--chmod 0777 WS/.git before its bind", At::BeforeGitBind, {"--chmod", "0777", "WS/.git"}},
};
BOOST_DATA_TEST_CASE(verify_refuses_chmod_of_host_files, bdata::make(kChmods), edit) {
  expect_refused(edit);
}

// R3-V3 (fixed: accepted on main 3735898; --dir, and --symlink other than a readable
// root's name, are outside the verified subset): `--dir`, `--symlink` and
// `--perms` placed before a protected path's read-only bind create entries in the host's
// protected directory: a `.git/hooks/pre-commit` symlink that git on the host runs.
const Edit kCreationsInProtected[] = {
    {"--dir WS/.git/hooks2", At::BeforeGitBind, {"--dir", "WS/.git/hooks2"}},
    {"--symlink /tmp/evil WS/.git/hooks/pre-commit",
     At::BeforeGitBind,
     {"--dir", "WS/.git/hooks", "--symlink", "/tmp/evil", "WS/.git/hooks/pre-commit"}},
    {"--perms 0777 --dir WS/.git/x", At::BeforeGitBind, {"--perms", "0777", "--dir", "WS/.git/x"}},
};
BOOST_DATA_TEST_CASE(verify_refuses_creations_inside_a_protected_path,
                     bdata::make(kCreationsInProtected), edit) {
  expect_refused(edit);
}

// R3-V4 (fixed: accepted on main 3735898; a --tmpfs only at a private /tmp or a deny
// root): a private writable
// tmpfs over a directory the policy gives read-only from the host (/etc) is accepted; the
// command sees and writes an /etc of its own making.
BOOST_AUTO_TEST_CASE(verify_refuses_a_tmpfs_over_a_read_root) {
  expect_refused({"--tmpfs /etc", At::End, {"--tmpfs", "/etc"}});
}

// Held: bwrap options outside the verified subset, and binds by descriptor in a compiled
// directory (whatever the invoker's descriptor 5 holds when the argv is run by hand).
const Edit kOutsideTheSubset[] = {
    {"--bind-fd 5 WS", At::End, {"--bind-fd", "5", "WS"}},
    {"--uid 0", At::End, {"--uid", "0"}},
    {"--cap-add CAP_SYS_ADMIN", At::End, {"--cap-add", "CAP_SYS_ADMIN"}},
    {"--setenv LD_PRELOAD", At::End, {"--setenv", "LD_PRELOAD", "/tmp/x.so"}},
    {"--args 9", At::End, {"--args", "9"}},
    {"--dev-bind /dev /dev", At::End, {"--dev-bind", "/dev", "/dev"}},
    {"--bind-data 9 WS/.git/config", At::End, {"--bind-data", "9", "WS/.git/config"}},
};
BOOST_DATA_TEST_CASE(verify_refuses_options_it_does_not_model, bdata::make(kOutsideTheSubset),
                     edit) {
  expect_refused(edit);
}

// R3-L1 (OPEN on main 3735898 and e1-bind-fd 38c7304): the host run lock /dev/shm/zpolicy-runs.lock
// is a name in a world-writable sticky directory; a local user who creates it first (it survives
// until reboot) owns the name and may rename it away while runs are live. A run that starts after
// the swap locks another inode, so a root run in the same workspace ends "alone" and removes the
// placeholders that run relies on (E2 reopened): its sandbox creates the protected paths.
// Played in a private mount namespace with its own /dev/shm, so the host's lock is left
// alone; uid 4242 is the hostile user, who cannot even enter the workspace.
BOOST_TEST_DECORATOR(*boost::unit_test::disabled())
BOOST_AUTO_TEST_CASE(a_run_lock_renamed_by_another_user_keeps_protected_paths) {
  Sandbox user(Caller::Nobody);
  Sandbox root(Caller::Root);
  PrivateShm shm(root);
  shm.as_other("cd /dev/shm && touch zpolicy-runs.lock && chmod 666 zpolicy-runs.lock");
  const auto enter_ws = shm.enter_in(user.workspace());
  RunSpec first;
  first.root_prefix = enter_ws;
  first.cwd = user.workspace();
  first.command = {"/bin/sleep", "2"};
  Running a = root.start(first);
  if (!wait_until([&] { return exists(user.ws(".env")); }, std::chrono::seconds(10))) {
    auto ra = root.finish(a);
    BOOST_FAIL("the first run made no placeholder\n" << ra.describe());
  }
  shm.as_other(
      "cd /dev/shm && mv zpolicy-runs.lock old && touch zpolicy-runs.lock && "
      "chmod 666 zpolicy-runs.lock");
  RunSpec second;
  second.root_prefix = enter_ws;
  second.command = {
      "/bin/sh", "-c",
      "sleep 4\n"
      "for p in .git/config .env .env.local .next/x node_modules/x data/agent-sessions/x; do\n"
      "  echo pwn > $p 2>/dev/null && echo \"created $p\"\n"
      "done\n"
      "echo '" +
          std::string(kDoneMarker) + "'"};
  auto r = user.run(second);
  auto ra = root.finish(a);
  BOOST_TEST(ra.exit_code == 0, ra.describe());
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("created") == std::string::npos, r.describe());
}

// R3-L2 (held: fail closed, a denial of service): a local user who holds the host run
// lock exclusively makes every run of every user refuse after 5 s rather than run without
// it (which would let cleanup remove placeholders another run relies on).
BOOST_DATA_TEST_CASE(a_run_lock_held_exclusively_by_another_user_refuses_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox root(Caller::Root);
  Sandbox box(caller);
  PrivateShm shm(root);
  shm.as_other("cd /dev/shm && touch zpolicy-runs.lock && chmod 666 zpolicy-runs.lock");
  HostProcess holder = shm.start_other(
      "exec flock -x /dev/shm/zpolicy-runs.lock sh -c 'touch /dev/shm/held; exec sleep 60'");
  const std::string held = shm.host_path_of("/dev/shm/held");
  BOOST_TEST_REQUIRE(wait_until([&] { return exists(held); }, std::chrono::seconds(10)));
  RunSpec spec;
  spec.root_prefix = shm.enter_in(box.workspace());
  spec.command = {"/bin/sh", "-c", "echo pwn > ran"};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(!exists(box.ws("ran")), r.describe());
}

// R3-W1 (fixed: ZP013 covers /var/lib, /var/cache, /var/spool, /var/log): as root, a
// workspace where the host keeps what it runs or trusts next is refused: dpkg runs the
// maintainer scripts in /var/lib/dpkg/info as root at the next package operation,
// debconf's answers in /var/cache/debconf feed them. The E3 class.
const char* const kHostStateWorkspaces[] = {"/var/lib/dpkg/info", "/var/cache/debconf",
                                            "/var/lib/systemd", "/var/log", "/var/spool"};
BOOST_DATA_TEST_CASE(a_directory_the_host_runs_or_trusts_is_refused_as_a_workspace,
                     bdata::make(kHostStateWorkspaces), dir) {
  Sandbox box(Caller::Root);
  const std::string canary = std::string(dir) + "/zpolicy-kt-" + unique_token() + ".postinst";
  box.remove_later(canary);
  RunSpec spec;
  spec.cwd = dir;
  spec.command = {"/bin/sh", "-c", "echo 'echo pwn' > " + canary};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 3, r.describe());
  BOOST_TEST(r.err.find("[ZP013]") != std::string::npos, r.describe());
  BOOST_TEST(!exists(canary), "the sandbox wrote into " << dir << "\n" << r.describe());
}

// R3-E1s (OPEN on main 3735898 and e1-bind-fd 38c7304): a sandbox plants `sub` as a
// symlink to a directory outside its writable roots; a later run given `--workspace
// WS/sub` follows it when it resolves the workspace, so its sandbox writes the target. No
// race is needed: binding by descriptor binds what resolution found, and resolution
// follows a symlink in the workspace's spelling.
BOOST_TEST_DECORATOR(*boost::unit_test::disabled())
BOOST_DATA_TEST_CASE(a_workspace_spelled_through_a_planted_symlink_binds_nothing_else,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string victim = box.home() + "/project";
  box.make_dir(victim);
  const std::string before = snapshot(victim);
  auto plant = box.sh("ln -s " + victim + " sub");
  BOOST_TEST_REQUIRE(plant.completed(), plant.describe());
  RunSpec spec;
  spec.options = {"--workspace", box.ws("sub")};
  spec.command = {"/bin/sh", "-c", "echo pwn > pwned"};
  auto r = box.run(spec);
  BOOST_TEST(snapshot(victim) == before, "the run wrote into the symlink's target\n"
                                             << r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
