// seccomp.txt must be the listing of seccomp.bpf (listing_check.hpp): a stale, empty or
// edited listing is a finding, since it is what reviewers read in golden diffs.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <fstream>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/listing_check.hpp"
#include "compiler/analyzer/seccomp/number_reach.hpp"
#include "compiler/pipeline.hpp"
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
      {"a label moved off its instruction", replaced(ok, "\nioctl.1:\n", "\nioctl.99:\n"),
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
      {"a load's syscall", replaced(ok, "; ioctl arg1 low word", "; ptrace arg1 low word"),
       line_of(ok, "; ioctl arg1 low word")},
      {"a comparison's syscall", replaced(ok, "; ioctl arg1 == TIOCSTI", "; open arg1 == TIOCSTI"),
       line_of(ok, request)},
      {"the default action", replaced(ok, "# default allow,", "# default errno(1),"), 2},
      {"the length", replaced(ok, "# 276 instructions", "# 275 instructions"), 3},
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

// What the check above leaves free (words after a comparison's syscall, spacing, a
// constant's or a label's spelling, the header's third line after the length, further
// header lines) `verify` holds to the byte: seccomp.txt must be exactly the listing
// zpolicy writes for the policy (compiler/pipeline.hpp, verify_given_artifacts). Each
// listing below but the last two passed `verify` before (2026-12-06).
BOOST_AUTO_TEST_CASE(verify_holds_the_listing_to_the_byte) {
  const auto compiles = test::golden_compiles(compiler::Target::Linux);
  const auto g = std::find_if(compiles.begin(), compiles.end(),
                              [](const test::GoldenCompile& c) { return c.name == "default"; });
  BOOST_TEST_REQUIRE((g != compiles.end()));
  const std::string ok = g->artifact("seccomp.txt");
  auto verify = [&](const std::string& listing) {
    auto arts = g->compiled.artifacts;
    for (auto& a : arts)
      if (a.name == "seccomp.txt") a.content = listing;
    return compiler::verify_given_artifacts(g->compiled.resolved, compiler::Target::Linux, arts);
  };
  BOOST_TEST(verify(ok).empty());
  const std::string request = "  jeq   #TIOCSTI, ioctl.1, ioctl.2          ; ioctl arg1 == TIOCSTI";
  const std::string bits = "; open arg2 has any bit of S_ISUID|S_ISGID";
  const std::string arch_ret = "; kill  # i386 and any other arch";
  const std::string bound = "jge   #ioctl, ioctl..0xffffffff, next";
  struct Case {
    std::string what, listing;
    int line;
  };
  const std::vector<Case> cases = {
      {"a word after a comparison's syscall",
       replaced(ok, "ioctl arg1 == TIOCSTI", "ioctl arg1 != TIOCSTI"), line_of(ok, request)},
      {"another constant after a comparison's syscall",
       replaced(ok, "ioctl arg1 == TIOCSTI", "ioctl arg1 == TIOCLINUX"), line_of(ok, request)},
      {"an extra word after a comparison",
       replaced(ok, "ioctl arg1 == TIOCSTI", "ioctl arg1 == TIOCSTI only"), line_of(ok, request)},
      {"an extra word after a bit test", replaced(ok, bits, bits + " or none"), line_of(ok, bits)},
      {"an extra word after a return's action", replaced(ok, arch_ret, arch_ret + " (never)"),
       line_of(ok, arch_ret)},
      {"fewer spaces after the mnemonic",
       replaced(ok, request, "  jeq #TIOCSTI, ioctl.1, ioctl.2          ; ioctl arg1 == TIOCSTI"),
       line_of(ok, request)},
      {"the comment out of its column",
       replaced(ok, request, "  jeq   #TIOCSTI, ioctl.1, ioctl.2 ; ioctl arg1 == TIOCSTI"),
       line_of(ok, request)},
      {"a trailing space", replaced(ok, request + "\n", request + " \n"), line_of(ok, request)},
      {"the header's interval count", replaced(ok, "96 number intervals", "97 number intervals"),
       3},
      {"a header line more",
       replaced(ok, "96 number intervals\n", "96 number intervals\n# reviewed\n"), 4},
      {"a constant as a number", replaced(ok, bound, "jge   #0x10, ioctl..0xffffffff, next"),
       line_of(ok, bound)},
      {"a label spelled with numbers",
       renamed(ok, "close..rt_sigreturn", "close(3)..rt_sigreturn(15)"),
       line_of(ok, "close..rt_sigreturn")},
      {"a label that names no number", renamed(ok, "x86_64", "native"),
       line_of(ok, "x86_64, next")},
      // Caught before too, by the check above: lines reordered, a line more.
      {"two lines swapped",
       replaced(ok, "  ld    [24]                                ; ioctl arg1 low word\n" + request,
                request + "\n  ld    [24]                                ; ioctl arg1 low word"),
       line_of(ok, "ioctl arg1 low word")},
      {"a line after the program", ok + "  ret   #0x7fff0000\n",
       static_cast<int>(std::count(ok.begin(), ok.end(), '\n')) + 1},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      BOOST_TEST_REQUIRE(c.listing != ok);
      const auto found = verify(c.listing);
      BOOST_TEST_REQUIRE(found.size() == 1u);
      BOOST_TEST(found[0].kind == "malformed-artifact");
      BOOST_TEST(found[0].loc.file == "seccomp.txt");
      BOOST_TEST(found[0].loc.line == c.line, found[0].str());
    }
  }
}

