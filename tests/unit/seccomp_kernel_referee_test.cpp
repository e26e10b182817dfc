// The kernel as the referee of the seccomp verifier (mutation tier). Random edits of the
// golden programs (insert, delete or replace an instruction, change a constant, a jump
// offset or a return's action), fixed seed, bounded. For every edit:
// * the kernel's loader and the verifier's loader rules agree (a program the kernel
//   refuses and the verifier accepts, or the reverse, fails the test);
// * when the verifier accepts the program, a forked child loads it and makes calls with
//   the edge values the program's own constants suggest, and each call must get the
//   policy's answer. No call is executed: an older "marker" filter answers errno 4000
//   to everything, and the kernel keeps the most restrictive answer with the newer
//   filter's winning ties, so the child sees the program's errno, its kill (SIGSYS), or
//   4000 where the program allows.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <csignal>
#include <random>
#include <set>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/bpf_loader_rules.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "compiler/analyzer/seccomp/syscall_decision.hpp"
#include "golden_support.hpp"
#include "seccomp_loader_cases.hpp"

using namespace zpolicy;
using compiler::BpfInsn;

namespace {

constexpr int kMarkerErrno = 4000;
constexpr uint32_t kPrctl = 157, kExitGroup = 231;
// x86_64 uretprobe and uprobe: the kernel runs them without consulting seccomp (Linux
// 6.13 and 6.16, "passthrough ... without filtering"), so no filter decides them.
constexpr uint32_t kUretprobe = 335, kUprobe = 336;
constexpr size_t kMaxCalls = 2048;
constexpr uid_t kNobody = 65534;

// Who loads the program: the test's own user, or (when the test runs as root) uid and
// gid 65534 with no groups, as the kernel tier's unprivileged runs do. Seccomp needs no
// privilege with PR_SET_NO_NEW_PRIVS; the loader and the answers must not depend on it.
enum class Loader : uint8_t { Self, Nobody };
std::vector<Loader> loaders() {
  if (geteuid() != 0) return {Loader::Self};  // already unprivileged
  return {Loader::Self, Loader::Nobody};
}
const char* name(Loader l) { return l == Loader::Self ? "own user" : "uid 65534"; }

// What the kernel answered one call.
struct Answer {
  enum class Kind : uint8_t { Allowed, Errno, Killed, Unrun } kind = Kind::Unrun;
  int errno_value = 0;
};

struct Call {
  uint32_t nr;
  std::array<uint64_t, 6> args;
};

struct Shared {
  int load_errno;  // 0: both filters loaded
  size_t current;  // the call being made
  size_t done;     // calls answered
  long ret[kMaxCalls];
  int err[kMaxCalls];
};

sock_fprog fprog(const std::vector<BpfInsn>& p) {
  return {static_cast<unsigned short>(p.size()),
          reinterpret_cast<sock_filter*>(const_cast<BpfInsn*>(p.data()))};
}

// errno 4000 for every x86_64 call but prctl (to load the program after it) and
// exit_group.
std::vector<BpfInsn> marker() {
  return {{0x20, 0, 0, 4},          {0x15, 0, 4, 0xc000003eu},
          {0x20, 0, 0, 0},          {0x15, 2, 0, kPrctl},
          {0x15, 1, 0, kExitGroup}, {0x06, 0, 0, 0x00050000u | kMarkerErrno},
          {0x06, 0, 0, 0x7fff0000u}};
}

// Loads `program` after the marker in a child and makes `calls` from `first` on; returns
// false when the program did not load (errno in shared->load_errno).
void run_child(Shared* shared, const std::vector<BpfInsn>& program, const std::vector<Call>& calls,
               size_t first, Loader loader) {
  const pid_t pid = fork();
  if (pid == 0) {
    // Boost.Test catches SIGSYS; a trapped call must end the child like a killed one.
    signal(SIGSYS, SIG_DFL);
    if (loader == Loader::Nobody &&
        (setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0 ||
         setresuid(kNobody, kNobody, kNobody) != 0)) {
      shared->load_errno = -3;
      _exit(0);
    }
    const auto m = marker();
    auto mp = fprog(m);
    auto tp = fprog(program);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &mp) != 0) {
      shared->load_errno = -1;
      _exit(0);
    }
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &tp) != 0) {
      shared->load_errno = errno;
      _exit(0);
    }
    shared->load_errno = 0;
    for (size_t i = first; i < calls.size(); ++i) {
      shared->current = i;
      const auto& c = calls[i];
      errno = 0;
      shared->ret[i] = syscall(static_cast<long>(c.nr), c.args[0], c.args[1], c.args[2], c.args[3],
                               c.args[4], c.args[5]);
      shared->err[i] = errno;
      shared->done = i + 1;
    }
    syscall(SYS_exit_group, 0);
    _exit(0);
  }
  int status = 0;
  // Boost.Test's SIGCHLD handler interrupts the wait.
  while (waitpid(pid, &status, 0) == -1 && errno == EINTR) {
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS && shared->done < calls.size() &&
      shared->current >= first && shared->load_errno == 0) {
    shared->err[shared->current] = -SIGSYS;
    shared->done = shared->current + 1;
  }
}

