#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// The steps the attack suites share, so that a case reads as setup, attack, assertion: the
// host's scenes (a victim, links, a bind mount, a git workspace, what only root may see),
// the attack's run and the checks of a refusal. Every check stays a BOOST_TEST of its own.
namespace zpolicy::tests::kernel {

// `path` made root's, with `mode`: another user's directory to uid 65534 (root ignores
// the mode).
inline void root_owned(const std::string& path, mode_t mode) {
  BOOST_TEST_REQUIRE(chown(path.c_str(), 0, 0) == 0);
  BOOST_TEST_REQUIRE(chmod(path.c_str(), mode) == 0);
}

// `zpolicy ARGS` on the host as the caller, "status=N" appended to its output.
inline RunResult zpolicy_on_host(const Sandbox& box, const std::vector<std::string>& args) {
  std::string script = "\"$0\"";
  for (size_t i = 0; i < args.size(); ++i) script += " \"$" + std::to_string(i + 1) + "\"";
  std::vector<std::string> argv = {"/bin/sh", "-c", script + "; echo \"status=$?\"",
                                   zpolicy_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return box.host_command(argv);
}

// The argv of a compiled `bwrap.args` (without its seccomp descriptor, which a run by
// hand does not pass), then `-- /bin/sh -c SCRIPT`, run with the real bwrap as the caller.
inline RunResult bwrap_by_hand(const Sandbox& box, const std::vector<std::string>& args,
                               const std::string& script) {
  std::vector<std::string> argv = {"/bin/sh", "-c", "\"$@\"; echo \"status=$?\"", "sh",
                                   "/usr/bin/bwrap"};
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--seccomp") {
      ++i;
      continue;
    }
    argv.push_back(args[i]);
  }
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", script});
  return box.host_command(argv);
}

// A workspace-write policy reading `read` (a YAML list), writing the workspace, with
// `rules` (whole lines: `  protect: […]\n`, `  deny: […]\n`) and no network.
inline std::string workspace_write_policy(const std::string& read, const std::string& rules) {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: " + read +
         "\n  write: [\"${WORKSPACE}\"]\n" + rules + "network: none\n";
}

// Read roots for the system's programs and the workspace only (the host otherwise unreadable).
inline const std::string kNarrowRead = "[/usr, /bin, /lib, /lib64, /etc, \"${WORKSPACE}\"]";

// `zpolicy run` of `spec` (its options, prefix, cwd, env) with the command `sh -c SCRIPT`,
// kDoneMarker printed after it whatever its status.
inline RunResult run_script(const Sandbox& box, RunSpec spec, const std::string& script) {
  spec.command = {"/bin/sh", "-c", script + "; echo '" + kDoneMarker + "'"};
  return box.run(spec);
}

