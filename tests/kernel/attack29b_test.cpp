// Red team attack 29b (docs/redteam-2026-12.md "Attack 29b"): the seccomp analyzer's
// interpreter and path walk against the kernel, on programs no emitter writes. A forked
// child loads a program (as the test's user and as uid 65534) that allows every call but
// getppid and runs its body on getppid, then makes that call on one of the three ABIs the
// filter sees (x86_64 110, i386 64 by `int $0x80`, x32 110 with bit 30) with chosen
// arguments; what the kernel did (allowed it, returned an errno or 0, trapped, killed) must
// be what the interpreter's return value says, and the path the walk finds for the call
// must return that same value. A body that returns A instead returns SECCOMP_RET_TRAP with
// one half of A as its data, which the trap's siginfo carries: so every bit the body
// computed is seen.
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <csignal>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/bpf_loader_rules.hpp"
#include "compiler/analyzer/seccomp/bpf_paths.hpp"
#include "sandbox_fixture.hpp"

namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

using compiler::BpfInsn;
namespace bpf = compiler::bpf;

constexpr uint32_t kGetppid29b = 110, kGetppidI386 = 64, kGetppidX32 = 0x4000006eu;
constexpr uint32_t kAuditX86_64_29b = 0xC000003Eu, kAuditI386_29b = 0x40000003u;
constexpr uid_t kNobody29b = 65534;

// What a seccomp return does to the call, as the kernel documents it: "allow", "ret0"
// (SECCOMP_RET_ERRNO with data 0), "errno N" (capped at 4095), "trap N" (the data), ENOSYS
// for trace and user notification without a tracer or a listener, "kill" for the rest.
std::string effect_of_return(uint32_t ret) {
  const uint32_t data = ret & 0xffffu;
  switch (ret & 0xffff0000u) {
    case 0x7fff0000u:  // ALLOW
    case 0x7ffc0000u:  // LOG
      return "allow";
    case 0x00050000u:  // ERRNO
      return data == 0 ? "ret0" : "errno " + std::to_string(std::min(data, 4095u));
    case 0x00030000u:  // TRAP
      return "trap " + std::to_string(data);
    case 0x7ff00000u:  // TRACE
    case 0x7fc00000u:  // USER_NOTIF
      return "errno 38";
  }
  return "kill";
}

enum class Abi29b { X86_64, I386, X32 };

// getppid through `int $0x80`: the i386 ABI from this 64-bit process. The filter sees
// the six argument registers whole (rbx, rcx, rdx, rsi, rdi, rbp), upper halves included,
// though the call reads only their low halves; the sixth is set through ebp, which clears
// its upper half.
long i386_getppid(const std::array<uint64_t, 6>& a) {
  long r;
  const uint32_t sixth = static_cast<uint32_t>(a[5]);
  asm volatile("push %%rbp\n\tmov %[sixth], %%ebp\n\tint $0x80\n\tpop %%rbp"
               : "=a"(r)
               : "a"(long{kGetppidI386}), "b"(a[0]), "c"(a[1]), "d"(a[2]), "S"(a[3]),
                 "D"(a[4]), [sixth] "r"(sixth)
               : "memory", "cc");
  return r;
}

// The call as the filter sees it.
compiler::SeccompData seen_by_filter(Abi29b abi, const std::array<uint64_t, 6>& args) {
  compiler::SeccompData d{kGetppid29b, kAuditX86_64_29b, 0, args};
  if (abi == Abi29b::I386) {
    d.nr = kGetppidI386;
    d.arch = kAuditI386_29b;
    d.args[5] &= 0xffffffffu;
  }
  if (abi == Abi29b::X32) d.nr = kGetppidX32;
  return d;
}

// Writes `word`, then " N" unless `number` is negative, to stdout. It runs between fork
// and _exit and in a signal handler, so it calls nothing that may take a lock.
void say_29b(const char* word, long number) {
  char text[40];
  size_t n = 0;
  for (; word[n] != '\0' && n < 16; ++n) text[n] = word[n];
  if (number >= 0) {
    char digits[20];
    size_t d = 0;
    do {
      digits[d++] = static_cast<char>('0' + number % 10);
    } while ((number /= 10) > 0);
    text[n++] = ' ';
    while (d > 0) text[n++] = digits[--d];
  }
  (void)!write(1, text, n);
}

void report_trap_29b(int, siginfo_t* info, void*) {
  say_29b("trap", info->si_errno);
  _exit(0);
}