// The same through the command line: exit 3, naming the line and what zpolicy writes there.
BOOST_AUTO_TEST_CASE(verify_names_a_changed_word_of_the_listing) {
  test::Cli cli;
  cli.copy_golden("default.yaml", "p.yaml");
  auto c = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
  BOOST_REQUIRE_MESSAGE(c.exit_code == 0, c.err);
  const std::string ok = golden("default").listing;
  std::ofstream(cli.dir / "out/seccomp.txt", std::ios::trunc)
      << replaced(ok, "ioctl arg1 == TIOCSTI", "ioctl arg1 != TIOCSTI");
  auto r = cli.run({"verify", "p.yaml", "out", "--target", "linux"});
  BOOST_TEST(r.exit_code == 3);
  const std::string at = "seccomp.txt:" + std::to_string(line_of(ok, "ioctl arg1 == TIOCSTI")) +
                         ":1: error: linux: malformed-artifact: seccomp.txt: expected the listing "
                         "zpolicy writes for this policy, artifact gives `  jeq   #TIOCSTI, "
                         "ioctl.1, ioctl.2          ; ioctl arg1 != TIOCSTI` where zpolicy writes "
                         "`  jeq   #TIOCSTI, ioctl.1, ioctl.2          ; ioctl arg1 == TIOCSTI`";
  BOOST_TEST(r.err.find(at) != std::string::npos, r.err);
}

// seccomp.txt is held to the given seccomp.bpf, not only to the program zpolicy would emit
// (docs/verify.md, "4. The listing", "Which program the listing lists"). A program the
// proof accepts although it is not the emitted one (here a `ja +0` in front: relative
// jumps keep their targets) is held to its own instructions: the emitter's listing is
// refused at the first line that does not list it, and a listing that does list it passes
// the listing check and is refused only by the byte comparison with what zpolicy writes,
// so that no listing of such a program passes. A program that differs from the emitted
// one only in a byte no listing shows and the kernel ignores (the jump offsets of a
// `ret`) has the emitted listing as its own.
BOOST_AUTO_TEST_CASE(a_program_other_than_the_emitted_one_is_held_to_its_own_listing) {
  const auto compiles = test::golden_compiles(compiler::Target::Linux);
  const auto g = std::find_if(compiles.begin(), compiles.end(),
                              [](const test::GoldenCompile& c) { return c.name == "default"; });
  BOOST_TEST_REQUIRE((g != compiles.end()));
  const std::string bpf = g->artifact("seccomp.bpf"), ok = g->artifact("seccomp.txt");
  auto verify = [&](const std::string& program, const std::string& listing) {
    auto arts = g->compiled.artifacts;
    for (auto& a : arts) {
      if (a.name == "seccomp.bpf") a.content = program;
      if (a.name == "seccomp.txt") a.content = listing;
    }
    return compiler::verify_given_artifacts(g->compiled.resolved, compiler::Target::Linux, arts);
  };
  auto insn_bytes = [](compiler::BpfInsn in) {
    std::string out(sizeof in.code + 2 + sizeof in.k, '\0');
    std::memcpy(out.data(), &in.code, sizeof in.code);
    out[2] = static_cast<char>(in.jt);
    out[3] = static_cast<char>(in.jf);
    std::memcpy(out.data() + 4, &in.k, sizeof in.k);
    return out;
  };
  const size_t count = bpf.size() / 8;
  const std::string prefixed = insn_bytes({0x05, 0, 0, 0}) + bpf;  // BPF_JMP | BPF_JA, k = 0

  // The emitter's listing, of the program with one instruction less: refused by the
  // listing check, at the header's count, as not the listing of the given program.
  const auto emitted = verify(prefixed, ok);
  auto all = [](const std::vector<ir::Diagnostic>& fs) {
    std::string out;
    for (const auto& f : fs) out += f.str() + "\n";
    return out;
  };
  BOOST_TEST_REQUIRE(emitted.size() == 1u, all(emitted));
  BOOST_TEST(emitted[0].loc.str() == "seccomp.txt:3:1");
  BOOST_TEST(emitted[0].expected == "the listing of seccomp.bpf");

  // The given program's own listing: the proof and the listing check accept it; only the
  // byte comparison refuses it, at the same line.
  std::string own = replaced(ok, "# " + std::to_string(count) + " instructions,",
                             "# " + std::to_string(count + 1) + " instructions,");
  own = replaced(own, "\n  ld    [4]", "\n  ja    next\n  ld    [4]");
  BOOST_TEST(
      !compiler::check_listing(own, *compiler::parse_bpf(prefixed), g->compiled.resolved.syscalls));
  const auto own_found = verify(prefixed, own);
  BOOST_TEST_REQUIRE(own_found.size() == 1u, all(own_found));
  BOOST_TEST(own_found[0].loc.str() == "seccomp.txt:3:1");
  BOOST_TEST(own_found[0].expected == "the listing zpolicy writes for this policy");

  // The last instruction, a `ret`, with jump offsets the kernel never reads.
  std::string unseen = bpf;
  unseen[bpf.size() - 8 + 2] = 1;
  unseen[bpf.size() - 8 + 3] = 2;
  BOOST_TEST_REQUIRE(unseen != bpf);
  const auto unseen_found = verify(unseen, ok);
  BOOST_TEST(unseen_found.empty(), all(unseen_found));
}

BOOST_AUTO_TEST_SUITE_END()
