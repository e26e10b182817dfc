#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/seccomp/libseccomp_reference.hpp"
#include "compiler/frontend/oci_import.hpp"
#include "compiler/resolve/seccomp_baseline.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "ir/syscall_table.hpp"
#include "sandbox_fixture.hpp"

namespace ir = zpolicy::ir;
namespace zc = zpolicy::compiler;
using zpolicy::emitters::seccomp::emit_bpf;
using zpolicy::tests::kernel::seccomp_probe;

namespace {

struct FilteredOutcome {
  int status = -1;  // bwrap's exit status: the command's, or 128+N when killed by N
  std::vector<std::string> lines;
};

// Runs `cmd` under the real bwrap with `filter` loaded through --seccomp, as root or as
// nobody (uid 65534, no groups).
FilteredOutcome sandboxed(const std::string& filter, const std::vector<std::string>& cmd,
                          bool as_nobody) {
  const int fd = memfd_create("seccomp.bpf", 0);  // inherited: bwrap reads it
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(write(fd, filter.data(), filter.size()) == static_cast<ssize_t>(filter.size()));
  BOOST_REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
  int out[2];
  BOOST_REQUIRE(pipe2(out, O_CLOEXEC) == 0);
  std::vector<std::string> argv;
  if (as_nobody)
    argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  for (const char* a : {"/usr/bin/bwrap", "--unshare-user", "--unshare-pid", "--unshare-net",
                        "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc",
                        "/proc", "--tmpfs", "/tmp",
                        // The probe stays visible should the build tree live under /tmp.
                        "--ro-bind", seccomp_probe().c_str(), seccomp_probe().c_str(),
                        "--cap-drop", "ALL", "--disable-userns", "--chdir", "/tmp",
                        "--setenv", "HOME", "/tmp", "--seccomp"})
    argv.push_back(a);
  argv.push_back(std::to_string(fd));
  argv.push_back("--");
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out[1], 1);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(out[1]);
  close(fd);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  FilteredOutcome o;
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) o.lines.push_back(line);
  return o;
}

uint32_t nr(const char* name) {
  const auto* s = ir::find_syscall(ir::Arch::X86_64, name);
  BOOST_REQUIRE_MESSAGE(s != nullptr, name);
  return s->nr;
}

std::string call(const char* name, std::vector<uint64_t> args = {}) {
  std::string s = std::to_string(nr(name));
  for (uint64_t a : args) s += "," + std::to_string(a);
  return s;
}

// Runs the probe with one call per entry and checks each answer line.
void expect_probe(const ir::SyscallPolicy& policy,
                  const std::vector<std::pair<std::string, std::string>>& calls) {
  std::vector<std::string> cmd{seccomp_probe()};
  for (const auto& c : calls) cmd.push_back(c.first);
  const std::string filter = emit_bpf(policy);
  for (bool nobody : {false, true}) {
    BOOST_TEST_CONTEXT((nobody ? "as nobody" : "as root")) {
      const FilteredOutcome o = sandboxed(filter, cmd, nobody);
      BOOST_TEST(o.status == 0);
      BOOST_REQUIRE_EQUAL(o.lines.size(), calls.size());
      for (size_t i = 0; i < calls.size(); ++i) {
        const std::string& want = calls[i].second;
        const std::string& got = o.lines[i];
        // "ret=" alone asks for any successful return.
        const bool ok = want == "ret=" ? got.rfind("ret=", 0) == 0 : got == want;
        BOOST_TEST(ok, calls[i].first << ": got " << got << ", want " << want);
      }
    }
  }
}

// Every unconditional deny of the built-in baseline (clone3 and openat2 answer ENOSYS
// whatever the policy's action, and are probed on their own).
// The baseline's unconditional rules with the policy's deny action (`action`); the others
// answer a fixed errno: ENOSYS (set-id modes through openat2), EOPNOTSUPP (attributes).
std::vector<std::string> baseline_names(const ir::SyscallPolicy& p, const ir::Action& action) {
  std::vector<std::string> out;
  for (const auto& r : p.rules)
    if (r.loc.file == ir::kBuiltinFile && r.conditions.empty() && r.action == action)
      out.push_back(r.name);
  return out;
}

constexpr uint64_t kHigh = uint64_t{1} << 32;
constexpr uint64_t kSockStream = 1, kAfVsock = 40;
constexpr uint64_t kCloneNewUser = 0x10000000;

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_kernel)

BOOST_AUTO_TEST_CASE(baseline_denies_fail_with_eperm) {
  const auto policy = zc::effective_syscalls(ir::Policy{}, ir::Mode::WorkspaceWrite);
  const auto names = baseline_names(policy, ir::Action::errno_(1));
  BOOST_TEST(names.size() >= 30u);
  std::vector<std::pair<std::string, std::string>> calls;
  for (const auto& n : names) calls.push_back({call(n.c_str()), "errno=1"});
  expect_probe(policy, calls);
}