// The effect the kernel gave getppid(args) under `program`, loaded by root or by uid 65534
// in a child; "load refused" when seccomp() refused the program.
std::string kernel_effect(const std::vector<BpfInsn>& program, Abi29b abi,
                          const std::array<uint64_t, 6>& args, bool as_nobody) {
  int out[2];
  BOOST_REQUIRE(pipe(out) == 0);
  const pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(out[1], 1);
    struct sigaction trap {};
    trap.sa_sigaction = report_trap_29b;
    trap.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &trap, nullptr);
    if (as_nobody &&
        (setgroups(0, nullptr) != 0 || setresgid(kNobody29b, kNobody29b, kNobody29b) != 0 ||
         setresuid(kNobody29b, kNobody29b, kNobody29b) != 0))
      _exit(2);
    sock_fprog fp{static_cast<unsigned short>(program.size()),
                  reinterpret_cast<sock_filter*>(const_cast<BpfInsn*>(program.data()))};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(3);
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) != 0) {
      say_29b("load refused", -1);
      _exit(0);
    }
    long r = 0;
    if (abi == Abi29b::I386) {
      r = i386_getppid(args);
      if (r < 0 && r > -4096) {
        errno = static_cast<int>(-r);
        r = -1;
      }
    } else {
      r = syscall(abi == Abi29b::X32 ? kGetppidX32 : kGetppid29b, args[0], args[1], args[2],
                  args[3], args[4], args[5]);
    }
    if (r == -1)
      say_29b("errno", errno);
    else
      say_29b(r == 0 ? "ret0" : "allow", -1);
    _exit(0);
  }
  close(out[1]);
  std::string said;
  char buf[64];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    said.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  // Boost.Test's SIGCHLD handler interrupts the wait.
  while (waitpid(pid, &status, 0) == -1 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGSYS ? "kill" : "signal";
  BOOST_REQUIRE_MESSAGE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                        "the child could not set itself up: status " << status);
  return said;
}

// What an allowed call gives on each ABI here, found without a filter: x32 answers ENOSYS
// on a kernel built without it, and i386 is refused (the child killed) where the kernel
// runs no 32-bit code.
std::string unfiltered_effect(Abi29b abi) {
  const std::vector<BpfInsn> allow_all = {{bpf::RET | bpf::K, 0, 0, 0x7fff0000u}};
  return kernel_effect(allow_all, abi, {}, false);
}

// The value the path walk says the call takes, or none when the walk cannot prove the
// program; fails the test when not exactly one path holds the call.
std::optional<uint32_t> walked_return(const std::vector<BpfInsn>& program,
                                      const compiler::SeccompData& call) {
  std::array<uint32_t, compiler::kDataWords> words{
      call.nr, call.arch, static_cast<uint32_t>(call.instruction_pointer),
      static_cast<uint32_t>(call.instruction_pointer >> 32)};
  for (unsigned i = 0; i < 6; ++i) {
    words[compiler::arg_low_word(i)] = static_cast<uint32_t>(call.args[i]);
    words[compiler::arg_high_word(i)] = static_cast<uint32_t>(call.args[i] >> 32);
  }
  std::vector<uint32_t> returns;
  const auto unproven = compiler::walk_paths(
      program, [&](const compiler::BpfPath& p, size_t&) -> std::optional<std::string> {
        for (size_t w = 0; w < words.size(); ++w)
          if (!p.words[w].contains(words[w])) return std::nullopt;
        returns.push_back(p.ret);
        return std::nullopt;
      });
  if (unproven) return std::nullopt;
  BOOST_TEST(returns.size() == 1u, "paths holding the call: " << returns.size());
  if (returns.empty()) return std::nullopt;
  return returns.front();
}

// Random programs in seccomp's instruction set, with getppid's body after an allow of
// every other number: loads of every field but the instruction pointer (which differs from
// call to call), scratch memory, every ALU operation with K and X, copies, forward jumps
// of every kind, and returns of every action, with data.
class ProgramSource29b {
 public:
  static constexpr size_t kPrefix = 5;  // the instructions before the body

  explicit ProgramSource29b(uint64_t seed) : rng_(seed) {}

