// run_bpf_for_numbers and run_bpf_for_calls follow many calls at once; they must answer
// exactly as run_bpf does call by call, on the programs zpolicy emits and on programs
// that do with the number what zpolicy's never do (arithmetic, bit tests, copies,
// comparisons with X).
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <random>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "golden_support.hpp"

using namespace zpolicy;
using compiler::BpfInsn;
using compiler::BpfRun;

namespace {

void expect_same(const std::vector<BpfInsn>& prog, const std::string& what) {
  for (uint32_t arch : {ir::kAuditArchX86_64, ir::kAuditArchI386, 0xC00000B7u})
    for (uint32_t base : {0u, ir::kX32SyscallBit, 0xfffffc00u}) {
      const auto ranged = compiler::run_bpf_for_numbers(prog, arch, base, 1024);
      for (uint32_t i = 0; i < 1024; ++i) {
        const BpfRun one = compiler::run_bpf(prog, {base + i, arch, 0, {}});
        const BpfRun& r = ranged[i];
        if (r.ret != one.ret || r.executed != one.executed ||
            r.read_arguments != one.read_arguments) {
          BOOST_ERROR(what << ": arch " << arch << " nr " << base + i << ": ranged ret " << r.ret
                           << " executed " << r.executed << ", run_bpf ret " << one.ret
                           << " executed " << one.executed);
          return;
        }
      }
    }
}

std::vector<BpfInsn> program_of(const std::string& bytes) {
  auto prog = compiler::parse_bpf(bytes);
  BOOST_TEST_REQUIRE(prog.has_value(), prog.error().message);
  return *prog;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bpf_number_ranges)

BOOST_AUTO_TEST_CASE(answers_like_run_bpf_on_the_golden_programs_and_their_variants) {
  std::mt19937 rng(20261203);
  // Opcodes that read the accumulator in every way a range cannot follow, and ones that
  // leave it alone.
  const uint16_t kOthers[] = {0x04 /*add k*/,  0x54 /*and k*/,   0x45 /*jset k*/,  0x1d /*jeq x*/,
                              0x07 /*tax*/,    0x87 /*txa*/,     0x02 /*st*/,      0x16 /*ret a*/,
                              0x00 /*ld imm*/, 0x01 /*ldx imm*/, 0x61 /*ldx mem*/, 0x84 /*neg*/};
  for (const auto& g : test::golden_compiles(compiler::Target::Linux)) {
    const auto prog = program_of(g.artifact("seccomp.bpf"));
    expect_same(prog, g.name);
    for (size_t i = 0; i < prog.size(); ++i) {
      auto changed = prog;
      BpfInsn& in = changed[i];
      if ((in.code & 0x07) == 0x05 && in.code != 0x05) {
        in.k += (rng() % 3) - 1;  // a comparison constant moved
        std::swap(in.jt, in.jf);
        expect_same(changed, g.name + " variant at " + std::to_string(i));
      } else if ((in.code & 0x07) != 0x06 && (in.code & 0x07) != 0x05) {
        in.code = kOthers[rng() % std::size(kOthers)];
        in.k = in.code == 0x02 || in.code == 0x61 ? rng() % 16 : rng() % 1024;
        expect_same(changed, g.name + " variant at " + std::to_string(i));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(splits_ranges_at_every_kind_of_comparison) {
  // nr == 5 -> 1; nr > 1000 -> 2; nr >= 7 -> 3; else the number reloaded, 4 if nr == 0.
  const std::vector<BpfInsn> prog = {
      {0x20, 0, 0, 0}, {0x15, 0, 1, 5}, {0x06, 0, 0, 1}, {0x25, 0, 1, 1000},
      {0x06, 0, 0, 2}, {0x35, 0, 1, 7}, {0x06, 0, 0, 3}, {0x20, 0, 0, 0},
      {0x15, 0, 1, 0}, {0x06, 0, 0, 4}, {0x06, 0, 0, 5},
  };
  expect_same(prog, "hand-written");
  const auto r = compiler::run_bpf_for_numbers(prog, ir::kAuditArchX86_64, 0, 1024);
  BOOST_TEST(r[0].ret == 4u);
  BOOST_TEST(r[5].ret == 1u);
  BOOST_TEST(r[6].ret == 5u);
  BOOST_TEST(r[7].ret == 3u);
  BOOST_TEST(r[1001].ret == 2u);
}

BOOST_AUTO_TEST_CASE(calls_with_arguments_answer_like_run_bpf) {
  // Each golden program on the numbers it has argument rules for and their neighbours,
  // with arguments from the program's own constants, so that the argument comparisons
  // split the calls every way; and the same with an instruction replaced as above.
  std::mt19937 rng(20261205);
  const uint16_t kOthers[] = {0x04, 0x54, 0x45, 0x1d, 0x07, 0x87, 0x02, 0x16, 0x00, 0x01, 0x61, 0x84};
  for (const auto& g : test::golden_compiles(compiler::Target::Linux)) {
    const auto prog = program_of(g.artifact("seccomp.bpf"));
    std::vector<uint32_t> constants = {0, 1, 0xffffffffu};
    for (const BpfInsn& in : prog) constants.push_back(in.k);
    auto pick = [&] {
      const uint32_t k = constants[rng() % constants.size()];
      return rng() % 4 == 0 ? k + 1 : k;
    };
    std::vector<compiler::SeccompData> calls;
    for (const ir::SyscallInfo& s : ir::syscall_table(ir::Arch::X86_64))
      for (int n = 0; n < 8; ++n) {
        compiler::SeccompData d{s.nr, ir::kAuditArchX86_64, 0, {}};
        if (n == 7) d.arch = ir::kAuditArchI386;
        for (auto& a : d.args) a = uint64_t{pick()} << 32 * (rng() % 2) | pick();
        calls.push_back(d);
      }
    for (size_t variant = 0; variant <= prog.size(); variant += 7) {
      auto changed = prog;
      if (variant < prog.size() && (changed[variant].code & 0x07) < 0x05) {
        changed[variant].code = kOthers[rng() % std::size(kOthers)];
        changed[variant].k = rng() % 16;
      }
      const auto together = compiler::run_bpf_for_calls(changed, calls);
      for (size_t i = 0; i < calls.size(); ++i) {
        const BpfRun one = compiler::run_bpf(changed, calls[i]);
        if (together[i].ret != one.ret || together[i].executed != one.executed ||
            together[i].read_arguments != one.read_arguments) {
          BOOST_ERROR(g.name << " variant " << variant << " call " << i << ": together ret "
                             << together[i].ret << ", run_bpf ret " << one.ret);
          break;
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