struct KernelRun {
  int load_errno = 0;
  std::vector<Answer> answers;
};

KernelRun kernel_run(const std::vector<BpfInsn>& program, const std::vector<Call>& calls,
                     Loader loader) {
  void* mem =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw std::runtime_error("mmap");
  auto* shared = static_cast<Shared*>(mem);
  KernelRun out;
  size_t first = 0;
  shared->done = 0;
  while (true) {
    shared->load_errno = -2;
    shared->current = first;
    run_child(shared, program, calls, first, loader);
    out.load_errno = shared->load_errno;
    if (out.load_errno != 0 || shared->done >= calls.size() || shared->done <= first) break;
    first = shared->done;
  }
  out.answers.resize(calls.size());
  for (size_t i = 0; i < std::min(shared->done, calls.size()) && out.load_errno == 0; ++i) {
    Answer& a = out.answers[i];
    if (shared->err[i] == -SIGSYS)
      a.kind = Answer::Kind::Killed;
    else if (shared->ret[i] == -1 && shared->err[i] == kMarkerErrno)
      a.kind = Answer::Kind::Allowed;
    else if (shared->ret[i] == -1)
      a = {Answer::Kind::Errno, shared->err[i]};
    else
      a.kind = Answer::Kind::Unrun;  // returned without the marker: cannot happen
  }
  munmap(mem, sizeof(Shared));
  return out;
}

bool agrees(const Answer& a, const ir::Action& want) {
  switch (want.kind) {
    case ir::Action::Kind::Allow:
      return a.kind == Answer::Kind::Allowed;
    case ir::Action::Kind::Errno:
      return a.kind == Answer::Kind::Errno && a.errno_value == want.errno_value;
    case ir::Action::Kind::Kill:
      return a.kind == Answer::Kind::Killed;
  }
  return false;
}

std::string describe(const Answer& a) {
  switch (a.kind) {
    case Answer::Kind::Allowed:
      return "allowed";
    case Answer::Kind::Errno:
      return "errno(" + std::to_string(a.errno_value) + ")";
    case Answer::Kind::Killed:
      return "killed";
    case Answer::Kind::Unrun:
      return "not run";
  }
  return "?";
}