  // `reveal`: 0 keeps `ret a`; 1 and 2 turn each into a trap whose data is A's low or
  // high half.
  std::vector<BpfInsn> program(int reveal) {
    using namespace bpf;
    std::vector<BpfInsn> p = {
        {LD | W | ABS, 0, 0, 0}, {JMP | JEQ | K, 1, 0, kGetppid29b}, {RET | K, 0, 0, 0x7fff0000u}};
    if (pick(2)) {  // most reads of scratch memory then load
      p.push_back({LD | IMM, 0, 0, value()});
      for (uint32_t m = 0; m < 4; ++m)
        p.push_back({static_cast<uint16_t>(pick(2) ? ST : STX), 0, 0, m});
    }
    const size_t end = p.size() + 3 + pick(25);
    while (p.size() < end - 1) p.push_back(instruction(end - 2 - p.size()));
    p.push_back(a_return());
    if (reveal == 0) return p;
    const size_t epilogue = p.size();
    for (size_t i = kPrefix; i < epilogue; ++i)
      if (p[i].code == (RET | A)) p[i] = {JMP | JA, 0, 0, static_cast<uint32_t>(epilogue - i - 1)};
    p.push_back(reveal == 1 ? BpfInsn{ALU | AND | K, 0, 0, 0xffff}
                            : BpfInsn{ALU | RSH | K, 0, 0, 16});
    p.push_back({ALU | OR | K, 0, 0, 0x00030000u});
    p.push_back({RET | A, 0, 0, 0});
    return p;
  }

  // Arguments whose halves are the program's own constants or edge values.
  std::array<uint64_t, 6> arguments(const std::vector<BpfInsn>& p) {
    std::array<uint64_t, 6> a{};
    for (uint64_t& x : a) {
      const uint64_t low = pick(3) ? p[pick(static_cast<uint32_t>(p.size()))].k : value();
      const uint64_t high = pick(2)   ? 0
                            : pick(2) ? p[pick(static_cast<uint32_t>(p.size()))].k
                                      : value();
      x = high << 32 | low;
    }
    return a;
  }

 private:
  uint32_t pick(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }

  uint32_t value() {
    switch (pick(9)) {
      case 0:
        return pick(4);
      case 1:
        return pick(64);
      case 2:
        return 0xffffffffu - pick(3);
      case 3:
        return 0x80000000u + pick(3) - 1;
      case 4:
        return 1u << pick(32);
      case 5:
        return kGetppid29b;
      case 6:  // a shift count the loader takes only through X
        return 32 + pick(32);
    }
    return static_cast<uint32_t>(rng_());
  }

  uint32_t action() {
    static const uint32_t kActions[] = {0x7fff0000u, 0x00050000u, 0x00030000u, 0x7ff00000u,
                                        0x7fc00000u, 0x7ffc0000u, 0x80000000u, 0x00000000u,
                                        0x00010000u, 0x7ffe0000u};
    uint32_t a = kActions[pick(10)];
    if (pick(2)) a |= pick(3) == 0 ? static_cast<uint32_t>(rng_() & 0xffff) : pick(8);
    return a;
  }

  BpfInsn a_return() {
    using namespace bpf;
    return pick(3) ? BpfInsn{RET | K, 0, 0, action()} : BpfInsn{RET | A, 0, 0, 0};
  }

  // One instruction with `after` instructions between it and the last.
  BpfInsn instruction(size_t after) {
    using namespace bpf;
    const auto offset = [&] {
      return static_cast<uint8_t>(pick(static_cast<uint32_t>(std::min<size_t>(after, 255)) + 1));
    };
    switch (pick(14)) {
      case 0:
      case 1: {
        static const uint32_t kFields[] = {0, 4, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60};
        return {LD | W | ABS, 0, 0, kFields[pick(14)]};
      }
      case 2:
        return {static_cast<uint16_t>(pick(2) ? LD | IMM : LDX | IMM), 0, 0, value()};
      case 3:
        return {static_cast<uint16_t>(pick(3) ? LD | MEM : LDX | MEM), 0, 0, pick(4)};
      case 4:
        return {static_cast<uint16_t>(pick(2) ? ST : STX), 0, 0, pick(4)};
      case 5:
        return {static_cast<uint16_t>(pick(2) ? LD | W | LEN : LDX | W | LEN), 0, 0, 0};
      case 6:
      case 7: {
        static const uint16_t kOps[] = {ADD, SUB, MUL, DIV, OR, AND, LSH, RSH, NEG, XOR};
        const uint16_t op = kOps[pick(10)];
        if (op == NEG) return {ALU | NEG, 0, 0, 0};
        if (pick(2)) return {static_cast<uint16_t>(ALU | op | X), 0, 0, 0};
        uint32_t k = value();
        if (op == LSH || op == RSH) k %= 32;  // the loader refuses more
        if (op == DIV && k == 0) k = 3;
        return {static_cast<uint16_t>(ALU | op | K), 0, 0, k};
      }
      case 8:
        return {static_cast<uint16_t>(MISC | (pick(2) ? TAX : TXA)), 0, 0, 0};
      case 9:
      case 10:
      case 11: {
        if (pick(6) == 0) return {JMP | JA, 0, 0, offset()};
        static const uint16_t kJumps[] = {JEQ, JGT, JGE, JSET};
        const uint16_t source = pick(4) == 0 ? X : K;
        return {static_cast<uint16_t>(JMP | kJumps[pick(4)] | source), offset(), offset(), value()};
      }
    }
    return a_return();
  }

