#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "emitters/seccomp/decision_tree.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "seccomp_test_support.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;
namespace es = zpolicy::emitters::seccomp;

namespace {

std::vector<zc::BpfInsn> program(const ir::SyscallPolicy& p) {
  auto prog = zc::parse_bpf(es::emit_bpf(p));
  BOOST_REQUIRE_MESSAGE(prog.has_value(), prog.error().message);
  return *prog;
}

zc::BpfRun run(const std::vector<zc::BpfInsn>& prog, const char* name,
               std::array<uint64_t, 6> args = {}) {
  zc::SeccompData d;
  d.arch = ir::kAuditArchX86_64;
  d.nr = ir::find_syscall(ir::Arch::X86_64, name)->nr;
  d.args = args;
  return zc::run_bpf(prog, d);
}

// Golden listings: compared byte for byte; ZPOLICY_UPDATE_GOLDEN=1 rewrites them.
void check_golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(ZPOLICY_SOURCE_DIR) + "/golden/seccomp/" + name;
  if (std::getenv("ZPOLICY_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  BOOST_TEST(zpolicy::test::read_text(path) == text, "listing differs from " << path);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_emitter)

BOOST_AUTO_TEST_CASE(output_is_deterministic) {
  const auto p = zpolicy::test::docker_in_sandbox();
  BOOST_TEST(es::emit_bpf(p) == es::emit_bpf(p));
  BOOST_TEST(es::emit_listing(p) == es::emit_listing(p));
  // Rule order does not change the program: the most restrictive rule wins anyway.
  auto shuffled = p;
  std::reverse(shuffled.rules.begin(), shuffled.rules.end());
  BOOST_TEST(es::emit_listing(shuffled) == es::emit_listing(p));
}

BOOST_AUTO_TEST_CASE(listing_is_the_program_with_symbolic_names) {
  const auto p = zpolicy::test::default_syscalls();
  const std::string listing = es::emit_listing(p);
  size_t insns = 0;
  for (size_t pos = 0; pos < listing.size();) {
    const size_t end = listing.find('\n', pos);
    if (listing.compare(pos, 2, "  ") == 0) ++insns;
    pos = end + 1;
  }
  BOOST_TEST(insns == es::emit_bpf(p).size() / 8);
  BOOST_TEST(listing.find("ptrace(101)") != std::string::npos);
  BOOST_TEST(listing.find("clone arg0") != std::string::npos);
  // Constants by name, jumps by label (issue 16): no instruction numbers to renumber.
  for (const char* named : {"#TIOCSTI,", "#AF_UNIX,", "#AUDIT_ARCH_X86_64,", "#ptrace,",
                            "#S_ISUID|S_ISGID,", "\nptrace:\n", "\nioctl.1:\n"})
    BOOST_TEST(listing.find(named) != std::string::npos, named);
  BOOST_TEST(listing.find("0x5412") == std::string::npos);
  BOOST_TEST(listing.find("\n0000") == std::string::npos);
  check_golden("workspace-write.txt", listing);
  check_golden("docker.txt", es::emit_listing(zpolicy::test::docker_only()));
}

BOOST_AUTO_TEST_CASE(actions_map_to_seccomp_return_values) {
  const auto kill = zc::effective_syscalls(
      zpolicy::test::policy_with(ir::Mode::ReadOnly, ir::Network::None, ir::Action::kill()),
      ir::Mode::ReadOnly);
  const auto prog = program(kill);
  BOOST_TEST(run(prog, "ptrace").ret == 0x80000000u);  // SECCOMP_RET_KILL_PROCESS
  BOOST_TEST(run(prog, "read").ret == 0x7fff0000u);
  BOOST_TEST(run(prog, "clone3").ret == 0x00050026u);  // ENOSYS, not a kill
  const auto eperm = program(zpolicy::test::default_syscalls());
  BOOST_TEST(run(eperm, "ptrace").ret == 0x00050001u);
}

BOOST_AUTO_TEST_CASE(int_arguments_compare_only_their_low_word) {
  const auto prog = program(zpolicy::test::default_syscalls());
  const uint64_t high = uint64_t{1} << 32;
  BOOST_TEST(run(prog, "ioctl", {0, 0x5412}).ret == 0x00050001u);
  BOOST_TEST(run(prog, "ioctl", {0, 0x5412 | high}).ret == 0x00050001u);
  BOOST_TEST(run(prog, "ioctl", {0, 0x5401 | high}).ret == 0x7fff0000u);
  // clone flags are 64-bit: a namespace bit in the high word is no namespace flag.
  BOOST_TEST(run(prog, "clone", {0x10000000}).ret == 0x00050001u);
  BOOST_TEST(run(prog, "clone", {0x10000000ull << 32}).ret == 0x7fff0000u);
}

BOOST_AUTO_TEST_CASE(hot_calls_take_few_instructions) {
  // read, write and close are the most frequent calls of the recorded mix; the tree puts
  // them near its root (arch check 3, tree, return). openat pays two more for its mode
  // test (the setuid and setgid bits, docs/seccomp.md).
  const auto prog = program(zpolicy::test::default_syscalls());
  for (const char* n : {"read", "write", "close", "newfstatat"})
    BOOST_TEST(run(prog, n).executed <= 9u, n << ": " << run(prog, n).executed);
  BOOST_TEST(run(prog, "openat").executed <= 11u, run(prog, "openat").executed);
}

BOOST_AUTO_TEST_CASE(long_programs_get_trampolines_and_stay_correct) {
  // Three conditions on each of 150 calls: the tree's jumps exceed 255 instructions.
  ir::SyscallPolicy p;
  p.default_action = ir::Action::errno_(1);
  size_t n = 0;
  for (const auto& s : ir::syscall_table(ir::Arch::X86_64)) {
    if (n++ == 150) break;
    p.rules.push_back({std::string(s.name), ir::Action::allow(),
                       {{0, ir::CmpOp::Eq, s.nr, ~uint64_t{0}},
                        {1, ir::CmpOp::Ge, 0x100000000, ~uint64_t{0}},
                        {2, ir::CmpOp::MaskedEq, 4, 6}},
                       {}});
  }
  const auto prog = program(p);
  BOOST_TEST(prog.size() > 1000u);
  BOOST_TEST(es::emit_listing(p).find("(trampoline)") != std::string::npos);
  const zc::SyscallIntent intent(p);
  for (const auto& s : ir::syscall_table(ir::Arch::X86_64)) {
    for (const auto& args : zpolicy::compiler::probe_arguments(p, s)) {
      zc::SeccompData d;
      d.arch = ir::kAuditArchX86_64;
      d.nr = s.nr;
      d.args = args;
      const auto got = zc::decode_seccomp_ret(zc::run_bpf(prog, d).ret);
      const auto want = intent.decide({ir::Arch::X86_64, s.nr, args});
      BOOST_TEST((got && *got == want), s.name);
    }
  }
}

// The full cubic search for the smallest cheapest split: what the emitter's tree must
// equal, split for split, so that the programs it emits do not change.
BOOST_AUTO_TEST_CASE(optimal_tree_equals_the_exhaustive_search) {
  std::mt19937_64 rng(4);
  for (uint64_t max_weight : {1ull, 3ull, 50ull, 4000000ull}) {
    for (size_t n = 1; n <= 90; n += (n < 12 ? 1 : 7)) {
      std::vector<uint64_t> w(n);
      for (auto& x : w) x = 1 + rng() % max_weight;
      std::vector<std::vector<uint64_t>> cost(n, std::vector<uint64_t>(n, 0));
      std::vector<std::vector<uint32_t>> split(n, std::vector<uint32_t>(n, 0));
      for (size_t len = 2; len <= n; ++len)
        for (size_t i = 0; i + len <= n; ++i) {
          const size_t j = i + len - 1;
          uint64_t best = std::numeric_limits<uint64_t>::max(), sum = 0;
          for (size_t k = i; k <= j; ++k) sum += w[k];
          for (size_t r = i; r < j; ++r)
            if (cost[i][r] + cost[r + 1][j] < best) {
              best = cost[i][r] + cost[r + 1][j];
              split[i][j] = static_cast<uint32_t>(r);
            }
          cost[i][j] = best + sum;
        }
      const auto t = es::optimal_alphabetic_tree(w);
      BOOST_TEST_CONTEXT("max weight " << max_weight << ", " << n << " intervals") {
        BOOST_TEST(t.cost == cost[0][n - 1]);
        for (size_t i = 0; i < n; ++i)
          for (size_t j = i + 1; j < n; ++j) BOOST_TEST_REQUIRE(t.split(i, j) == split[i][j]);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