// Calls with the edge values the program's constants suggest: every number a jump
// compares with (below 1024, and with the x32 bit), every number the policy has rules
// for, and for each, zero, all ones, and each constant (and its neighbours, and with a
// high word) in each argument the policy reads or the program compares.
std::vector<Call> edge_calls(const std::vector<BpfInsn>& prog,
                             const compiler::SyscallIntent& intent, std::mt19937& rng) {
  std::set<uint32_t> numbers;
  std::set<uint64_t> values;
  for (const auto& in : prog) {
    if ((in.code & 0x07) == 0x05 || (in.code & 0x07) == 0x04) {
      if (in.k < 1024) numbers.insert(in.k);
      for (uint64_t v : {uint64_t{in.k}, uint64_t{in.k} + 1, uint64_t{in.k} - 1})
        values.insert(v & 0xffffffffu);
    }
  }
  for (const auto& r : intent.policy().rules)
    if (const auto* s = ir::find_syscall(ir::Arch::X86_64, r.name)) numbers.insert(s->nr);
  std::vector<uint64_t> pool(values.begin(), values.end());
  std::shuffle(pool.begin(), pool.end(), rng);
  if (pool.size() > 24) pool.resize(24);
  std::vector<Call> calls;
  for (uint32_t n : numbers) {
    for (uint32_t nr : {n, n | ir::kX32SyscallBit}) {
      if (nr == kPrctl || nr == kExitGroup || nr == kUretprobe || nr == kUprobe) continue;
      calls.push_back({nr, {}});
      // An x32 call ends the child (kill): one per number.
      if (nr & ir::kX32SyscallBit) continue;
      calls.push_back({nr, {~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull}});
      for (unsigned i = 0; i < 6; ++i)
        for (uint64_t v : pool)
          for (uint64_t high : {uint64_t{0}, uint64_t{1} << 32}) {
            Call c{nr, {}};
            c.args[i] = v | high;
            calls.push_back(c);
          }
    }
  }
  std::shuffle(calls.begin(), calls.end(), rng);
  if (calls.size() > kMaxCalls) calls.resize(kMaxCalls);
  return calls;
}

BpfInsn random_insn(std::mt19937& rng, const std::vector<BpfInsn>& prog, size_t at) {
  static const uint16_t codes[] = {0x20, 0x15, 0x25, 0x35, 0x45, 0x06, 0x54, 0x05, 0x00, 0x01,
                                   0x02, 0x60, 0x07, 0x87, 0x1d, 0x16, 0x04, 0x64, 0x94, 0x104};
  BpfInsn in{codes[rng() % std::size(codes)], 0, 0, 0};
  const size_t room = prog.size() - at;
  in.jt = static_cast<uint8_t>(rng() % std::min<size_t>(room + 1, 256));
  in.jf = static_cast<uint8_t>(rng() % std::min<size_t>(room + 1, 256));
  switch (in.code) {
    case 0x20:
      in.k = 4 * (rng() % 17);
      break;
    case 0x06: {
      static const uint32_t rets[] = {0x7fff0000u, 0x00050001u, 0x80000000u,
                                      0,           0x00050026u, 0x7ffc0000u};
      in.k = rets[rng() % std::size(rets)];
      break;
    }
    case 0x05:
      in.k = static_cast<uint32_t>(rng() % (room + 1));
      break;
    case 0x02:
    case 0x60:
      in.k = rng() % 17;
      break;
    default:
      in.k = prog[rng() % prog.size()].k + static_cast<uint32_t>(rng() % 3) - 1;
  }
  return in;
}

std::vector<BpfInsn> mutate(std::vector<BpfInsn> prog, std::mt19937& rng, std::string& what) {
  const size_t i = rng() % prog.size();
  switch (rng() % 6) {
    case 0:
      prog.insert(prog.begin() + static_cast<long>(i), random_insn(rng, prog, i));
      what = "insert at " + std::to_string(i);
      break;
    case 1:
      prog.erase(prog.begin() + static_cast<long>(i));
      what = "delete " + std::to_string(i);
      break;
    case 2:
      prog[i] = random_insn(rng, prog, i);
      what = "replace " + std::to_string(i);
      break;
    case 3:
      prog[i].k = (rng() % 2) ? prog[i].k + static_cast<uint32_t>(rng() % 5) - 2
                              : prog[rng() % prog.size()].k;
      what = "constant of " + std::to_string(i);
      break;
    case 4:
      if (rng() % 2)
        prog[i].jt = static_cast<uint8_t>(prog[i].jt + rng() % 5 - 2);
      else
        prog[i].jf = static_cast<uint8_t>(prog[i].jf + rng() % 5 - 2);
      what = "jump offset of " + std::to_string(i);
      break;
    default: {
      std::vector<size_t> rets;
      for (size_t j = 0; j < prog.size(); ++j)
        if (prog[j].code == 0x06) rets.push_back(j);
      const size_t r = rets[rng() % rets.size()];
      static const uint32_t actions[] = {0x7fff0000u, 0x00050001u, 0x00050002u, 0x80000000u, 0,
                                         0x00030000u, 0x7ff00000u, 0x7ffc0000u, 0x7fc00000u};
      prog[r].k = actions[rng() % std::size(actions)];
      what = "action of " + std::to_string(r);
    }
  }
  return prog;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_kernel_referee, *boost::unit_test::label("mutation"))

