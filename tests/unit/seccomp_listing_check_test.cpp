// seccomp.txt must be the listing of seccomp.bpf (listing_check.hpp): a stale, empty or
// edited listing is a finding, since it is what reviewers read in golden diffs.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <fstream>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/listing_check.hpp"
#include "compiler/analyzer/seccomp/number_reach.hpp"
#include "golden_support.hpp"
#include "support/cli.hpp"

using namespace zpolicy;

namespace {

struct Listed {
  std::string name;
  ir::SyscallPolicy policy;
  std::vector<compiler::BpfInsn> program;
  std::string listing;
};

const std::vector<Listed>& goldens() {
  static const std::vector<Listed> all = [] {
    std::vector<Listed> out;
    for (auto& c : test::golden_compiles(compiler::Target::Linux)) {
      auto prog = compiler::parse_bpf(c.artifact("seccomp.bpf"));
      if (!prog) throw std::runtime_error(prog.error().message);
      out.push_back({c.name, c.compiled.resolved.syscalls, *prog, c.artifact("seccomp.txt")});
    }
    return out;
  }();
  return all;
}

const Listed& golden(const std::string& name) {
  for (const auto& g : goldens())
    if (g.name == name) return g;
  throw std::runtime_error("no golden " + name);
}

std::optional<ir::Diagnostic> check(const std::string& listing) {
  const auto& g = golden("default");
  return compiler::check_listing(listing, g.program, g.policy);
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at == std::string::npos) throw std::runtime_error("no '" + from + "' in the listing");
  return s.replace(at, from.size(), to);
}

// Every whole-word use of label `from` (its definition and the jumps to it) renamed.
std::string renamed(std::string s, const std::string& from, const std::string& to) {
  for (const std::string& end : {std::string(":\n"), std::string(", "), std::string("\n")}) {
    for (const std::string& begin : {std::string("\n"), std::string(", ")}) {
      for (size_t at = s.find(begin + from + end); at != std::string::npos;
           at = s.find(begin + from + end, at + 1))
        s.replace(at + begin.size(), from.size(), to);
    }
  }
  return s;
}

// The 1-based line `needle` begins on (after its leading newline, if any).
int line_of(const std::string& s, const std::string& needle) {
  const size_t at = s.find(needle);
  if (at == std::string::npos) throw std::runtime_error("no '" + needle + "' in the listing");
  return static_cast<int>(std::count(s.begin(), s.begin() + static_cast<long>(at), '\n')) + 1;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_listing_check)

BOOST_AUTO_TEST_CASE(every_golden_listing_is_its_programs_listing) {
  for (const auto& g : goldens()) {
    const auto m = compiler::check_listing(g.listing, g.program, g.policy);
    BOOST_TEST(!m.has_value(),
               g.name << ": line " << (m ? m->loc.line : 0) << ": " << (m ? m->message : ""));
  }
}

