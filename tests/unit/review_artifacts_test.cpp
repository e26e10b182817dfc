// `diff --artifacts` (docs/review.md "Artifacts"): compiled artifacts compared by what the
// analyzer's evaluators say they do. Every single-line edit of a golden artifact that the
// verifier refuses as a dropped deny must show as a widening; the artifacts against
// themselves, and against a recompilation, as nothing.
#include <boost/test/unit_test.hpp>
#include <cstring>

#include "compiler/analyzer/bwrap/verify_bwrap.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "golden_support.hpp"
#include "support/cli.hpp"
#include "support/subprocess.hpp"
#include "zpolicy/zpolicy.hpp"

using namespace zpolicy;

namespace {

std::vector<Artifact> linux_artifacts(const std::string& args, const std::string& bpf) {
  return {{"bwrap.args", args, false}, {"seccomp.bpf", bpf, true}};
}

// bwrap.args as options: a line starting with "--" and the arguments after it.
std::vector<std::string> options(const std::string& args) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < args.size()) {
    const size_t nl = args.find('\n', start);
    const std::string line = args.substr(start, nl - start + 1);
    if (line.rfind("--", 0) == 0 || out.empty()) out.push_back(line);
    else out.back() += line;
    start = nl == std::string::npos ? args.size() : nl + 1;
  }
  return out;
}

struct Mutant {
  std::string what;
  std::string args, bpf;
};

