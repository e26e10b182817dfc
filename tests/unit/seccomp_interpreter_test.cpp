#include <boost/test/unit_test.hpp>

#include <cstring>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "seccomp_test_support.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;

namespace {

std::string bytes(const std::vector<zc::BpfInsn>& prog) {
  std::string out(prog.size() * 8, '\0');
  for (size_t i = 0; i < prog.size(); ++i) {
    std::memcpy(out.data() + 8 * i, &prog[i].code, 2);
    out[8 * i + 2] = static_cast<char>(prog[i].jt);
    out[8 * i + 3] = static_cast<char>(prog[i].jf);
    std::memcpy(out.data() + 8 * i + 4, &prog[i].k, 4);
  }
  return out;
}

bool rejected_bytes(const std::string& program) {
  const auto parsed = zc::parse_bpf(program);
  return !parsed.has_value() && !parsed.error().message.empty();
}

bool rejected(const std::vector<zc::BpfInsn>& prog) { return rejected_bytes(bytes(prog)); }

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_interpreter)

BOOST_AUTO_TEST_CASE(rejects_what_the_kernel_rejects) {
  BOOST_TEST(rejected({}));
  BOOST_TEST(rejected({{0x20, 0, 0, 64}, {0x06, 0, 0, 0}}));   // load past seccomp_data
  BOOST_TEST(rejected({{0x20, 0, 0, 2}, {0x06, 0, 0, 0}}));    // unaligned load
  BOOST_TEST(rejected({{0x15, 5, 0, 1}, {0x06, 0, 0, 0}}));    // jump past the end
  BOOST_TEST(rejected({{0x05, 0, 0, 7}, {0x06, 0, 0, 0}}));    // ja past the end
  BOOST_TEST(rejected({{0x20, 0, 0, 0}}));                     // no return at the end
  BOOST_TEST(rejected({{0x28, 0, 0, 0}, {0x06, 0, 0, 0}}));    // ld half-word: not seccomp
  BOOST_TEST(rejected({{0x34, 0, 0, 0}, {0x06, 0, 0, 0}}));    // div #0
  BOOST_TEST(rejected_bytes(std::string(12, '\0')));           // not 8-byte units
}

BOOST_AUTO_TEST_CASE(runs_alu_scratch_and_x_register) {
  // A = nr * 2 + args[0].low; M[1] = A; X = 10; A = M[1]; jgt x -> allow else errno(A)
  const std::vector<zc::BpfInsn> prog = {
      {0x20, 0, 0, 0},  {0x24, 0, 0, 2},  {0x02, 0, 0, 1},  {0x20, 0, 0, 16},
      {0x07, 0, 0, 0},  {0x60, 0, 0, 1},  {0x0c, 0, 0, 0},  {0x01, 0, 0, 10},
      {0x2d, 0, 1, 0},  {0x06, 0, 0, 0x7fff0000u}, {0x54, 0, 0, 0xffff},
      {0x44, 0, 0, 0x50000}, {0x16, 0, 0, 0},
  };
  const auto parsed = zc::parse_bpf(bytes(prog));
  BOOST_REQUIRE_MESSAGE(parsed.has_value(), parsed.error().message);
  zc::SeccompData d;
  d.nr = 3;
  d.args[0] = 1;  // A = 3*2 + 1 = 7, not > 10: errno(7)
  auto r = zc::run_bpf(*parsed, d);
  BOOST_TEST(r.ret == 0x50007u);
  BOOST_TEST(r.executed == 12u);  // the allow return is jumped over
  d.args[0] = 5;  // 11 > 10
  BOOST_TEST(zc::run_bpf(*parsed, d).ret == 0x7fff0000u);
}

// Red team A29B-1: the kernel shifts by the count in X modulo 32 (tests/kernel/
// attack29b_test.cpp shows it); the interpreter said 0, so `inspect --syscall ptrace` named
// kill_thread for a program that lets ptrace through.
BOOST_AUTO_TEST_CASE(a_shift_through_x_counts_modulo_32_as_the_kernel_does) {
  // nr == ptrace: A = 0x7fff << X (48), or A = 0x7fff0000 >> X (32); ret a.
  const auto shifted = [](uint16_t shift, uint32_t a, uint32_t x) {
    return std::vector<zc::BpfInsn>{{0x20, 0, 0, 0}, {0x15, 1, 0, 101}, {0x06, 0, 0, 0x50001},
                                    {0x00, 0, 0, a}, {0x01, 0, 0, x},   {shift, 0, 0, 0},
                                    {0x16, 0, 0, 0}};
  };
  zc::SeccompData d;
  d.nr = 101;
  d.arch = 0xC000003Eu;
  BOOST_TEST(zc::run_bpf(shifted(0x6c, 0x7fff, 48), d).ret == 0x7fff0000u);       // lsh x
  BOOST_TEST(zc::run_bpf(shifted(0x7c, 0x7fff0000u, 32), d).ret == 0x7fff0000u);  // rsh x
  BOOST_TEST(zc::run_bpf(shifted(0x6c, 0x7fff, 16), d).ret == 0x7fff0000u);
  const auto eval =
      zc::evaluate_bpf(bytes(shifted(0x6c, 0x7fff, 48)), zpolicy::ir::Arch::X86_64, 101, {}, 0);
  BOOST_REQUIRE(eval.has_value());
  BOOST_TEST(eval->action.has_value());
  BOOST_TEST((eval->action && eval->action->kind == zpolicy::ir::Action::Kind::Allow));
}

BOOST_AUTO_TEST_CASE(disassembly_names_fields_syscalls_and_actions) {
  const std::string text =
      zc::disassemble_bpf(zpolicy::emitters::seccomp::emit_bpf(zpolicy::test::default_syscalls()));
  BOOST_TEST(text.find("; arch") != std::string::npos);
  BOOST_TEST(text.find("; nr") != std::string::npos);
  BOOST_TEST(text.find("; args[1] low") != std::string::npos);  // ioctl's request
  BOOST_TEST(text.find("; ioctl") != std::string::npos);  // a syscall number, named
  BOOST_TEST(text.find("; errno(38)") != std::string::npos);
  BOOST_TEST(text.find("; kill") != std::string::npos);
  BOOST_TEST(zc::disassemble_bpf(std::string_view("abc")).rfind("invalid seccomp program", 0) == 0);
}

BOOST_AUTO_TEST_CASE(evaluates_one_call_per_arch) {
  const std::string bpf = zpolicy::emitters::seccomp::emit_bpf(zpolicy::test::default_syscalls());
  const auto ptrace = zc::evaluate_bpf(bpf, ir::Arch::X86_64, 101, {}, 0);
  BOOST_REQUIRE(ptrace.has_value());
  BOOST_TEST(ptrace->ret == 0x50001u);
  BOOST_TEST((ptrace->action && *ptrace->action == ir::Action::errno_(1)));
  BOOST_TEST(ptrace->executed > 3u);
  const auto x32 = zc::evaluate_bpf(bpf, ir::Arch::X32, 0, {}, 0);  // x32 read
  BOOST_TEST((x32 && x32->action && *x32->action == ir::Action::kill()));
  const auto i386 = zc::evaluate_bpf(bpf, ir::Arch::I386, 3, {}, 0);  // i386 read
  BOOST_TEST((i386 && i386->action && *i386->action == ir::Action::kill()));
  const auto junk = zc::evaluate_bpf("xyz", ir::Arch::X86_64, 0, {}, 0);
  BOOST_TEST(!junk.has_value());
  BOOST_TEST(!junk.error().message.empty());
}

BOOST_AUTO_TEST_SUITE_END()
