// The kernel loader's rules (bpf_loader_rules.hpp), one test per rule: a program that
// breaks only that rule is refused, naming the instruction; the same program with the
// rule met loads. The mutation tier checks the same programs against the kernel itself
// (seccomp_kernel_referee_test.cpp).
#include <boost/test/unit_test.hpp>
#include <set>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/bpf_loader_rules.hpp"
#include "seccomp_loader_cases.hpp"

namespace zc = zpolicy::compiler;

namespace {

// The row of the loader's table (loader_rule_ids) each case of seccomp_loader_cases.hpp
// breaks.
std::string_view row_of(const std::string& c) {
  if (c.starts_with("opcode")) return "opcode";
  if (c == "division-by-zero" || c == "modulo-by-zero") return "division-by-zero";
  if (c == "shift-32") return "shift";
  if (c.ends_with("-range")) return "jump-range";
  if (c == "ancillary" || c.starts_with("load-")) return "load-range";
  if (c == "last-ret") return "last-return";
  if (c == "scratch-index") return "scratch-index";
  if (c.starts_with("scratch-")) return "scratch-before-store";
  if (c.starts_with("seccomp-opcode")) return "seccomp-opcode";
  return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_loader_rules)

BOOST_AUTO_TEST_CASE(each_case_is_refused_by_its_row_of_the_table) {
  std::set<std::string_view> exercised;
  for (const auto& c : zpolicy::test::loader_cases()) {
    const auto refusal = zc::loader_refusal(c.refused);
    BOOST_TEST_REQUIRE(refusal.has_value(), c.rule);
    BOOST_TEST(refusal->id == row_of(c.rule), c.rule << ": refused by " << refusal->id);
    exercised.insert(refusal->id);
  }
  for (std::string_view id : zc::loader_rule_ids())
    BOOST_TEST(exercised.contains(id), "no case breaks the loader rule " << id);
}

BOOST_AUTO_TEST_CASE(the_kernels_order_decides_which_rule_a_program_breaks) {
  constexpr uint32_t kAllow = 0x7fff0000u;
  const zc::BpfInsn ret{0x06, 0, 0, kAllow}, ld_nr{0x20, 0, 0, 0};
  auto refusal = [](const std::vector<zc::BpfInsn>& prog) { return zc::loader_refusal(prog); };
  // Classic BPF's loop sees a division by 0 at 1 before the unknown opcode at 2.
  auto r = refusal({ld_nr, {0x34, 0, 0, 0}, {0x99, 0, 0, 0}, ret});
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST((r->id == "division-by-zero" && r->instruction == size_t{1}), r->str());
  // Its rules come before seccomp's: a modulo by 0 is refused as a division by 0, not as
  // an instruction seccomp forbids.
  r = refusal({ld_nr, {0x94, 0, 0, 0}, ret});
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST(r->id == "division-by-zero", r->str());
  // The last-return rule comes before the scratch memory flow, which comes before the
  // loads seccomp allows.
  r = refusal({{0x20, 0, 0, 2}, {0x60, 0, 0, 1}, ld_nr});
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST(r->id == "last-return", r->str());
  r = refusal({{0x20, 0, 0, 2}, {0x60, 0, 0, 1}, ret});
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST((r->id == "scratch-before-store" && r->instruction == size_t{1}), r->str());
}

BOOST_AUTO_TEST_CASE(each_rule_refuses_its_case_and_names_the_instruction) {
  for (const auto& c : zpolicy::test::loader_cases()) {
    const auto refusal = zc::loader_refusal(c.refused);
    BOOST_TEST_REQUIRE(refusal.has_value(), c.rule);
    BOOST_TEST((refusal->instruction == c.instruction), c.rule << ": " << refusal->str());
    BOOST_TEST(refusal->rule.find(c.says) != std::string::npos, c.rule << ": " << refusal->str());
    const auto parsed = zc::parse_bpf(zpolicy::test::bytes_of(c.refused));
    BOOST_TEST(!parsed.has_value(), c.rule);
    const std::string& error = parsed.error().message;
    if (!c.refused.empty())
      BOOST_TEST(error.find(c.says) != std::string::npos, c.rule << ": " << error);
    const auto fixed = zc::loader_refusal(c.accepted);
    BOOST_TEST(!fixed.has_value(),
               c.rule << ": the accepted variant is refused: " << (fixed ? fixed->str() : ""));
  }
}

BOOST_AUTO_TEST_CASE(every_rule_has_a_case) {
  std::set<std::string> rules;
  for (const auto& c : zpolicy::test::loader_cases()) rules.insert(c.rule);
  for (const char* r : {"length",
                        "opcode",
                        "opcode-high-bits",
                        "division-by-zero",
                        "modulo-by-zero",
                        "shift-32",
                        "scratch-index",
                        "ja-range",
                        "jt-range",
                        "jf-range",
                        "ancillary",
                        "last-ret",
                        "scratch-before-store",
                        "scratch-one-branch",
                        "scratch-after-ret",
                        "seccomp-opcode-mod",
                        "seccomp-opcode-ld-half",
                        "seccomp-opcode-ind",
                        "seccomp-opcode-msh",
                        "load-outside",
                        "load-unaligned"})
    BOOST_TEST(rules.contains(r), r);
}

BOOST_AUTO_TEST_SUITE_END()
