#include "sandbox_fixture.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace zpolicy::tests::kernel {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

void own(const std::string& path, Caller c) {
  if (lchown(path.c_str(), uid_of(c), uid_of(c)) != 0) fail("lchown " + path);
}

std::vector<std::string> caller_env(const std::string& home,
                                    const std::vector<std::string>& extra) {
  std::vector<std::string> env{std::string("PATH=") + kHostPath, "HOME=" + home, "LANG=C",
                               "USER=zpolicy-kt", std::string(kSecretName) + "=" + kSecretValue};
  for (const auto& e : extra) {
    auto name = e.substr(0, e.find('=') + 1);
    std::erase_if(env, [&](const std::string& x) { return x.rfind(name, 0) == 0; });
    env.push_back(e);
  }
  return env;
}

// Forks and execs argv with env in cwd, stdin from /dev/null, stdout and stderr into
// pipes. Everything else of this process (fds, blocked signals) stays behind.
Running spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
              const std::string& cwd, std::chrono::milliseconds limit, int stdin_fd = -1) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) fail("pipe2");
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  Running r;
  r.started = Clock::now();
  r.deadline = r.started + limit;
  r.pid = fork();
  if (r.pid < 0) fail("fork");
  if (r.pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s = 1; s < NSIG; ++s) signal(s, SIG_DFL);
    int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(120);
    syscall(SYS_close_range, 3, ~0U, 0);
    if (chdir(cwd.c_str()) != 0) _exit(121);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(122);
  }
  close(out[1]);
  close(err[1]);
  r.out_fd = out[0];
  r.err_fd = err[0];
  return r;
}

std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string h;
  for (unsigned char c : s) {
    h += digits[c >> 4];
    h += digits[c & 15];
  }
  return h;
}

void snapshot_into(const std::string& root, const std::string& rel, std::vector<std::string>& out) {
  std::string path = rel.empty() ? root : root + "/" + rel;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    out.push_back(rel + " missing");
    return;
  }
  std::ostringstream line;
  line << (rel.empty() ? "." : rel) << " mode=" << std::oct << st.st_mode << std::dec
       << " uid=" << st.st_uid << " gid=" << st.st_gid << " nlink=" << st.st_nlink;
  // A directory's mtime is left out: its entries are listed below it, and zpolicy's own
  // placeholders, created and removed again, legitimately touch it.
  if (S_ISREG(st.st_mode)) {
    line << " mtime=" << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec << " size=" << st.st_size
         << " data=" << hex(read_file(path).value_or("<unreadable>"));
  } else if (S_ISLNK(st.st_mode)) {
    line << " target=" << fs::read_symlink(path).string();
  }
  out.push_back(line.str());
  if (!S_ISDIR(st.st_mode)) return;
  std::vector<std::string> names;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  for (const auto& n : names) snapshot_into(root, rel.empty() ? n : rel + "/" + n, out);
}

std::string cmdline_of(const std::string& pid) {
  return read_file("/proc/" + pid + "/cmdline").value_or("");
}

struct Staged {
  std::string dir, zpolicy, probe, embedder;
};
Staged& staged() {
  static Staged s;
  return s;
}

// A copy of `from` in `dir`, mode 0755, owned by root.
std::string stage(const std::string& from, const std::string& dir) {
  std::string to = dir + "/" + fs::path(from).filename().string();
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  if (chmod(to.c_str(), 0755) != 0) fail("chmod " + to);
  return to;
}