// Setting or removing an extended attribute answers "not supported" whatever the policy's
// action, so that copying tools keep none instead of failing (red team A27B-1).
BOOST_AUTO_TEST_CASE(attribute_changes_answer_not_supported) {
  const auto policy = zc::effective_syscalls(ir::Policy{}, ir::Mode::WorkspaceWrite);
  std::vector<std::pair<std::string, std::string>> calls;
  for (const auto name : zc::kAttributeChanges)
    calls.push_back({call(std::string(name).c_str()), "errno=" + std::to_string(zc::kEOPNOTSUPP)});
  BOOST_TEST(calls.size() == baseline_names(policy, ir::Action::errno_(zc::kEOPNOTSUPP)).size());
  expect_probe(policy, calls);
}

BOOST_AUTO_TEST_CASE(the_filter_itself_answers) {
  // With a marker errno the answers cannot come from the kernel's own permission checks
  // (a sandbox without capabilities gets EPERM for many of these calls anyway).
  ir::Policy p;
  p.syscalls.action.value = ir::Action::errno_(200);
  const auto policy = zc::effective_syscalls(p, ir::Mode::WorkspaceWrite);
  std::vector<std::pair<std::string, std::string>> calls;
  for (const auto& n : baseline_names(policy, ir::Action::errno_(200)))
    calls.push_back({call(n.c_str()), "errno=200"});
  calls.push_back({call("clone", {kCloneNewUser}), "errno=200"});
  calls.push_back({call("clone", {kCloneNewUser | kHigh}), "errno=200"});
  calls.push_back({call("socket", {1, kSockStream, 0}), "errno=200"});
  calls.push_back({call("ioctl", {0, zc::kTIOCSTI | kHigh, 0}), "errno=200"});
  expect_probe(policy, calls);
}

BOOST_AUTO_TEST_CASE(escapes_are_refused_and_ipc_works) {
  const auto policy = zc::effective_syscalls(ir::Policy{}, ir::Mode::WorkspaceWrite);
  expect_probe(
      policy,
      {
          {call("socket", {1 /* AF_UNIX */, kSockStream, 0}), "errno=1"},
          {call("socket", {kAfVsock | kHigh, kSockStream, 0}), "errno=1"},
          {call("socket", {2 /* AF_INET */, kSockStream, 0}), "errno=1"},
          {"socketpair", "ret=0"},
          {call("ioctl", {0, zc::kTIOCSTI, 0}), "errno=1"},
          {call("ioctl", {0, zc::kTIOCSTI | kHigh, 0}), "errno=1"},
          {call("ioctl", {0, zc::kTIOCLINUX, 0}), "errno=1"},
          {call("ioctl", {0, 0x5401 /* TCGETS */, 0}), "errno=25"},  // ENOTTY: ioctl still works
          {call("ptrace", {0 /* PTRACE_TRACEME */}), "errno=1"},
          {call("clone3", {0, 0}), "errno=38"},
          {call("openat2", {0, 0, 0, 0}), "errno=38"},
          // The mode test answers before the kernel reads the path (NULL: EFAULT if allowed).
          {call("chmod", {0, 04755}), "errno=1"},
          {call("chmod", {0, 02000 | kHigh}), "errno=1"},
          {call("fchmodat", {0, 0, 06755}), "errno=1"},
          {call("openat", {0, 0, 0100 /* O_CREAT */, 04700}), "errno=1"},
          {call("mknod", {0, 0100000 | 02755, 0}), "errno=1"},
          {call("chmod", {0, 01755}), "errno=14"},
          {call("chmod", {0, 01777}), "errno=1"},  // write for every user (red team A27B-1)
          {call("openat", {0, 0, 0100, 0755 | kHigh}), "errno=14"},
          {"470", "errno=38"},
          {"1000", "errno=38"},
          {call("getpid"), "ret="},
          {"fork:" + std::to_string(ir::kX32SyscallBit | 39) /* x32 getpid */, "signal=31"},
      });
}

BOOST_AUTO_TEST_CASE(kill_action_kills_the_process) {
  const auto policy = zc::effective_syscalls(
      [] {
        ir::Policy p;
        p.mode.value = ir::Mode::ReadOnly;
        p.syscalls.action.value = ir::Action::kill();
        return p;
      }(),
      ir::Mode::ReadOnly);
  expect_probe(policy, {
      {"fork:" + call("ptrace", {0}), "signal=31"},
      {"fork:" + call("socket", {1, kSockStream, 0}), "signal=31"},
      {"fork:" + call("clone3", {0, 0}), "exit=38"},  // still ENOSYS: libc falls back
      {call("getpid"), "ret="},
  });
}

BOOST_AUTO_TEST_CASE(i386_calls_are_killed) {
  // Some hosts refuse `int 0x80` from 64-bit code before seccomp ever runs (ia32
  // emulation off, or a hypervisor without it); there the call must fail the same way
  // in the sandbox. Where the host serves it, the filter must kill the caller (SIGSYS).
  const int probe_out = [] {
    int p[2];
    BOOST_REQUIRE(pipe(p) == 0);
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(p[1], 1);
      execl(seccomp_probe().c_str(), seccomp_probe().c_str(), "int80:20", nullptr);
      _exit(127);
    }
    close(p[1]);
    return p[0];
  }();
  char buf[64] = {};
  BOOST_REQUIRE(read(probe_out, buf, sizeof buf - 1) > 0);
  close(probe_out);
  while (wait(nullptr) > 0) {
  }
  std::string host(buf);
  host.erase(host.find_last_not_of('\n') + 1);
  BOOST_TEST_MESSAGE("int 0x80 outside the sandbox: " << host);
  const auto policy = zc::effective_syscalls(ir::Policy{}, ir::Mode::WorkspaceWrite);
  expect_probe(policy, {{"int80:20" /* i386 getpid */,
                         host == "exit=0" ? std::string("signal=31") : host}});
}