BOOST_AUTO_TEST_CASE(the_kernel_loads_exactly_what_the_loader_rules_accept) {
  for (Loader l : loaders())
    for (const auto& c : test::loader_cases()) {
      if (c.refused.empty()) continue;  // an empty program cannot be passed at all
      BOOST_TEST(kernel_run(c.refused, {}, l).load_errno == EINVAL, c.rule << " as " << name(l));
      BOOST_TEST(kernel_run(c.accepted, {}, l).load_errno == 0, c.rule << " as " << name(l));
    }
}

BOOST_AUTO_TEST_CASE(random_edits_of_golden_programs_the_verifier_accepts_answer_as_the_policy) {
  std::mt19937 rng(20261204);
  size_t edits = 0, loader_refused = 0, refused = 0, accepted = 0, calls_checked = 0;
  const std::vector<Loader> who = loaders();
  for (const auto& g : test::golden_compiles(compiler::Target::Linux)) {
    const auto golden = compiler::parse_bpf(g.artifact("seccomp.bpf"));
    BOOST_TEST_REQUIRE(golden.has_value(), golden.error().message);
    const auto& policy = g.compiled.resolved.syscalls;
    const compiler::SyscallIntent intent(policy);
    for (int n = 0; n < 30; ++n) {
      std::string what;
      auto prog = mutate(*golden, rng, what);
      if (rng() % 3 == 0) prog = mutate(prog, rng, what);
      ++edits;
      const auto calls = edge_calls(prog, intent, rng);
      const auto v = compiler::verify_seccomp(policy, test::bytes_of(prog));
      const bool loader_ok = !compiler::loader_refusal(prog).has_value();
      // Edits alternate between the loaders, so that each is refereed without doubling
      // the run (the edits themselves do not depend on it).
      const Loader l = who[edits % who.size()];
      const auto k = kernel_run(prog, v && v->ok() ? calls : std::vector<Call>{}, l);
      BOOST_TEST((k.load_errno == 0) == loader_ok,
                 g.name << " " << what << " as " << name(l) << ": kernel load errno " << k.load_errno
                        << ", verifier: "
                        << (loader_ok ? std::string("loads")
                                      : v ? std::string() : v.error().message));
      if (!loader_ok) {
        ++loader_refused;
        continue;
      }
      if (!v || !v->ok()) {
        ++refused;
        continue;
      }
      ++accepted;
      // The probe sweep, which verify_seccomp runs only on what the proof refutes, is the
      // proof's oracle here: it must accept what the proof accepts.
      BOOST_TEST(compiler::sweep_seccomp(policy, prog).ok(),
                 g.name << " " << what << ": the probe sweep refutes what the proof accepts");
      for (size_t i = 0; i < calls.size(); ++i) {
        const auto& c = calls[i];
        const ir::Arch arch = (c.nr & ir::kX32SyscallBit) ? ir::Arch::X32 : ir::Arch::X86_64;
        const ir::Action want = intent.decide({arch, c.nr, c.args});
        ++calls_checked;
        BOOST_TEST(agrees(k.answers[i], want), g.name << " " << what << ": nr " << c.nr << " arg0 "
                                                      << c.args[0] << ": policy " << want.str()
                                                      << ", kernel " << describe(k.answers[i]));
      }
    }
  }
  BOOST_TEST_MESSAGE("seccomp kernel referee: "
                     << edits << " edits, " << loader_refused << " refused by the loader rules, "
                     << refused << " refused by the proof, " << accepted << " accepted, "
                     << calls_checked << " calls checked");
  BOOST_TEST(accepted > 0u);
  BOOST_TEST(refused > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