// The harness starts zpolicy as root and, through setpriv, as uid 65534, and drives
// these host tools; without them every test would fail for the wrong reason.
struct HostPrerequisites {
  HostPrerequisites() {
    if (geteuid() != 0) throw std::runtime_error("the kernel tests must run as root");
    for (const char* tool : {ZPOLICY_BINARY, ZPOLICY_SECCOMP_PROBE, ZPOLICY_EMBEDDER,
                             "/usr/bin/bwrap", "/usr/bin/setpriv", "/usr/bin/unshare",
                             "/usr/bin/python3", "/usr/bin/cc", "/usr/bin/git"})
      if (access(tool, X_OK) != 0) throw std::runtime_error(std::string("missing ") + tool);
    char tmpl[] = "/var/tmp/zpolicy-kt-bin-XXXXXX";
    if (!mkdtemp(tmpl)) fail("mkdtemp");
    Staged& s = staged();
    s.dir = tmpl;
    if (chmod(s.dir.c_str(), 0755) != 0) fail("chmod " + s.dir);
    s.zpolicy = stage(ZPOLICY_BINARY, s.dir);
    s.probe = stage(ZPOLICY_SECCOMP_PROBE, s.dir);
    s.embedder = stage(ZPOLICY_EMBEDDER, s.dir);
    // The point of staging: fail here, once, rather than in every test as `nobody`.
    if (access(s.dir.c_str(), X_OK) != 0) fail("staging directory " + s.dir);
    // The host run lock (runner/host_run_lock.hpp) exists once root ran `zpolicy doctor`;
    // without it, runs as `nobody` would leave their placeholders until a root run.
    if (std::system((s.zpolicy + " doctor >/dev/null 2>&1").c_str()) == -1 ||
        access("/dev/zpolicy/runs.lock", R_OK) != 0)
      fail("zpolicy doctor did not create /dev/zpolicy/runs.lock");
  }
  ~HostPrerequisites() {
    std::error_code ec;
    fs::remove_all(staged().dir, ec);
  }
};
BOOST_TEST_GLOBAL_FIXTURE(HostPrerequisites);

}  // namespace

std::ostream& operator<<(std::ostream& os, Caller c) {
  return os << (c == Caller::Root ? "root" : "uid65534");
}

const std::string& zpolicy_binary() { return staged().zpolicy; }
const std::string& seccomp_probe() { return staged().probe; }
const std::string& embedder_binary() { return staged().embedder; }

uid_t uid_of(Caller c) { return c == Caller::Root ? 0 : 65534; }

bool RunResult::completed() const {
  return exit_code == 0 && !hit_limit && out.find(kDoneMarker) != std::string::npos;
}

std::string RunResult::describe() const {
  std::ostringstream s;
  s << "exit=" << exit_code << (hit_limit ? " (killed at the harness limit)" : "")
    << " seconds=" << seconds << "\n--- stdout ---\n"
    << out << "--- stderr ---\n"
    << err;
  return s.str();
}

Sandbox::Sandbox(Caller caller) : caller_(caller) {
  char tmpl[] = "/var/tmp/zpolicy-kt-XXXXXX";
  if (!mkdtemp(tmpl)) fail("mkdtemp");
  base_ = tmpl;
  if (chmod(base_.c_str(), 0755) != 0) fail("chmod " + base_);
  workspace_ = base_ + "/ws";
  home_ = base_ + "/home";
  make_dir(workspace_);
  make_dir(home_);
  write_file(home_ + "/.profile", "echo profile\n");
}

Sandbox::~Sandbox() {
  std::error_code ec;
  fs::remove_all(base_, ec);
  for (const auto& p : extra_) fs::remove_all(p, ec);
}

void Sandbox::make_dir(const std::string& path) const {
  std::string cur;
  std::istringstream comps(path);
  for (std::string c; std::getline(comps, c, '/');) {
    if (c.empty()) continue;
    cur += "/" + c;
    if (mkdir(cur.c_str(), 0755) == 0)
      own(cur, caller_);
    else if (errno != EEXIST)
      fail("mkdir " + cur);
  }
}

void Sandbox::write_file(const std::string& path, const std::string& content, mode_t mode) const {
  make_dir(path.substr(0, path.rfind('/')));
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << content;
    if (!f) fail("write " + path);
  }
  own(path, caller_);
  if (chmod(path.c_str(), mode) != 0) fail("chmod " + path);
}

RunResult Sandbox::host_command(const std::vector<std::string>& argv) const {
  std::vector<std::string> full;
  if (caller_ == Caller::Nobody)
    full = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  Running r = spawn(full, caller_env(home_, {}), workspace_, std::chrono::seconds(30));
  RunResult res = finish(r);
  if (res.exit_code != 0)
    throw std::runtime_error("host command failed: " + argv[0] + "\n" + res.describe());
  return res;
}

std::string Sandbox::write_policy(const std::string& name, const std::string& yaml) const {
  std::string path = base_ + "/" + name;
  std::ofstream f(path, std::ios::trunc);
  f << yaml;
  if (!f) fail("write " + path);
  f.close();
  chmod(path.c_str(), 0644);
  return path;
}