BOOST_AUTO_TEST_CASE(loopback_allows_inet_sockets_by_their_int_width) {
  ir::Policy p;
  p.network.value = ir::Network::Loopback;
  const auto policy = zc::effective_syscalls(p, ir::Mode::WorkspaceWrite);
  expect_probe(policy, {
      {call("socket", {2, kSockStream, 0}), "ret="},
      {call("socket", {2 | kHigh, kSockStream, 0}), "ret="},  // the kernel truncates to AF_INET
      {call("socket", {10, kSockStream, 0}), "ret="},
      {call("socket", {kAfVsock, kSockStream, 0}), "errno=1"},
      {call("socket", {kAfVsock | kHigh, kSockStream, 0}), "errno=1"},
      {call("socket", {1, kSockStream, 0}), "errno=1"},
      {call("socket", {16 /* AF_NETLINK */, 3, 0}), "errno=1"},
      {"socketpair", "ret=0"},
  });
}

BOOST_AUTO_TEST_CASE(ordinary_programs_still_work) {
  const std::string filter =
      emit_bpf(zc::effective_syscalls(ir::Policy{}, ir::Mode::WorkspaceWrite));
  const std::vector<std::pair<std::string, std::string>> programs = {
      {"sh", "printf 'b\\na\\nc\\n' | sort | tr a-z A-Z | head -2 | wc -l"},
      {"python3", "python3 -c 'import json, subprocess, threading; t = threading.Thread(target=print); "
                  "t.start(); t.join(); print(subprocess.run([\"true\"]).returncode, "
                  "json.dumps([1]))'"},
      {"git", "git init -q /tmp/r && cd /tmp/r && echo x > f && git add f && "
              "git -c user.name=t -c user.email=t@t commit -qm m && git status --short && "
              "git log --oneline | wc -l"},
      {"g++", "printf '#include <cstdio>\\nint main(){std::puts(\"built\");}\\n' > /tmp/t.cpp && "
              "g++ -O1 -o /tmp/t /tmp/t.cpp && /tmp/t"},
  };
  const std::vector<std::string> want = {"2", "0 [1]", "1", "built"};
  for (bool nobody : {false, true}) {
    for (size_t i = 0; i < programs.size(); ++i) {
      BOOST_TEST_CONTEXT(programs[i].first << (nobody ? " as nobody" : " as root")) {
        const FilteredOutcome o = sandboxed(filter, {"/bin/sh", "-c", programs[i].second}, nobody);
        BOOST_TEST(o.status == 0);
        BOOST_REQUIRE(!o.lines.empty());
        BOOST_TEST(o.lines.back() == want[i]);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(docker_profile_high_bit_bypass_is_closed) {
  // Docker's profile allows socket() except for AF_VSOCK (40). Compiled by libseccomp it
  // compares the int argument on 64 bits, so AF_VSOCK | 1<<32 passes and the kernel,
  // which truncates the argument, creates an AF_VSOCK socket (or says the family is not
  // supported on a host without vsock). Compiled by zpolicy the call is refused.
  const std::string path = std::string(ZPOLICY_SHARED_DATA) + "/moby-default-seccomp.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  ir::Diagnostics diags;
  const auto spec = zc::import_oci_seccomp(text.str(), path, diags);
  BOOST_REQUIRE_MESSAGE(spec.has_value(), diags.str());
  ir::SyscallPolicy docker;
  docker.default_action = spec->action.value;
  docker.rules = spec->rules;
  const std::vector<std::string> cmd = {seccomp_probe(), call("socket", {kAfVsock, kSockStream, 0}),
                                        call("socket", {kAfVsock | kHigh, kSockStream, 0})};
  const FilteredOutcome ours = sandboxed(emit_bpf(docker), cmd, true);
  BOOST_REQUIRE_EQUAL(ours.lines.size(), 2u);
  BOOST_TEST(ours.lines[0] == "errno=1");
  BOOST_TEST(ours.lines[1] == "errno=1");
  const FilteredOutcome theirs =
      sandboxed(zpolicy::bench::build_libseccomp(docker, 2).bpf, cmd, true);
  BOOST_REQUIRE_EQUAL(theirs.lines.size(), 2u);
  BOOST_TEST(theirs.lines[0] == "errno=1");
  BOOST_TEST(theirs.lines[1] != "errno=1");
  BOOST_TEST_MESSAGE("libseccomp's Docker filter, socket(AF_VSOCK | 1<<32): " << theirs.lines[1]);
}

BOOST_AUTO_TEST_SUITE_END()