BOOST_AUTO_TEST_CASE(empty_stale_and_edited_listings_are_refused) {
  const std::string ok = golden("default").listing;
  const int lines = static_cast<int>(std::count(ok.begin(), ok.end(), '\n'));
  struct Case {
    std::string what, listing;
    int line;
  };
  const std::string arch = "jeq   #AUDIT_ARCH_X86_64, x86_64, next";
  const std::string bound = "jge   #ioctl, ioctl..0xffffffff, next";
  const std::string request = "jeq   #TIOCSTI, ioctl.1, ioctl.2";
  const std::vector<Case> cases = {
      {"empty", "", 1},
      {"another program's listing", golden("deny-roots").listing, 3},
      {"a named constant", replaced(ok, arch, "jeq   #AUDIT_ARCH_I386, x86_64, next"),
       line_of(ok, arch)},
      {"a constant's number", replaced(ok, arch, "jeq   #0xc000003f, x86_64, next"),
       line_of(ok, arch)},
      {"an argument constant", replaced(ok, request, "jeq   #TIOCLINUX, ioctl.1, ioctl.2"),
       line_of(ok, request)},
      {"an unknown name", replaced(ok, request, "jeq   #TIOCSTX, ioctl.1, ioctl.2"),
       line_of(ok, request)},
      {"swapped jump targets", replaced(ok, arch, "jeq   #AUDIT_ARCH_X86_64, next, x86_64"),
       line_of(ok, arch)},
      {"a target that is no label", replaced(ok, bound, "jge   #ioctl, nowhere, next"),
       line_of(ok, bound)},
      {"a label moved off its instruction", replaced(ok, "\nioctl.1:\n", "\nioctl.9:\n"),
       line_of(ok, request)},
      {"a label defined twice", replaced(ok, "\nioctl.2:\n", "\nioctl.1:\n"),
       line_of(ok, "\nioctl.2:\n") + 1},
      {"a label that is not a name", replaced(ok, "\nioctl.2:\n", "\nnext:\n"),
       line_of(ok, "\nioctl.2:\n") + 1},
      {"an instruction not indented", replaced(ok, "  ld    [4]", "ld    [4]"), 4},
      {"a return's action",
       replaced(ok, "ret   #0x50001                            ; errno(1)  # ioctl",
                "ret   #0x50001                            ; allow  # ioctl"),
       line_of(ok, request) + 2},
      {"a load's field",
       replaced(ok, "ld    [24]                                ; ioctl arg1 low word",
                "ld    [24]                                ; ioctl arg2 low word"),
       line_of(ok, request) - 1},
      {"a bound's syscall", replaced(ok, bound, "jge   #pread64, ioctl..0xffffffff, next"),
       line_of(ok, bound)},
      {"a bound's comment", replaced(ok, bound, bound + " ; nr >= pread64(17)"),
       line_of(ok, bound)},
      // Labels and comments that name system calls name those whose numbers reach there.
      {"a renamed label", renamed(ok, "close..rt_sigreturn", "ptrace..kill"),
       line_of(ok, "\nclose..rt_sigreturn:\n") + 1},
      {"a label naming another range", renamed(ok, "close..rt_sigreturn", "close..pread64"),
       line_of(ok, "\nclose..rt_sigreturn:\n") + 1},
      {"two labels swapped",
       renamed(renamed(renamed(ok, "close..rt_sigreturn", "swap"), "ioctl..0xffffffff",
                       "close..rt_sigreturn"),
               "swap", "ioctl..0xffffffff"),
       line_of(ok, "\nclose..rt_sigreturn:\n") + 1},
      {"a local label of another syscall", renamed(ok, "open.1", "close.1"),
       line_of(ok, "\nopen.1:\n") + 1},
      {"a return's range",
       replaced(ok, "; allow  # read(0)..write(1)", "; allow  # read(0)..close(3)"),
       line_of(ok, "; allow  # read(0)..write(1)")},
      {"a return's syscall", replaced(ok, "; errno(1)  # ioctl", "; errno(1)  # ptrace"),
       line_of(ok, "; errno(1)  # ioctl")},
      {"a load's syscall",
       replaced(ok, "; ioctl arg1 low word", "; ptrace arg1 low word"),
       line_of(ok, "; ioctl arg1 low word")},
      {"a comparison's syscall",
       replaced(ok, "; ioctl arg1 == TIOCSTI", "; open arg1 == TIOCSTI"), line_of(ok, request)},
      {"the default action", replaced(ok, "# default allow,", "# default errno(1),"), 2},
      {"the length", replaced(ok, "# 229 instructions", "# 228 instructions"), 3},
      {"a line after the program", ok + "  ret   #0x7fff0000\n", lines + 1},
      {"a label after the program", ok + "end:\n", lines + 1},
      {"a missing instruction", ok.substr(0, ok.rfind("  ret")), lines},
      {"no final newline", ok.substr(0, ok.size() - 1), lines},
  };
  for (const auto& c : cases) {
    const auto m = check(c.listing);
    BOOST_TEST_REQUIRE(m.has_value(), c.what);
    BOOST_TEST(m->loc.line == c.line, c.what << ": " << m->message);
  }
}

// What labels and comments are held to: comparisons of the number with constants split
// it exactly; a bit test of it leaves only an upper bound, which names nothing.
BOOST_AUTO_TEST_CASE(the_numbers_that_reach_each_instruction) {
  using namespace compiler::bpf;
  using Iv = std::vector<std::pair<uint32_t, uint32_t>>;
  const std::vector<compiler::BpfInsn> prog = {
      {LD | W | ABS, 0, 0, 0},    // 0: ld [0]
      {JMP | JGE | K, 3, 0, 10},  // 1: nr >= 10 -> 5
      {JMP | JEQ | K, 0, 1, 2},   // 2: nr == 2 -> 3, else 4
      {RET | K, 0, 0, 0},         // 3: {2}
      {RET | K, 0, 0, 1},         // 4: 0..1, 3..9
      {JMP | JSET | K, 0, 1, 1},  // 5: nr & 1
      {RET | K, 0, 0, 2},         // 6: the odd ones of 11.. (bounded by 10.., not exact)
      {RET | K, 0, 0, 3},         // 7
  };
  const auto reach = compiler::number_reach(prog);
  BOOST_TEST((reach[3].intervals == Iv{{2, 2}}));
  BOOST_TEST((reach[4].intervals == Iv{{0, 1}, {3, 9}}));
  BOOST_TEST((reach[5].intervals == Iv{{10, 0xffffffffu}}));
  BOOST_TEST((reach[3].exact && reach[4].exact && reach[5].exact));
  BOOST_TEST((!reach[6].exact && !reach[7].exact));
}

BOOST_AUTO_TEST_CASE(verify_reports_a_stale_listing_with_its_line) {
  test::Cli cli;
  cli.copy_golden("default.yaml", "p.yaml");
  auto c = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
  BOOST_REQUIRE_MESSAGE(c.exit_code == 0, c.err);
  std::ofstream(cli.dir / "out/seccomp.txt", std::ios::trunc) << "";
  auto r = cli.run({"verify", "p.yaml", "out", "--target", "linux"});
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(
      r.err.find("seccomp.txt:1:1: error: linux: malformed-artifact: seccomp.txt: expected the "
                 "listing of seccomp.bpf") != std::string::npos,
      r.err);
}

BOOST_AUTO_TEST_SUITE_END()