Running Sandbox::start(const RunSpec& spec) const {
  std::vector<std::string> argv = spec.root_prefix;
  if (caller_ == Caller::Nobody)
    argv.insert(argv.end(),
                {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
  if (spec.launcher.empty()) {
    argv.push_back(zpolicy_binary());
    argv.push_back("run");
  } else {
    argv.insert(argv.end(), spec.launcher.begin(), spec.launcher.end());
  }
  argv.insert(argv.end(), spec.options.begin(), spec.options.end());
  argv.push_back("--");
  argv.insert(argv.end(), spec.command.begin(), spec.command.end());
  return spawn(argv, caller_env(home_, spec.extra_env), spec.cwd.value_or(workspace_), spec.limit,
               spec.stdin_fd);
}

RunResult Sandbox::finish(Running& r) const {
  RunResult res;
  int status = 0;
  bool exited = false;
  std::optional<Clock::time_point> exited_at;
  for (;;) {
    auto now = Clock::now();
    if (!res.hit_limit && now >= r.deadline) {
      res.hit_limit = true;
      kill(r.pid, SIGKILL);
    }
    if (!exited && waitpid(r.pid, &status, WNOHANG) == r.pid) {
      exited = true;
      exited_at = now;
      res.seconds = std::chrono::duration<double>(now - r.started).count();
    }
    // A process that escaped the tree could keep the pipes open forever: stop reading
    // a little after zpolicy itself is gone.
    bool open = r.out_fd >= 0 || r.err_fd >= 0;
    if (exited && (!open || now - *exited_at > std::chrono::seconds(2))) break;
    pollfd fds[2] = {{r.out_fd, POLLIN, 0}, {r.err_fd, POLLIN, 0}};
    poll(fds, 2, 50);
    for (int i = 0; i < 2; ++i) {
      int& fd = i == 0 ? r.out_fd : r.err_fd;
      if (fd < 0 || !fds[i].revents) continue;
      char buf[4096];
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0)
        (i == 0 ? res.out : res.err).append(buf, static_cast<size_t>(n));
      else {
        close(fd);
        fd = -1;
      }
    }
  }
  for (int* fd : {&r.out_fd, &r.err_fd})
    if (*fd >= 0) {
      close(*fd);
      *fd = -1;
    }
  res.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return res;
}

RunResult Sandbox::run(const RunSpec& spec) const {
  Running r = start(spec);
  return finish(r);
}

RunResult Sandbox::sh(const std::string& script, const std::vector<std::string>& options) const {
  RunSpec spec;
  spec.options = options;
  spec.command = {"/bin/sh", "-c", script + "\necho '" + kDoneMarker + "'\n"};
  return run(spec);
}

HostProcess::HostProcess(Caller caller, const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) fail("fork");
  if (pid_ == 0) {
    uid_t id = uid_of(caller);
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || setgroups(0, nullptr) != 0 ||
        setresgid(id, id, id) != 0 || setresuid(id, id, id) != 0)
      _exit(120);
    syscall(SYS_close_range, 3, ~0U, 0);
    execv(cargv[0], cargv.data());
    _exit(122);
  }
}

HostProcess::~HostProcess() {
  if (reaped_) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

bool HostProcess::alive() {
  if (!reaped_ && waitpid(pid_, nullptr, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

bool exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) out.push_back(line);
  return out;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path, std::ios::trunc);
  for (const auto& l : lines) f << l << "\n";
  BOOST_TEST_REQUIRE(static_cast<bool>(f), path);
}

std::string source_file(const std::string& rel) {
  auto text = read_file(std::string(ZPOLICY_SOURCE_DIR) + "/" + rel);
  BOOST_REQUIRE_MESSAGE(text, "cannot read " << rel);
  return *text;
}

std::string snapshot(const std::string& root) {
  std::vector<std::string> lines;
  snapshot_into(root, "", lines);
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::vector<pid_t> processes_with_argv(const std::vector<std::string>& argv) {
  std::string want;
  for (const auto& a : argv) want += a + '\0';
  std::vector<pid_t> found;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end;
      long pid = std::strtol(e->d_name, &end, 10);
      if (*end || pid <= 0) continue;
      if (cmdline_of(e->d_name) == want) found.push_back(static_cast<pid_t>(pid));
    }
    closedir(d);
  }
  return found;
}

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  for (;;) {
    if (condition()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

namespace {
std::atomic<unsigned> token_counter{0};
}

std::string unique_token() {
  return std::to_string(getpid()) + "x" + std::to_string(++token_counter);
}

std::string this_suites_mark() {
  return "\n# zpolicy kernel tests, pid " + std::to_string(getpid());
}

std::string unique_sleep_seconds() {
  return "987654." + std::to_string(getpid()) + "0" + std::to_string(++token_counter);
}

}  // namespace zpolicy::tests::kernel
