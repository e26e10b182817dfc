#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <thread>

#include "sandbox_fixture.hpp"

// Round 3 of the 2026-12 red-team pass (docs/redteam-2026-12.md, "Round 3"): `zpolicy
// verify` handed a compiled directory whose bwrap.args an attacker edited, and the host
// run lock in /dev/shm owned by another local user. A test named after an open finding is
// disabled (it fails until the finding is closed); the others hold today.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

bool is_regular(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
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

void expect_edit_refused(const Edit& edit) {
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
  // `lock_dir_options`: the tmpfs mounted on the namespace's own /dev/zpolicy, where the
  // host run lock lives (runner/host_run_lock.hpp; the global fixture made the mount point
  // on the host); `lock_setup` then runs there as root. By default the lock is there, as
  // `zpolicy doctor` as root makes it.
  explicit PrivateShm(const Sandbox& root, const std::string& lock_dir_options = "mode=0755",
                      const std::string& lock_setup = "touch /dev/zpolicy/runs.lock")
      : root_(root),
        ns_(Caller::Root, {"/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                           "mount -t tmpfs -o mode=1777 tmpfs /dev/shm && "
                           // Private state directories too: a run outside the namespace
                           // takes another lock, so it could find itself alone and
                           // reconcile the records of runs in here.
                           "install -d -m 0700 /run/zpolicy && "
                           "install -d -o 65534 -g 65534 -m 0700 /tmp/zpolicy-65534 && "
                           "mount -t tmpfs -o mode=0700 tmpfs /run/zpolicy && "
                           "mount -t tmpfs -o mode=0700,uid=65534 tmpfs /tmp/zpolicy-65534 && "
                           "mount -t tmpfs -o " + lock_dir_options + " tmpfs /dev/zpolicy && " +
                           lock_setup + " && touch /dev/shm/ready && exec sleep 600"}) {
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
  // Runs `script` in the namespace as root (the host's administrator); throws unless it
  // exits 0.
  void as_root(const std::string& script) const {
    root_.host_command({"/usr/bin/nsenter", "-t", std::to_string(ns_.pid()), "-m", "--",
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

// Who runs a script in the namespace between the two runs of overlapping_runs.
enum class By { OtherUser, Root };

// Two runs in one workspace (owned by nobody), one by each caller, `first` started first;
// `between` runs in the namespace, `by` uid 4242 or root, once the first run made its
// placeholders. The second
// run outlives the first and then tries to create every protected path of the default
// policy: the first run's cleanup must have left each placeholder it relies on.
void overlapping_runs(Sandbox& user, Sandbox& root, const PrivateShm& shm, Caller first,
                           By by, const std::string& between) {
  Sandbox& a_box = first == Caller::Root ? root : user;
  Sandbox& b_box = first == Caller::Root ? user : root;
  const auto enter_ws = shm.enter_in(user.workspace());
  RunSpec a_spec;
  a_spec.root_prefix = enter_ws;
  a_spec.options = {"--workspace", user.workspace()};
  // The first run ends once the second one's command is running (it has locked and made
  // its placeholders by then), and the second tries its writes only once the first run
  // is gone and cleaned up: events, not sleeps, so that a loaded machine changes nothing.
  const std::string token = unique_token();
  a_spec.command = {"/bin/sh", "-c", "while [ ! -e b-up-" + token + " ]; do sleep 0.05; done"};
  Running a = a_box.start(a_spec);
  if (!wait_until([&] { return exists(user.ws(".env")); }, std::chrono::seconds(10))) {
    auto ra = a_box.finish(a);
    BOOST_FAIL("the first run made no placeholder\n" << ra.describe());
  }
  if (by == By::Root)
    shm.as_root(between);
  else
    shm.as_other(between);
  RunSpec b_spec;
  b_spec.root_prefix = enter_ws;
  b_spec.options = {"--workspace", user.workspace()};
  b_spec.command = {
      "/bin/sh", "-c",
      "while [ ! -e a-gone-" + token + " ]; do sleep 0.05; done\n"
      "for p in .git/config .env .env.local .next/x node_modules/x data/agent-sessions/x; do\n"
      "  echo pwn > $p 2>/dev/null && echo \"created $p\"\n"
      "done\n"
      "echo '" +
          std::string(kDoneMarker) + "'"};
  Running b = b_box.start(b_spec);
  // Seen from the host (a root sandbox cannot write the user's workspace).
  BOOST_TEST(wait_until([&] { return !processes_with_argv(b_spec.command).empty(); },
                        std::chrono::seconds(15)),
             "the second run's command never started");
  user.write_file(user.ws("b-up-" + token), "");
  auto ra = a_box.finish(a);
  user.write_file(user.ws("a-gone-" + token), "");
  auto r = b_box.finish(b);
  BOOST_TEST(ra.exit_code == 0, ra.describe());
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("created") == std::string::npos, r.describe());
}

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
  expect_edit_refused(edit);
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
  expect_edit_refused(edit);
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
  expect_edit_refused(edit);
}

// R3-V4 (fixed: accepted on main 3735898; a --tmpfs only at a private /tmp or a deny
// root): a private writable
// tmpfs over a directory the policy gives read-only from the host (/etc) is accepted; the
// command sees and writes an /etc of its own making.
BOOST_AUTO_TEST_CASE(verify_refuses_a_tmpfs_over_a_read_root) {
  expect_edit_refused({"--tmpfs /etc", At::End, {"--tmpfs", "/etc"}});
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
  expect_edit_refused(edit);
}

// R3-L1 (fixed; open on main 3735898 and e1-bind-fd 38c7304): the host run lock was
// /dev/shm/zpolicy-runs.lock, a name in a world-writable sticky directory; a local user who
// created it first owned the name and renamed it away while runs were live. A run that
// started after the swap locked another inode, so the first run ended "alone" and removed
// the placeholders the later run (another user's, in the same workspace) relied on: its
// sandbox created the protected paths. The lock is now /dev/zpolicy/runs.lock, which only
// root can create, rename or unlink: uid 4242 (who cannot even enter the workspace) plays
// the old attack and tries the new name, in either order of root's and nobody's runs.
// Played in a private mount namespace with its own /dev/shm and /dev/zpolicy, so the host's
// lock is left alone.
BOOST_DATA_TEST_CASE(a_run_lock_renamed_by_another_user_keeps_protected_paths,
                     bdata::make(kCallers), first) {
  Sandbox user(Caller::Nobody);
  Sandbox root(Caller::Root);
  PrivateShm shm(root);
  shm.as_other("cd /dev/shm && touch zpolicy-runs.lock && chmod 666 zpolicy-runs.lock");
  overlapping_runs(user, root, shm, first, By::OtherUser,
                   "cd /dev/shm && mv zpolicy-runs.lock old && touch zpolicy-runs.lock && "
                   "chmod 666 zpolicy-runs.lock && "
                   "! mv /dev/zpolicy/runs.lock /dev/zpolicy/old 2>/dev/null && "
                   "! rm -f /dev/zpolicy/runs.lock 2>/dev/null && "
                   "! touch /dev/zpolicy/runs2.lock 2>/dev/null && "
                   "! chmod 666 /dev/zpolicy/runs.lock 2>/dev/null && "
                   "test -f /dev/zpolicy/runs.lock");
}

// R3-L1, the rule behind the fix: a run that finds at its end that the lock's name no
// longer names the inode it locked removes nothing. Only root can replace the lock now;
// here the host's administrator does, while the first run is live, so that the second run
// locks another inode than the first and the first would otherwise end "alone".
BOOST_DATA_TEST_CASE(a_run_lock_replaced_while_runs_are_live_removes_nothing,
                     bdata::make(kCallers), first) {
  Sandbox user(Caller::Nobody);
  Sandbox root(Caller::Root);
  PrivateShm shm(root);
  overlapping_runs(user, root, shm, first, By::Root,
                   "cd /dev/zpolicy && mv runs.lock old && touch runs.lock && "
                   "chmod 644 runs.lock && rm old");
  BOOST_TEST(exists(user.ws(".env")), "the placeholders stay after a replaced lock");
}

// R3-L1, a lock nobody can trust: before root ever ran (no /dev/zpolicy), or a directory
// or file someone other than root owns or may write. The run goes ahead (its protected
// paths hold: they are bound read-only), says so on stderr, and leaves its placeholders,
// since it cannot tell whether another user's run relies on them. As root with no lock at
// all, the run makes a trusted one and cleans up as usual.
struct UntrustedLock {
  const char* name;
  const char* tmpfs_options;  // of /dev/zpolicy
  const char* setup;          // as root in the namespace, before the run
};
std::ostream& operator<<(std::ostream& os, const UntrustedLock& l) { return os << l.name; }
const UntrustedLock kUntrustedLocks[] = {
    {"no lock yet", "mode=0755", "true"},
    {"directory owned by uid 4242", "mode=0755,uid=4242", "touch /dev/zpolicy/runs.lock"},
    {"directory writable by all", "mode=1777", "touch /dev/zpolicy/runs.lock"},
    {"lock owned by uid 4242", "mode=0755",
     "touch /dev/zpolicy/runs.lock && chown 4242 /dev/zpolicy/runs.lock"},
    {"lock writable by all", "mode=0755",
     "touch /dev/zpolicy/runs.lock && chmod 666 /dev/zpolicy/runs.lock"},
    {"lock is a symlink", "mode=0755", "touch /dev/zpolicy/x && ln -s x /dev/zpolicy/runs.lock"},
    {"lock has a second link", "mode=0755",
     "touch /dev/zpolicy/runs.lock && ln /dev/zpolicy/runs.lock /dev/zpolicy/x"},
};
BOOST_DATA_TEST_CASE(an_untrusted_run_lock_leaves_placeholders,
                     bdata::make(kCallers) * bdata::make(kUntrustedLocks), caller, lock) {
  Sandbox box(caller);
  Sandbox root(Caller::Root);
  PrivateShm shm(root, lock.tmpfs_options, lock.setup);
  RunSpec spec;
  spec.root_prefix = shm.enter_in(box.workspace());
  spec.command = {"/bin/sh", "-c", "echo pwn > .env 2>/dev/null; echo pwn > ran"};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(exists(box.ws("ran")), r.describe());
  BOOST_TEST(!is_regular(box.ws(".env")), "the sandbox created .env\n" << r.describe());
  const bool root_makes_it = caller == Caller::Root && std::string(lock.name) == "no lock yet";
  if (root_makes_it) {
    BOOST_TEST(!exists(box.ws(".env")), "root's run made the lock and cleaned up\n" << r.describe());
    BOOST_TEST(r.err.find("note:") == std::string::npos, r.describe());
  } else {
    BOOST_TEST(exists(box.ws(".env")), "the placeholder must stay\n" << r.describe());
    BOOST_TEST(r.err.find("leaves them") != std::string::npos, r.describe());
  }
}

// R3-L2 (held: fail closed, a denial of service that remains): any local user may open
// the lock to take it (every run must), so one who holds it exclusively makes every run of
// every user refuse after 5 s rather than run without it (which would let cleanup remove
// placeholders another run relies on). Holding the old name in /dev/shm stops nothing.
BOOST_DATA_TEST_CASE(a_run_lock_held_exclusively_by_another_user_refuses_the_run,
                     bdata::make(kCallers), caller) {
  Sandbox root(Caller::Root);
  Sandbox box(caller);
  PrivateShm shm(root);
  shm.as_other("cd /dev/shm && touch zpolicy-runs.lock && chmod 666 zpolicy-runs.lock");
  HostProcess old_holder = shm.start_other(
      "exec flock -x /dev/shm/zpolicy-runs.lock sh -c 'touch /dev/shm/held-old; exec sleep 60'");
  const std::string held_old = shm.host_path_of("/dev/shm/held-old");
  BOOST_TEST_REQUIRE(wait_until([&] { return exists(held_old); }, std::chrono::seconds(10)));
  RunSpec spec;
  spec.root_prefix = shm.enter_in(box.workspace());
  spec.command = {"/bin/sh", "-c", "echo pwn > ran"};
  auto free_run = box.run(spec);
  BOOST_TEST(free_run.exit_code == 0, free_run.describe());
  BOOST_TEST(exists(box.ws("ran")), free_run.describe());
  unlink(box.ws("ran").c_str());

  HostProcess holder = shm.start_other(
      "exec flock -x /dev/zpolicy/runs.lock sh -c 'touch /dev/shm/held; exec sleep 60'");
  const std::string held = shm.host_path_of("/dev/shm/held");
  BOOST_TEST_REQUIRE(wait_until([&] { return exists(held); }, std::chrono::seconds(10)));
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

// R3-E1s (fixed; open on main 3735898 and e1-bind-fd 38c7304): a sandbox plants a symlink
// to a directory outside its writable roots; a later run given a --workspace spelled
// through it followed it when it resolved the workspace, so its sandbox wrote the target.
// No race is needed: binding by descriptor binds what resolution found. A workspace spelled
// through a symlink (other than a root-owned one directly in "/") is now refused, exit 2,
// naming the canonical form; given in that form, it runs (the user chose it).
struct PlantedSpelling {
  const char* name;
  const char* plant;    // run in the sandbox, in the workspace; VICTIM is the target
  const char* spelled;  // the --workspace given, WS/ for the workspace
};
std::ostream& operator<<(std::ostream& os, const PlantedSpelling& p) { return os << p.name; }
const PlantedSpelling kPlantedSpellings[] = {
    {"absolute link", "ln -s VICTIM sub", "WS/sub"},
    {"relative link", "ln -s ../home/project sub", "WS/sub"},
    {"link to the parent, then the name", "ln -s VICTIM/.. up", "WS/up/project"},
    {"link, then dot", "ln -s VICTIM sub", "WS/sub/."},
    {"link, then dot-dot back in", "mkdir -p d && ln -s VICTIM d/sub", "WS/d/sub/../project"},
    {"relative spelling from the workspace", "ln -s VICTIM sub", "sub"},
};
BOOST_DATA_TEST_CASE(a_workspace_spelled_through_a_planted_symlink_binds_nothing_else,
                     bdata::make(kCallers) * bdata::make(kPlantedSpellings), caller, planted) {
  Sandbox box(caller);
  const std::string victim = box.home() + "/project";
  box.make_dir(victim);
  const std::string before = snapshot(victim);
  auto with_paths = [&](std::string text) {
    for (auto at = text.find("VICTIM"); at != std::string::npos; at = text.find("VICTIM"))
      text.replace(at, 6, victim);
    return text.rfind("WS/", 0) == 0 ? box.workspace() + text.substr(2) : text;
  };
  auto plant = box.sh(with_paths(planted.plant));
  BOOST_TEST_REQUIRE(plant.completed(), plant.describe());
  const std::string spelled = with_paths(planted.spelled);
  RunSpec spec;
  spec.options = {"--workspace", spelled};
  spec.command = {"/bin/sh", "-c", "echo pwn > pwned"};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.err.find("--workspace " + victim) != std::string::npos, r.describe());
  BOOST_TEST(snapshot(victim) == before, "the run wrote into the symlink's target\n"
                                             << r.describe());
  const std::string policy =
      box.write_policy("policy.yaml", box.host_command({zpolicy_binary(), "show-default"}).out);
  auto compiled = box.host_command({"/bin/sh", "-c",
                                    "cd \"$0\" && \"$1\" compile \"$2\" --target linux "
                                    "--workspace \"$3\" >/dev/null 2>&1; echo \"exit=$?\"",
                                    box.workspace(), zpolicy_binary(), policy, spelled});
  BOOST_TEST(compiled.out == "exit=2\n", "compile bound the symlink's target: " << compiled.out);

  // Positive control: given in canonical form, the target is the workspace by choice.
  spec.options = {"--workspace", victim};
  auto chosen = box.run(spec);
  BOOST_TEST(chosen.exit_code == 0, chosen.describe());
  BOOST_TEST(exists(victim + "/pwned"), chosen.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