  std::mt19937_64 rng_;
};

std::string listing(const std::vector<BpfInsn>& program) {
  return compiler::disassemble_bpf(program);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack29b)

// A29B-1: the kernel shifts by X modulo 32; the interpreter said a shift by 32 or more
// gives 0, and `zpolicy inspect --syscall ptrace` named kill_thread for a program that
// lets ptrace through.
BOOST_AUTO_TEST_CASE(a_shift_through_x_counts_modulo_32_in_the_kernel_and_the_interpreter) {
  using namespace bpf;
  struct Shift {
    uint16_t code;
    uint32_t a, x;
  };
  for (const Shift s :
       {Shift{ALU | LSH | X, 0x7fff, 48}, Shift{ALU | RSH | X, 0x7fff0000u, 32},
        Shift{ALU | LSH | X, 0x7fff, 0xfffffff0u}, Shift{ALU | LSH | X, 0x7fff, 16}}) {
    const std::vector<BpfInsn> program = {{LD | W | ABS, 0, 0, 0},
                                          {JMP | JEQ | K, 1, 0, kGetppid29b},
                                          {RET | K, 0, 0, 0x7fff0000u},
                                          {LD | IMM, 0, 0, s.a},
                                          {LDX | IMM, 0, 0, s.x},
                                          {s.code, 0, 0, 0},
                                          {RET | A, 0, 0, 0}};
    const compiler::SeccompData call{kGetppid29b, kAuditX86_64_29b, 0, {}};
    const std::string interpreted = effect_of_return(compiler::run_bpf(program, call).ret);
    for (const bool nobody : {false, true}) {
      BOOST_TEST_CONTEXT((nobody ? "as uid 65534" : "as root") << ", X = " << s.x) {
        const std::string kernel = kernel_effect(program, Abi29b::X86_64, {}, nobody);
        BOOST_TEST(kernel == "allow");
        BOOST_TEST(interpreted == kernel);
      }
    }
  }
}

// The differential: the kernel's loader and the analyzer's loader rules agree on every
// program, and on every program both accept the kernel's effect is the interpreter's, and
// the walk's wherever it proves the program, on each ABI this kernel runs.
BOOST_AUTO_TEST_CASE(random_programs_answer_as_the_kernel_does) {
  std::vector<std::pair<Abi29b, std::string>> abis;  // each ABI, and what an allow gives there
  for (const Abi29b abi : {Abi29b::X86_64, Abi29b::I386, Abi29b::X32}) {
    const std::string allowed = unfiltered_effect(abi);
    if (allowed == "allow" || allowed == "errno 38") abis.emplace_back(abi, allowed);
  }
  BOOST_REQUIRE(!abis.empty() && abis.front().first == Abi29b::X86_64);
  ProgramSource29b source(6);  // a seed whose programs the old shift fails three times
  size_t compared = 0, walked = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::vector<BpfInsn> program = source.program(i % 3);
    const std::array<uint64_t, 6> args = source.arguments(program);
    const auto& [abi, allowed] = abis[static_cast<size_t>(i / 3) % abis.size()];
    const auto refusal = compiler::loader_refusal(program);
    const bool nobody = i % 2 == 1;
    const std::string kernel = kernel_effect(program, abi, args, nobody);
    BOOST_TEST_CONTEXT("program " << i << " on ABI " << static_cast<int>(abi)
                                  << (nobody ? " as uid 65534" : " as root") << ":\n"
                                  << listing(program)) {
      BOOST_TEST((kernel == "load refused") == refusal.has_value(),
                 "kernel: " << kernel << ", analyzer: " << (refusal ? refusal->str() : "loads"));
      if (refusal || kernel == "load refused") continue;
      ++compared;
      const compiler::SeccompData call = seen_by_filter(abi, args);
      const uint32_t ret = compiler::run_bpf(program, call).ret;
      const std::string effect = effect_of_return(ret);
      BOOST_TEST((effect == "allow" ? allowed : effect) == kernel, "interpreter returns " << ret);
      if (const auto on_path = walked_return(program, call)) {
        ++walked;
        BOOST_TEST(*on_path == ret);
      }
    }
  }
  // The programs must exercise what they are for: a generator whose programs the loader
  // refuses, or the walk never proves, would compare nothing.
  BOOST_TEST(compared > 1000u);
  BOOST_TEST(walked > 700u);
}