// One option deleted, one --ro-bind made --bind, one return of the filter made "allow"
// (with `returns`: the filters of the goldens differ only in their network and syscall
// rules, so two of them cover the kinds of return; each such diff costs ~0.1 s).
std::vector<Mutant> single_line_edits(const std::string& args, const std::string& bpf,
                                      bool returns) {
  std::vector<Mutant> out;
  const auto opts = options(args);
  for (size_t i = 0; i < opts.size(); ++i) {
    std::string without, weaker;
    for (size_t k = 0; k < opts.size(); ++k) {
      if (k != i) without += opts[k];
      weaker += k == i && opts[k].rfind("--ro-bind\n", 0) == 0 ? "--bind\n" + opts[k].substr(10)
                                                               : opts[k];
    }
    out.push_back({"delete " + opts[i].substr(0, opts[i].find('\n')) + " #" + std::to_string(i),
                   without, bpf});
    if (weaker != args) out.push_back({"--ro-bind -> --bind #" + std::to_string(i), weaker, bpf});
  }
  for (size_t at = 0; returns && at + 8 <= bpf.size(); at += 8) {
    uint16_t code;
    std::memcpy(&code, bpf.data() + at, 2);
    if (code != 0x06) continue;  // BPF_RET | BPF_K
    std::string allowed = bpf;
    const uint32_t allow = 0x7fff0000u;
    std::memcpy(allowed.data() + at + 4, &allow, 4);
    if (allowed != bpf) out.push_back({"ret allow at #" + std::to_string(at / 8), args, allowed});
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(review_artifacts, *boost::unit_test::label("mutation"))

// The oracle is the verifier: an edit it refuses as granting more than the policy (a
// dropped deny, missing hardening) must be a widening; one it cannot read must be
// refused by diff too (exit 2) or be a widening; one that only denies more is skipped.
BOOST_AUTO_TEST_CASE(every_widening_single_line_edit_of_a_golden_is_a_widening) {
  size_t checked = 0;
  for (const auto& g : test::golden_compiles(compiler::Target::Linux)) {
    const std::string args = g.artifact("bwrap.args"), bpf = g.artifact("seccomp.bpf");
    const auto original = linux_artifacts(args, bpf);
    BOOST_TEST(diff_artifacts(Target::Linux, original, original).differences.empty(), g.name);
    for (const auto& m : single_line_edits(args, bpf, g.name == "default" || g.name == "loopback")) {
      bool widens = false, unreadable = false;
      if (m.args != args)
        for (const auto& f : compiler::verify_bwrap(g.compiled.resolved, m.args)) {
          widens = widens || f.kind == "dropped-deny" || f.kind == "missing-hardening";
          unreadable = unreadable || f.kind == "malformed-artifact";
        }
      if (m.bpf != bpf) {
        const auto v = compiler::verify_seccomp(g.compiled.resolved.syscalls, m.bpf);
        unreadable = !v;
        if (v)
          for (const auto& f : v->findings) {
            unreadable = unreadable || f.kind == "malformed-artifact";
            widens = widens || f.kind == "dropped-deny";
          }
      }
      if (!widens && !unreadable) continue;
      ++checked;
      const auto d = diff_artifacts(Target::Linux, original, linux_artifacts(m.args, m.bpf));
      BOOST_TEST((d.widenings() > 0 || (!widens && d.exit_code == kExitUsage)),
                 g.name << ": " << m.what << "\n" << render_diff(d, DiffFormat::Text));
    }
  }
  BOOST_TEST(checked > 100u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cli_review_artifacts)

BOOST_AUTO_TEST_CASE(diff_artifacts_names_the_lines_and_exits_as_diff) {
  test::Cli cli;
  cli.copy_golden("default.yaml", "p.yaml");
  BOOST_TEST_REQUIRE(cli.run({"compile", "p.yaml", "--target", "linux", "--out", "old"}).exit_code == 0);
  BOOST_TEST_REQUIRE(cli.run({"compile", "p.yaml", "--target", "linux", "--out", "new"}).exit_code == 0);
  auto r = cli.run({"diff", "--artifacts", "old", "new"});
  BOOST_TEST(r.exit_code == 0, r.err);

  // The network switch dropped by hand: a widening with the line of each side.
  std::string args = test::slurp(cli.dir / "new/bwrap.args");
  args.erase(args.find("--unshare-net\n"), 14);
  cli.dir.write("new/bwrap.args", args);
  r = cli.run({"diff", "--artifacts", "old", "new"});
  BOOST_TEST(r.exit_code == 1, r.err);
  BOOST_TEST(r.out.find("bwrap --unshare-net") != std::string::npos, r.out);
  BOOST_TEST(cli.run({"diff", "--artifacts", "old", "new", "--fail-on", "widen"}).exit_code == 1);
  // The other way round it narrows, which --fail-on widen lets through.
  BOOST_TEST(cli.run({"diff", "--artifacts", "new", "old", "--fail-on", "widen"}).exit_code == 0);

  cli.dir.write("new/seccomp.bpf", "short");
  r = cli.run({"diff", "--artifacts", "old", "new"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.rfind("new/seccomp.bpf: error: ", 0) == 0, r.err);
  r = cli.run({"diff", "--artifacts", "old", "missing"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err == "missing: error: no bwrap.args to compare\n", r.err);

  // macOS: a protected path's parameter pointed elsewhere by hand makes it writable.
  BOOST_TEST_REQUIRE(cli.run({"compile", "p.yaml", "--target", "macos", "--out", "mold"}).exit_code == 0);
  BOOST_TEST_REQUIRE(cli.run({"compile", "p.yaml", "--target", "macos", "--out", "mnew"}).exit_code == 0);
  r = cli.run({"diff", "--artifacts", "mold", "mnew", "--target", "macos"});
  BOOST_TEST(r.exit_code == 0, r.out + r.err);
  std::string params = test::slurp(cli.dir / "mnew/params.txt");
  params.replace(params.find("=${WORKSPACE}/.git\n"), 19, "=${WORKSPACE}/.gut\n");
  cli.dir.write("mnew/params.txt", params);
  r = cli.run({"diff", "--artifacts", "mold", "mnew", "--target", "macos", "--fail-on", "widen"});
  BOOST_TEST(r.exit_code == 1, r.out + r.err);
  BOOST_TEST(r.out.find("WIDENING   [macos] filesystem: file-write-data") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("${WORKSPACE}/.git") != std::string::npos, r.out);
  r = cli.run({"diff", "p.yaml", "p.yaml", "--target", "linux"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.rfind("<command line>: error: --target goes with --artifacts (a policy diff "
                         "covers every target)\n",
                         0) == 0,
             r.err);
}

BOOST_AUTO_TEST_SUITE_END()
