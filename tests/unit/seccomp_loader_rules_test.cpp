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

BOOST_AUTO_TEST_SUITE(seccomp_loader_rules)

BOOST_AUTO_TEST_CASE(each_rule_refuses_its_case_and_names_the_instruction) {
  for (const auto& c : zpolicy::test::loader_cases()) {
    const auto refusal = zc::loader_refusal(c.refused);
    BOOST_TEST_REQUIRE(refusal.has_value(), c.rule);
    BOOST_TEST((refusal->instruction == c.instruction), c.rule << ": " << refusal->str());
    BOOST_TEST(refusal->rule.find(c.says) != std::string::npos, c.rule << ": " << refusal->str());
    std::string error;
    BOOST_TEST(!zc::parse_bpf(zpolicy::test::bytes_of(c.refused), &error).has_value(), c.rule);
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
