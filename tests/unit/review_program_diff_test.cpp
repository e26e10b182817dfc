// `diff --artifacts` on seccomp programs (program_diff.hpp): exact over both programs'
// paths, so a widening hidden behind an argument value, the instruction pointer or a
// kill that became a thread kill is reported (the edits of issue 19 that sampling
// missed), and a program laid out differently but equivalent is no difference.
#include <boost/test/unit_test.hpp>
#include <cstring>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/review/program_diff.hpp"
#include "support/cli.hpp"
#include "support/subprocess.hpp"

using namespace zpolicy;
using compiler::BpfInsn;
using compiler::review::Difference;
using compiler::review::Direction;

namespace {

constexpr uint32_t kAllow = 0x7fff0000u, kKillProcess = 0x80000000u;

std::string golden_bytes() {
  return test::slurp(std::string(ZPOLICY_SOURCE_DIR) + "/golden/default.linux/seccomp.bpf");
}

std::vector<BpfInsn> golden_program() {
  auto p = compiler::parse_bpf(golden_bytes());
  if (!p) throw std::runtime_error(p.error().message);
  return *p;
}

BpfInsn ld_abs(uint32_t offset) { return {0x20, 0, 0, offset}; }
BpfInsn jeq(uint32_t k, uint8_t jt, uint8_t jf) { return {0x15, jt, jf, k}; }
BpfInsn ja(uint32_t k) { return {0x05, 0, 0, k}; }
BpfInsn ret(uint32_t k) { return {0x06, 0, 0, k}; }

std::vector<BpfInsn> prefixed(std::vector<BpfInsn> prefix, const std::vector<BpfInsn>& program) {
  prefix.insert(prefix.end(), program.begin(), program.end());
  return prefix;
}

std::vector<Difference> diff(const std::vector<BpfInsn>& a, const std::vector<BpfInsn>& b) {
  auto r = compiler::review::diff_programs(a, b);
  if (auto* e = std::get_if<compiler::review::ProgramDiffError>(&r))
    throw std::runtime_error(e->message);
  return std::get<std::vector<Difference>>(r);
}

std::string rows(const std::vector<Difference>& ds) {
  std::string out;
  for (const auto& d : ds)
    out += std::string(to_string(d.direction)) + " " + d.subject + ": " + d.before.verdict +
           " -> " + d.after.verdict + "\n";
  return out;
}

// Whether a row says exactly this, as a widening.
bool widens(const std::vector<Difference>& ds, const std::string& subject, const std::string& was,
            const std::string& now) {
  return std::any_of(ds.begin(), ds.end(), [&](const Difference& d) {
    return d.direction == Direction::Widening && d.subject == subject && d.before.verdict == was &&
           d.after.verdict == now;
  });
}

// Whether a row widens `call` under `when`: its own row, or one that stands for several.
bool widens_call(const std::vector<Difference>& ds, const std::string& call,
                 const std::string& when, const std::string& was, const std::string& now) {
  return widens(ds, call + when, was, now) ||
         std::any_of(ds.begin(), ds.end(), [&](const Difference& d) {
           return d.direction == Direction::Widening && d.subject.ends_with(when) &&
                  std::find(d.paths.begin(), d.paths.end(), call) != d.paths.end() &&
                  d.before.verdict == was && d.after.verdict == now;
         });
}

bool all_widen(const std::vector<Difference>& ds) {
  return !ds.empty() && std::all_of(ds.begin(), ds.end(), [](const Difference& d) {
    return d.direction == Direction::Widening;
  });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(review_program_diff)

BOOST_AUTO_TEST_CASE(a_program_and_an_equivalent_layout_are_no_difference) {
  const auto p = golden_program();
  BOOST_TEST(diff(p, p).empty());
  // The same program twice, chosen between by the instruction pointer: other paths, the
  // same answers.
  const uint32_t n = static_cast<uint32_t>(p.size());
  auto twice = prefixed({ld_abs(8), jeq(0, 1, 0), ja(n)}, p);
  twice.insert(twice.end(), p.begin(), p.end());
  BOOST_TEST(diff(p, twice).empty(), rows(diff(p, twice)));
  BOOST_TEST(diff(twice, p).empty(), rows(diff(twice, p)));
}

BOOST_AUTO_TEST_CASE(an_allow_behind_the_instruction_pointer_is_a_widening) {
  const auto p = golden_program();
  const auto edited = prefixed({ld_abs(8), jeq(0, 1, 0), ret(kAllow)}, p);
  const auto ds = diff(p, edited);
  BOOST_TEST(all_widen(ds), rows(ds));
  // Every call the filter refuses changes alike: one row, naming three and counting the
  // rest (all of them in `paths`), not one row per call.
  const auto calls = std::find_if(ds.begin(), ds.end(), [](const Difference& d) {
    return d.subject.find(" calls (") != std::string::npos &&
           std::find(d.paths.begin(), d.paths.end(), "ptrace") != d.paths.end();
  });
  BOOST_TEST_REQUIRE((calls != ds.end()), rows(ds));
  BOOST_TEST(calls->subject.ends_with(" more) when instruction_pointer low word != 0"), rows(ds));
  BOOST_TEST(calls->subject.starts_with(std::to_string(calls->paths.size()) + " calls ("));
  BOOST_TEST(calls->paths.size() > 3u);
  BOOST_TEST(calls->before.reason.starts_with("returned at instructions "), calls->before.reason);
  BOOST_TEST(widens(ds, "any call on i386 when instruction_pointer low word != 0", "kill", "allow"),
             rows(ds));
  // Numbers outside the table are named by up to three examples that show their spread.
  BOOST_TEST(widens(ds,
                    "numbers outside the x86_64 table (such as #335, #470 or #0x80000000) when "
                    "instruction_pointer low word != 0",
                    "errno(38)", "allow"),
             rows(ds));
  // One row per conditional rule of the baseline (26 with A27A-1's fcntl and ioctl rules and
  // A28C-1's five fscrypt ioctl rules), not one per call.
  BOOST_TEST(ds.size() <= 29u, rows(ds));
  // The other way round, the same calls narrow.
  const auto back = diff(edited, p);
  BOOST_TEST(back.size() == ds.size());
  BOOST_TEST(std::all_of(back.begin(), back.end(),
                         [](const Difference& d) { return d.direction == Direction::Narrowing; }));
}

BOOST_AUTO_TEST_CASE(an_allow_behind_an_argument_value_is_a_widening) {
  const auto p = golden_program();
  const auto edited = prefixed({ld_abs(16), jeq(4242, 0, 1), ret(kAllow)}, p);
  const auto ds = diff(p, edited);
  BOOST_TEST(all_widen(ds), rows(ds));
  BOOST_TEST(widens_call(ds, "ptrace", " when arg0 low word == 0x1092", "errno(1)", "allow"),
             rows(ds));
  // A call the golden program allows is no row at any argument value.
  BOOST_TEST(std::none_of(ds.begin(), ds.end(),
                          [](const Difference& d) { return d.subject.rfind("read ", 0) == 0; }),
             rows(ds));
}

BOOST_AUTO_TEST_CASE(a_process_kill_made_a_thread_kill_is_a_widening) {
  auto edited = golden_program();
  size_t changed = 0;
  for (auto& in : edited)
    if (in.code == 0x06 && in.k == kKillProcess) in.k = 0, ++changed;  // SECCOMP_RET_KILL_THREAD
  BOOST_TEST_REQUIRE(changed > 0u);
  const auto ds = diff(golden_program(), edited);
  BOOST_TEST(all_widen(ds), rows(ds));
  BOOST_TEST(widens(ds, "any call on i386", "kill", "kill_thread"), rows(ds));
}

// A chain of `jeq #nr` (paths met by number) with one return changed: that call alone.
BOOST_AUTO_TEST_CASE(one_return_of_a_chain_changed_is_that_call_alone) {
  auto chain = [](uint32_t allowed) {
    std::vector<BpfInsn> p = {ld_abs(4), jeq(0xc000003eu, 1, 0), ret(kKillProcess), ld_abs(0)};
    for (uint32_t nr = 0; nr < 300; ++nr) {
      p.push_back(jeq(nr, 0, 1));
      p.push_back(ret(nr % 2 == 0 || nr == allowed ? kAllow : 0x50001u));
    }
    p.push_back(ret(0x50001u));
    return p;
  };
  const auto ds = diff(chain(300), chain(7));
  BOOST_TEST(ds.size() == 1u, rows(ds));
  BOOST_TEST(widens(ds, "poll", "errno(1)", "allow"), rows(ds));
}

// Two programs of 4096 paths each (walk_paths' limit) that tell calls apart by different
// words meet in every pair: 16.7 million cells, each with rows of its own. Refused with
// the reason, within the pair budget, rather than run for hours.
BOOST_AUTO_TEST_CASE(two_programs_that_meet_in_every_pair_are_refused) {
  // ld the word; twelve jset on its bits, each way on to the next test (a fork each); ret.
  auto forking = [](uint32_t offset, uint32_t action) {
    std::vector<BpfInsn> p = {ld_abs(offset)};
    for (uint32_t bit = 0; bit < 12; ++bit) {
      p.push_back({0x45, 0, 1, 1u << bit});
      p.push_back(ja(0));
    }
    p.push_back(ret(action));
    return p;
  };
  auto r = compiler::review::diff_programs(forking(16, kAllow), forking(24, 0x50001u));
  const auto* e = std::get_if<compiler::review::ProgramDiffError>(&r);
  BOOST_TEST_REQUIRE(e != nullptr);
  BOOST_TEST(!e->instruction.has_value());
  BOOST_TEST(e->message.starts_with("too complex to compare exactly: more than "), e->message);
}

// old/ and new/ in `cli`'s directory: the golden default Linux artifacts, new/ with
// `program` as its seccomp.bpf.
void write_artifact_dirs(const test::Cli& cli, const std::vector<BpfInsn>& program) {
  const std::string golden = std::string(ZPOLICY_SOURCE_DIR) + "/golden/default.linux/";
  for (const char* side : {"old", "new"}) {
    cli.dir.write(std::string(side) + "/bwrap.args", test::slurp(golden + "bwrap.args"));
    cli.dir.write(std::string(side) + "/seccomp.txt", test::slurp(golden + "seccomp.txt"));
  }
  cli.dir.write("old/seccomp.bpf", golden_bytes());
  std::string bytes(program.size() * sizeof(BpfInsn), '\0');
  std::memcpy(bytes.data(), program.data(), bytes.size());
  cli.dir.write("new/seccomp.bpf", bytes);
}

// Through the command line: the widening fails a `--fail-on widen` gate.
BOOST_AUTO_TEST_CASE(diff_artifacts_fails_on_a_hidden_widening) {
  test::Cli cli;
  const auto edited = prefixed({ld_abs(16), jeq(4242, 0, 1), ret(kAllow)}, golden_program());
  write_artifact_dirs(cli, edited);
  const auto r = cli.run({"diff", "--artifacts", "old", "new", "--fail-on", "widen"});
  BOOST_TEST(r.exit_code == 1, r.out + r.err);
  BOOST_TEST(r.out.find("ptrace") != std::string::npos, r.out);
  BOOST_TEST(r.out.find(" when arg0 low word == 0x1092") != std::string::npos, r.out);
}

// A row that folds calls names three in its subject; text and Markdown list every one of
// them after it (docs/review.md "Artifacts"), the JSON in `paths`.
BOOST_AUTO_TEST_CASE(a_row_of_many_calls_lists_every_call_in_text_and_markdown) {
  test::Cli cli;
  const auto edited = prefixed({ld_abs(8), jeq(0, 1, 0), ret(kAllow)}, golden_program());
  write_artifact_dirs(cli, edited);
  const auto rows = diff(golden_program(), edited);
  const auto folded = std::find_if(rows.begin(), rows.end(), [](const Difference& d) {
    return d.subject.find(" calls (") != std::string::npos &&
           std::find(d.paths.begin(), d.paths.end(), "ptrace") != d.paths.end();
  });
  BOOST_TEST_REQUIRE((folded != rows.end()));
  const auto text = cli.run({"diff", "--artifacts", "old", "new"});
  BOOST_TEST(text.exit_code == 1, text.out + text.err);
  const auto at = text.out.find(folded->subject);
  BOOST_TEST_REQUIRE(at != std::string::npos, text.out);
  const auto listing = text.out.find("\n    calls: " + folded->paths.front() + ", ", at);
  BOOST_TEST_REQUIRE(listing != std::string::npos, text.out);
  const auto end = text.out.find("\n    before: ", listing);
  const std::string block = text.out.substr(listing, end - listing);
  size_t longest = 0;
  for (size_t from = 1, nl; from < block.size(); from = nl + 1) {
    nl = std::min(block.find('\n', from), block.size());
    longest = std::max(longest, nl - from);
  }
  BOOST_TEST(longest <= 100u, block);
  const auto markdown = cli.run({"diff", "--artifacts", "old", "new", "--format", "markdown"});
  for (const auto& call : folded->paths) {
    BOOST_TEST((" " + block + ",").find(" " + call + ",") != std::string::npos, call);
    const bool listed = markdown.out.find(" " + call + ",") != std::string::npos ||
                        markdown.out.find(" " + call + " |") != std::string::npos;
    BOOST_TEST(listed, call);
  }
}

BOOST_AUTO_TEST_SUITE_END()