// `spec`'s command reads `mnt/k` ("topsecret\n", in a deny root the host's bind shows at
// WS/mnt) and writes `other`: the run works, the read fails and shows nothing of the key,
// and the rest of the workspace stays writable.
inline void expect_bound_deny_root_unread(const Sandbox& box, const RunSpec& spec) {
  const RunResult r = run_script(box, spec, "cat mnt/k || echo refused; echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("topsecret") == std::string::npos, r.describe());
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// An earlier run's command, under the default policy behind `root_prefix`, that must
// succeed: kDoneMarker only after `script` exits 0.
inline void plant(const Sandbox& box, const std::string& script,
                  const std::vector<std::string>& root_prefix = {}) {
  RunSpec spec;
  spec.root_prefix = root_prefix;
  spec.command = {"/bin/sh", "-c", script + " && echo '" + kDoneMarker + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
}

// A run refused before its command ran: exit `exit`, no kDoneMarker, `message` on stderr.
inline void expect_refused(const RunResult& r, int exit, const std::string& message) {
  BOOST_TEST(r.exit_code == exit, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find(message) != std::string::npos, r.describe());
}

// The host's BASE/victim with `out/file` ("orig\n"), which no policy names: where an
// attack through a planted link aims to write.
struct Victim {
  std::string dir, before;  // before: its snapshot when made

  explicit Victim(const Sandbox& box) : dir(box.base() + "/victim") {
    box.make_dir(dir + "/out");
    box.write_file(dir + "/out/file", "orig\n");
    before = snapshot(dir);
  }
  bool unchanged() const { return snapshot(dir) == before; }
  std::string file() const { return read_file(dir + "/out/file").value_or("<missing>"); }
};

// The control of a refusal through `link`, a link an earlier run planted to the victim (or
// a directory holding one): with `link` a real directory holding `out`, `spec` writing
// "mine" to `named_out/file` (the command's name for `link/out`) completes, the host reads
// it at `link/out/file`, and the victim is still unchanged.
inline void expect_runs_over_a_real_directory(const Sandbox& box, const RunSpec& spec,
                                              const Victim& victim, const std::string& link,
                                              const std::string& named_out) {
  box.host_command({"/bin/rm", "-r", link});
  box.make_dir(link + "/out");
  const RunResult control = run_script(box, spec, "echo mine > '" + named_out + "/file'");
  BOOST_TEST(control.completed(), control.describe());
  BOOST_TEST(read_file(link + "/out/file").value_or("<missing>") == "mine\n");
  BOOST_TEST(victim.unchanged());
}

// A link made on the host by the caller (`ln -s target at`).
inline void host_link(const Sandbox& box, const std::string& target, const std::string& at) {
  box.host_command({"/bin/ln", "-s", target, at});
}

// BASE/host, a directory of the host's own for its links.
inline std::string host_dir(const Sandbox& box) {
  const std::string host = box.base() + "/host";
  box.make_dir(host);
  return host;
}

// The host's directory BASE/srv, shown in the workspace at WS/mnt by the host's
// `mount --bind` for the runs whose RunSpec::root_prefix is `prefix`.
struct SrvBind {
  std::string src;
  std::vector<std::string> prefix;
};
inline SrvBind srv_bound_at_mnt(const Sandbox& box) {
  SrvBind b{box.base() + "/srv", host_bind_mount(box.base() + "/srv", box.ws("mnt"))};
  box.make_dir(b.src);
  box.make_dir(box.ws("mnt"));
  return b;
}

// A directory (`mkdir`) and a file made by root, not the caller, with these modes: what the
// caller cannot look at, in BASE/priv (0700, or 0711 to stat but not search below).
inline void root_dir(const std::string& path, mode_t mode) {
  BOOST_TEST_REQUIRE(mkdir(path.c_str(), mode) == 0);
}
inline void root_file(const std::string& path, const std::string& content, mode_t mode) {
  { std::ofstream(path) << content; }
  BOOST_TEST_REQUIRE(chmod(path.c_str(), mode) == 0);
}

// The workspace a git repository of the caller's (`git init`), its `.git/config` the
// core section followed by `config` (remotes, rewrites, includes).
// git_config alone rewrites the configuration of a workspace git_init made earlier.
inline void git_init(const Sandbox& box) {
  box.host_command({"/usr/bin/git", "init", "-q", box.workspace()});
}
inline void git_config(const Sandbox& box, const std::string& config) {
  box.write_file(box.ws(".git/config"),
                 "[core]\n\trepositoryformatversion = 0\n\tbare = false\n" + config);
}
inline void git_workspace(const Sandbox& box, const std::string& config) {
  git_init(box);
  git_config(box, config);
}
inline std::string git_remote(const std::string& url) {
  return "[remote \"origin\"]\n\turl = " + url + "\n";
}
inline std::string git_rewrite(const std::string& base, const std::string& key = "insteadOf") {
  return "[url \"" + base + "\"]\n\t" + key + " = https://example.test/\n";
}

// The workspace a linked worktree whose git directory is the host's BASE/adm/wt, its
// `commondir` naming `commondir`; returns BASE/adm/wt.
inline std::string linked_worktree(const Sandbox& box, const std::string& commondir) {
  const std::string adm = box.base() + "/adm/wt";
  box.make_dir(adm);
  box.write_file(adm + "/HEAD", "ref: refs/heads/master\n");
  box.write_file(adm + "/commondir", commondir + "\n");
  box.write_file(adm + "/gitdir", box.ws(".git") + "\n");
  box.write_file(box.ws(".git"), "gitdir: " + adm + "\n");
  return adm;
}

// Checked from the host: `path` is (still) a symlink.
inline bool is_symlink(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// A Python script run inside the sandbox that tries operations on paths and prints one line
// each, "OP PATH RESULT" (`ok` or the errno's name): `body` after a head giving it
// `tryit(op, path, f)`, `acl(entries)` (a POSIX ACL attribute's value from (tag, perms)
// pairs) and `chmod_by_fd(path, mode)` (chmod through an O_PATH descriptor's /proc name).
inline std::string python_try_each(const char* body) {
  return std::string(R"(
import errno, os, struct, sys
def acl(entries):
    return struct.pack('<I', 2) + b''.join(struct.pack('<HHi', t, p, -1) for t, p in entries)
def tryit(op, path, f):
    try:
        f()
        print(op, path, 'ok')
    except OSError as e:
        print(op, path, errno.errorcode.get(e.errno, e.errno))
def chmod_by_fd(path, mode):
    fd = os.open(path, os.O_PATH | os.O_NOFOLLOW)
    try:
        os.chmod('/proc/self/fd/%d' % fd, mode)
    finally:
        os.close(fd)
)") + body;
}

// A Python RunSpec::root_prefix (`/usr/bin/python3 -c SCRIPT WORKSPACE SEEN`, the run's argv
// after them) that runs the run as a job of its own: a process group whose parent, the
// script, is in another group of the session, so not orphaned and stopped by a stop signal
// whatever group the suite runs in (CI's detached runs leave that one orphaned, where
// zpolicy by design does not stop). `body` runs beside the job with `workspace`, `seen`,
// `job` (the job's first process: zpolicy, which setpriv execs, unless a tracer comes
// first), `read(path)` and `state(pid)` (the letter of /proc/PID/stat) and sets `what`,
// which is written into `seen`; then the script exits with the job's status.
inline std::string python_own_job(const std::string& body) {
  return R"(
import os, sys, time, signal
workspace, seen, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    os.execv(argv[0], argv)
try:
    os.setpgid(job, job)
except OSError:  # the child was first, and has exec'd
    pass
def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError:
        return b''
def state(pid):
    stat = read('/proc/%d/stat' % pid).decode(errors='replace')
    return stat[stat.rfind(')') + 2:][:1]
)" + body +
         R"(
with open(seen, 'w') as f:
    f.write(what)
_, status = os.waitpid(job, 0)
sys.exit(os.waitstatus_to_exitcode(status) & 255)
)";
}

}  // namespace zpolicy::tests::kernel
