// Mutation test of the seccomp verifier on the golden policies' programs: every
// weakening of one return, swap of one jump's targets, shift of one comparison constant
// and neutralisation of one instruction is either caught by verify_seccomp, or changes
// no answer on a wider oracle (every number of every audited ABI, boundary and random
// argument vectors). A survivor that changes an answer fails the test.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <optional>
#include <random>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "golden_support.hpp"
#include "tests/unit/support/mutant_dump.hpp"
#include "ir/syscall_table.hpp"

using namespace zpolicy;
using compiler::BpfInsn;

namespace {

constexpr uint16_t kRet = 0x06, kJa = 0x05;
constexpr uint32_t kRetAllow = 0x7fff0000u, kRetErrnoEperm = 0x00050001u;

std::string bytes_of(const std::vector<BpfInsn>& prog) {
  std::string out(prog.size() * sizeof(BpfInsn), '\0');
  std::memcpy(out.data(), prog.data(), out.size());
  return out;
}

struct Mutant {
  std::string what;
  std::vector<BpfInsn> prog;
};

std::vector<Mutant> mutants(const std::vector<BpfInsn>& prog) {
  std::vector<Mutant> out;
  for (size_t i = 0; i < prog.size(); ++i) {
    const BpfInsn& in = prog[i];
    auto with = [&](BpfInsn changed, std::string what) {
      auto m = prog;
      m[i] = changed;
      out.push_back({"insn " + std::to_string(i) + ": " + what, std::move(m)});
    };
    if (in.code == kRet) {
      if (in.k != kRetAllow) with({kRet, 0, 0, kRetAllow}, "return allow");
      else with({kRet, 0, 0, kRetErrnoEperm}, "return errno(1)");
      continue;
    }
    bool conditional = (in.code & 0x07) == 0x05 && in.code != kJa;
    if (conditional) {
      with({in.code, in.jf, in.jt, in.k}, "swap targets");
      with({in.code, in.jt, in.jf, in.k + 1}, "constant + 1");
      if (in.k) with({in.code, in.jt, in.jf, in.k - 1}, "constant - 1");
    }
    // A `ja +0` does nothing: the instruction is neutralised without moving any other.
    with({kJa, 0, 0, 0}, "delete");
  }
  return out;
}

// The wider oracle: every number 0..1023 of each ABI (and the x32 range), with boundary
// and random argument vectors.
std::vector<compiler::SeccompData> oracle_calls() {
  std::vector<std::array<uint64_t, 6>> argsets = {{}, {~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull}};
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 6; ++i) {
    std::array<uint64_t, 6> a{};
    for (auto& v : a) v = rng() >> (rng() % 64);
    argsets.push_back(a);
  }
  for (uint64_t v : {1ull, 2ull, 10ull, 16ull, 40ull, 0x5412ull, 0x541cull, 1ull << 32})
    argsets.push_back({v, v, v, v, v, v});
  std::vector<compiler::SeccompData> calls;
  for (uint32_t arch : {ir::kAuditArchX86_64, ir::kAuditArchI386, 0xdeadbeefu})
    for (uint32_t nr = 0; nr < 1024; ++nr)
      for (const auto& a : argsets) calls.push_back({nr, arch, 0, a});
  for (uint32_t nr = 0; nr < 1024; nr += 7)
    calls.push_back({nr | ir::kX32SyscallBit, ir::kAuditArchX86_64, 0, {}});
  return calls;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(golden_bpf_mutation, *boost::unit_test::label("mutation"))

BOOST_AUTO_TEST_CASE(every_mutant_is_killed_or_changes_no_answer) {
  const auto calls = oracle_calls();
  for (const auto& g : test::golden_compiles(compiler::Target::Linux)) {
    auto prog = compiler::parse_bpf(g.artifact("seccomp.bpf"));
    BOOST_TEST_REQUIRE(prog.has_value(), g.name << ": " << prog.error().message);
    std::vector<uint32_t> want;
    for (const auto& c : calls) want.push_back(compiler::run_bpf(*prog, c).ret);
    size_t killed = 0, harmless = 0, total = 0;
    for (const auto& m : mutants(*prog)) {
      ++total;
      const auto v = compiler::verify_seccomp(g.compiled.resolved.syscalls, bytes_of(m.prog));
      // verify_seccomp runs the probe sweep only on a mutant the proof refutes; on one it
      // accepts the sweep runs here, as the proof's oracle, and must accept it too.
      std::optional<compiler::SeccompVerification> oracle;
      if (v && v->ok()) {
        oracle = compiler::sweep_seccomp(g.compiled.resolved.syscalls, m.prog);
        BOOST_TEST(oracle->ok(),
                   g.name << ": the probe sweep refutes a mutant the proof accepts: " << m.what);
      }
      std::vector<std::string> texts;
      size_t probes = 0;  // the sweep's, wherever it ran
      if (v) {
        for (const auto& f : v->findings) texts.push_back(f.report());
        probes = oracle ? oracle->probes : v->probes;
      }
      texts.push_back("program error: " + (v ? std::string() : v.error().message) +
                      "; mismatches: " + std::to_string(v ? v->mismatches : 0) + " of " +
                      std::to_string(probes));
      test::dump_mutant("seccomp " + g.name, m.what, texts);
      if (!v || !v->ok()) {
        ++killed;
        continue;
      }
      size_t changed = 0;
      std::string example;
      for (size_t i = 0; i < calls.size() && !changed; ++i)
        if (compiler::run_bpf(m.prog, calls[i]).ret != want[i]) {
          ++changed;
          example = "arch " + std::to_string(calls[i].arch) + " nr " + std::to_string(calls[i].nr) +
                    " arg0 " + std::to_string(calls[i].args[0]);
        }
      BOOST_TEST(changed == 0u, g.name << ": verify_seccomp missed a mutant that changes an answer: "
                                       << m.what << " (" << example << ")");
      ++harmless;
    }
    BOOST_TEST_MESSAGE(g.name << ": seccomp mutants: " << killed << " killed, " << harmless
                              << " change no answer, of " << total);
    BOOST_TEST(killed > total / 2, g.name);
  }
}

BOOST_AUTO_TEST_SUITE_END()
