// run_bpf_for_numbers follows numbers as ranges; it must answer exactly as run_bpf does
// number by number, on the programs zpolicy emits and on programs that do with the
// number what zpolicy's never do (arithmetic, bit tests, copies, comparisons with X).
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
  std::string error;
  auto prog = compiler::parse_bpf(bytes, &error);
  BOOST_TEST_REQUIRE(prog.has_value(), error);
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

BOOST_AUTO_TEST_SUITE_END()