// A29B-2: a -try bind's source was taken to exist, or to be missing, in every run because
// the resolved policy said so at verification. The host changes that between runs of a
// verified argv: after `rm -rf node_modules` (before a reinstall) the `--ro-bind-try` of
// the protected node_modules is skipped and the sandbox makes node_modules on the host,
// where the compiled plain bind makes bwrap abort; once `ssh-keygen` has made ~/.ssh, a
// `--bind-try ~/.ssh ~/.ssh` verified while it was missing binds it writable. The real
// bwrap shows both; `zpolicy verify` must refuse both argvs (it accepted them on 4df5a8b).
BOOST_DATA_TEST_CASE(a_try_bind_verified_against_the_host_of_one_moment_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("node_modules"));
  const std::string policy =
      box.write_policy("try.yaml", workspace_write_policy("[\"/\"]",
                                                          "  protect: [node_modules]\n  deny: "
                                                          "[\"~/.ssh\"]\n"));
  const std::string out = box.base() + "/compiled";
  box.make_dir(out);
  const RunResult compiled = zpolicy_on_host(
      box, {"compile", policy, "--target", "linux", "--workspace", box.workspace(), "--out", out});
  BOOST_TEST_REQUIRE(compiled.out.find("status=0") != std::string::npos, compiled.describe());
  const std::vector<std::string> args = read_lines(out + "/bwrap.args");
  const std::string modules = box.ws("node_modules"), ssh = box.home() + "/.ssh";
  auto verify = [&](const std::vector<std::string>& argv) {
    write_lines(out + "/bwrap.args", argv);
    return zpolicy_on_host(
        box, {"verify", policy, out, "--target", "linux", "--workspace", box.workspace()});
  };
  const RunResult clean = verify(args);
  BOOST_TEST(clean.out.find("status=0") != std::string::npos, clean.describe());

  // node_modules, protected by a -try bind while it exists.
  auto modules_try = args;
  const auto bind = std::find(modules_try.begin(), modules_try.end(), modules);
  BOOST_TEST_REQUIRE((bind != modules_try.end() && bind[-1] == "--ro-bind"));
  bind[-1] = "--ro-bind-try";
  const RunResult v1 = verify(modules_try);
  BOOST_TEST(v1.out.find("status=3") != std::string::npos, v1.describe());
  box.host_command({"/bin/rm", "-r", modules});
  const RunResult plain = bwrap_by_hand(box, args, "mkdir node_modules");
  BOOST_TEST(plain.out.find("status=0") == std::string::npos, plain.describe());
  BOOST_TEST(!exists(modules), "the compiled argv's plain bind made bwrap abort");
  const RunResult tried = bwrap_by_hand(box, modules_try, "mkdir node_modules");
  BOOST_TEST(tried.out.find("status=0") != std::string::npos, tried.describe());
  BOOST_TEST(exists(modules), "the -try argv let the sandbox make the protected node_modules");

  // ~/.ssh, bound by a -try bind while it is missing.
  box.host_command({"/bin/rm", "-r", modules});
  box.make_dir(modules);
  auto ssh_try = args;
  ssh_try.insert(ssh_try.end() - 4, {"--bind-try", ssh, ssh});  // before --chdir D --seccomp N
  const RunResult v2 = verify(ssh_try);
  BOOST_TEST(v2.out.find("status=3") != std::string::npos, v2.describe());
  box.make_dir(ssh);
  box.write_file(ssh + "/authorized_keys", "host key\n");
  const RunResult wrote =
      bwrap_by_hand(box, ssh_try, "echo sandbox key >> '" + ssh + "/authorized_keys'");
  BOOST_TEST(wrote.out.find("status=0") != std::string::npos, wrote.describe());
  BOOST_TEST(read_file(ssh + "/authorized_keys").value_or("") == "host key\nsandbox key\n",
             "the -try argv bound the new ~/.ssh writable");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
