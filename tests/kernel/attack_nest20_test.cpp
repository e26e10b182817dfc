#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "build_link_race.hpp"
#include "sandbox_fixture.hpp"

// Attack nest 20 (docs/redteam-2026-12.md "Attack nest 20 (attacknest20)"): session 19's
// nested writable roots and the `--symlink` operations of setup18's replaceable-name check,
// attacked with the real bwrap and kernel, as root and as uid 65534. Each case is a
// finding's reproduction or a promise of docs/run.md, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack_nest20)

namespace {

std::string nested_policy(const std::string& inner) {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
         "  write: [\"${WORKSPACE}\", \"" +
         inner + "\"]\n  protect: [.git, .env]\nnetwork: none\n";
}

// Where an earlier run's command puts its link: `build` (a directory on the inner root's
// way), `build/out` (the inner root itself), or `t` on the way of a `${TMPDIR}` the
// caller keeps in the workspace (`t/out`).
enum class LinkAt { Way, Root, Tmpdir };
std::ostream& operator<<(std::ostream& os, LinkAt l) {
  return os << (l == LinkAt::Way ? "build" : l == LinkAt::Root ? "build/out" : "tmpdir t");
}
const std::vector<LinkAt> kLinkAts{LinkAt::Way, LinkAt::Root, LinkAt::Tmpdir};

}  // namespace

// N20-1: `write: [W, W/build/out]` with `build` (or `build/out`) a link that a command of
// an earlier run planted (here under the default policy, which writes W). Before the fix
// the run bound the link's target writable, a host directory outside every root the
// policy names, with no finding at all (ZP006 warned only for a root that is itself a
// link): the second run's command overwrote the victim's file, as root and as nobody.
// Now resolution refuses it (exit 2), as a protected path or deny root crossing such a link.
BOOST_DATA_TEST_CASE(a_nested_root_reached_through_a_link_an_earlier_run_planted_is_refused,
                     bdata::make(kCallers) * bdata::make(kLinkAts), caller, link_at) {
  Sandbox box(caller);
  const Victim victim(box);

  const bool tmpdir = link_at == LinkAt::Tmpdir;
  const std::string inner = tmpdir ? "t/out" : "build/out";
  const std::string plant = link_at == LinkAt::Way ? "ln -s '" + victim.dir + "' build"
                            : link_at == LinkAt::Root
                                ? "mkdir build && ln -s '" + victim.dir + "/out' build/out"
                                : "ln -s '" + victim.dir + "' t";
  const RunResult first = box.sh(plant);
  BOOST_TEST_REQUIRE(first.completed(), first.describe());

  const std::string policy = box.write_policy(
      "nested.yaml", nested_policy(tmpdir ? "${TMPDIR}" : "${WORKSPACE}/build/out"));
  RunSpec spec;
  spec.options = {"--policy", policy};
  if (tmpdir) spec.extra_env = {"TMPDIR=" + box.ws(inner)};
  const RunResult second = run_script(box, spec, "echo pwned > " + inner + "/file");
  expect_refused(second, 2, "crosses a symlink inside a writable root");
  BOOST_TEST(victim.unchanged());
  BOOST_TEST(victim.file() == "orig\n");

  // Control: the same policy over a real directory runs, and its inner root is writable.
  expect_runs_over_a_real_directory(box, spec, victim, box.ws(tmpdir ? "t" : "build"), inner);
}

// N20-3: N20-1 where the policy writes only the inner root (`write:
// ["${WORKSPACE}/build/out"]`, the workspace read-only): the link in the workspace was
// planted by a run under another policy (the default's, which writes the workspace), and
// the run bound the host directory it chose writable. The workspace counts as a writable
// root for the links on a root's way: refused (exit 2), the victim unchanged; over a real
// directory the same policy runs.
BOOST_DATA_TEST_CASE(an_inner_root_alone_reached_through_a_link_in_the_workspace_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const Victim victim(box);
  const RunResult first = box.sh("ln -s '" + victim.dir + "' build");
  BOOST_TEST_REQUIRE(first.completed(), first.describe());

  const std::string policy = box.write_policy(
      "inner.yaml",
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
      "  write: [\"${WORKSPACE}/build/out\"]\n  protect: [.git, .env]\nnetwork: none\n");
  RunSpec spec;
  spec.options = {"--policy", policy};
  const RunResult second = run_script(box, spec, "echo pwned > build/out/file");
  expect_refused(second, 2, "crosses a symlink inside the workspace");
  BOOST_TEST(victim.unchanged());
  BOOST_TEST(victim.file() == "orig\n");

  expect_runs_over_a_real_directory(box, spec, victim, box.ws("build"), "build/out");
}

// Invariant 11 for N20-1's way: another run in the same workspace (the default policy,
// which writes it) swaps `build` for a link to the victim and back, as fast as it can,
// while runs of the nested policy start one after another. Whatever a run's lints, its
// placeholders or its descriptors saw, it either writes the real `build/out` or is
// refused (the link or a missing root at exit 2, an object that is not the one resolved
// at exit 125; 3 for a verifier's finding); the victim is never written.
BOOST_DATA_TEST_CASE(a_nested_roots_way_swapped_by_another_run_while_runs_start_is_never_followed,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string policy =
      box.write_policy("nested.yaml", nested_policy("${WORKSPACE}/build/out"));
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c", "echo pwned > build/out/file"};
  race_build_link(box, spec, 30, {0, 2, 3, 125});
}

// N20-2: what lies strictly inside a deny root (a writable root, a protected path, another
// deny root) once compiled to an argv the verifier refused as malformed (the mask's
// `--remount-ro` over the mounts made below it first), so such a policy never ran. The
// deny wins there as everywhere (docs/decisions.md "Deny masks"): nothing is mounted
// below it, the run works, and the denied files are neither read nor written. So with a
// writable root that is the deny root itself (A21B-5).
enum class InsideDeny { WritableRoot, DeepWritableRoot, ProtectedPath, DenyRoot, TheRootItself };
std::ostream& operator<<(std::ostream& os, InsideDeny k) {
  switch (k) {
    case InsideDeny::WritableRoot: return os << "writable root";
    case InsideDeny::DeepWritableRoot: return os << "deeper writable root";
    case InsideDeny::ProtectedPath: return os << "protected path";
    case InsideDeny::DenyRoot: return os << "deny root";
    case InsideDeny::TheRootItself: return os << "writable root that is the deny root";
  }
  return os;
}
const std::vector<InsideDeny> kInsideDeny{InsideDeny::WritableRoot, InsideDeny::DeepWritableRoot,
                                          InsideDeny::ProtectedPath, InsideDeny::DenyRoot,
                                          InsideDeny::TheRootItself};

BOOST_DATA_TEST_CASE(what_lies_inside_a_deny_root_is_denied_and_the_run_works,
                     bdata::make(kCallers) * bdata::make(kInsideDeny), caller, inside) {
  Sandbox box(caller);
  box.make_dir(box.ws("sec/out/deep"));
  box.write_file(box.ws("sec/out/s"), "SECRET\n");
  box.write_file(box.ws("sec/out/deep/s"), "SECRET\n");
  box.write_file(box.ws("open"), "open\n");
  const std::string inner = inside == InsideDeny::DeepWritableRoot ? "sec/out/deep" : "sec/out";
  std::string rules = "  write: [\"${WORKSPACE}\"]\n  deny: [\"${WORKSPACE}/sec\"]\n";
  if (inside == InsideDeny::WritableRoot || inside == InsideDeny::DeepWritableRoot)
    rules = "  write: [\"${WORKSPACE}\", \"${WORKSPACE}/" + inner +
            "\"]\n  deny: [\"${WORKSPACE}/sec\"]\n";
  if (inside == InsideDeny::ProtectedPath) rules += "  protect: [.git, \"" + inner + "\"]\n";
  if (inside == InsideDeny::TheRootItself)
    rules = "  write: [\"${WORKSPACE}\", \"${WORKSPACE}/sec\"]\n  deny: [\"${WORKSPACE}/sec\"]\n";
  if (inside == InsideDeny::DenyRoot)
    rules = "  write: [\"${WORKSPACE}\"]\n  deny: [\"${WORKSPACE}/sec\", \"${WORKSPACE}/" +
            inner + "\"]\n";
  const std::string policy = box.write_policy(
      "deny-holds.yaml",
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n" + rules +
          "network: none\n");
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c",
                  "cat " + inner + "/s; echo x > " + inner + "/s; echo x > sec/new; mkdir " +
                      inner + "/d; echo changed > open; echo '" + kDoneMarker + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("SECRET") == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("sec/out/s")).value_or("<missing>") == "SECRET\n");
  BOOST_TEST(read_file(box.ws("sec/out/deep/s")).value_or("<missing>") == "SECRET\n");
  BOOST_TEST(!std::filesystem::exists(box.ws("sec/new")));
  BOOST_TEST(!std::filesystem::exists(box.ws(inner + "/d")));
  // The positive control: the workspace outside the deny root is written.
  BOOST_TEST(read_file(box.ws("open")).value_or("<missing>") == "changed\n");
}

// The run caller's `--symlink` operations are the emitter's read links (a readable root
// named through a link keeps its name). One whose link lies in the workspace, or whose
// target passes through it, is a name a command can replace between runs: refused
// (nothing ran; the link in the workspace at resolution since attack 21's A21-3, exit 2;
// the target through it by the verifier, exit 3). The everyday read links (/bin ->
// /usr/bin) run, as both callers.
BOOST_DATA_TEST_CASE(read_links_through_the_workspace_are_refused_and_system_ones_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("sub/d"));
  box.write_file(box.ws("sub/d/f"), "workspace file\n");
  box.host_command({"/bin/ln", "-s", "/usr/share", box.ws("rl")});
  const std::string outside = box.base() + "/outside";
  box.make_dir(outside);
  box.host_command({"/bin/ln", "-s", box.ws("sub/d"), outside + "/rl"});
  const std::string head =
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
      "  read: [/usr, /bin, /lib, /lib64, /etc";
  const std::string tail = "]\n  write: [\"${WORKSPACE}\"]\nnetwork: none\n";
  const std::string before = snapshot(box.workspace());
  for (const std::string& extra : {std::string(", \"${WORKSPACE}/rl\""), ", " + outside + "/rl"}) {
    const std::string policy = box.write_policy("read-link.yaml", head + extra + tail);
    RunSpec spec;
    spec.options = {"--policy", policy};
    spec.command = {"/bin/sh", "-c", std::string("echo ran > ran.txt; echo '") + kDoneMarker + "'"};
    const RunResult r = box.run(spec);
    BOOST_TEST(r.exit_code == (extra.find("${WORKSPACE}") != std::string::npos ? 2 : 3),
               extra << "\n" << r.describe());
    BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
    BOOST_TEST(!exists(box.ws("ran.txt")), extra);
  }
  BOOST_TEST(snapshot(box.workspace()) == before);

  const std::string policy = box.write_policy("read-system-links.yaml", head + tail);
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c",
                  std::string("readlink /bin; ls /lib >/dev/null && echo ok > ran.txt; echo '") +
                      kDoneMarker + "'"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("/usr/bin") != std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("ran.txt")).value_or("<missing>") == "ok\n");
}

// The verify caller: a compiled argv edited by hand to add a `--symlink` below the
// workspace's writable bind. Real bwrap shows why each is refused: (a) in `sub`, which a
// command can replace by a link to `/oldroot/V` (bwrap's name for the host's root while it
// sets up), the next run made the link in V on the host, outside every writable root; (b)
// in `.git/hooks`, before `.git`'s read-only bind, bwrap made the link in the host's
// protected directory. `zpolicy verify` refuses both (exit 3) and passes the argv as
// compiled.
BOOST_DATA_TEST_CASE(hand_added_symlinks_below_a_writable_bind_fail_verify_and_real_bwrap_shows_why,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("sub"));
  box.make_dir(box.ws(".git/hooks"));
  const std::string victim = box.base() + "/victim";
  box.make_dir(victim);
  const std::string policy =
      box.write_policy("links.yaml", workspace_write_policy("[\"/\"]", "  protect: [.git]\n"));
  const std::string out = box.base() + "/compiled";
  box.make_dir(out);
  const RunResult compiled = zpolicy_on_host(
      box, {"compile", policy, "--target", "linux", "--workspace", box.workspace(), "--out", out});
  BOOST_TEST_REQUIRE(compiled.out.find("status=0") != std::string::npos, compiled.describe());
  const auto args = read_lines(out + "/bwrap.args");
  // The placeholders `run` would make (compile assumes them), so that bwrap by hand finds
  // every source.
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--ro-bind" && args[i + 1].starts_with(box.workspace() + "/") &&
        !exists(args[i + 1]))
      box.make_dir(args[i + 1]);
  const RunResult clean = zpolicy_on_host(
      box, {"verify", policy, out, "--target", "linux", "--workspace", box.workspace()});
  BOOST_TEST(clean.out.find("status=0") != std::string::npos, clean.describe());

  size_t after_bind = 0;
  for (size_t i = 0; i + 2 < args.size(); ++i)
    if (args[i] == "--bind" && args[i + 1] == box.workspace()) after_bind = i + 3;
  BOOST_TEST_REQUIRE(after_bind > 0u);
  struct Edit {
    std::string link, what;
  };
  for (const Edit& e : {Edit{box.ws("sub/x"), "link's directory"},
                        Edit{box.ws(".git/hooks/pre-commit"), "create"}}) {
    auto edited = args;
    edited.insert(edited.begin() + static_cast<long>(after_bind),
                  {"--symlink", "/etc/hostname", e.link});
    write_lines(out + "/bwrap.args", edited);
    const RunResult v = zpolicy_on_host(
        box, {"verify", policy, out, "--target", "linux", "--workspace", box.workspace()});
    BOOST_TEST(v.out.find("status=3") != std::string::npos, e.link << "\n" << v.describe());
    BOOST_TEST(v.err.find(e.what) != std::string::npos, v.describe());

    // What the refused argv does with the real bwrap (run by hand, no zpolicy).
    if (e.what == "create") {
      BOOST_TEST(!exists(e.link));
      const RunResult once = bwrap_by_hand(box, edited, "true");
      BOOST_TEST(once.out.find("status=0") != std::string::npos, once.describe());
      BOOST_TEST(exists(e.link), "bwrap made the link in the protected .git/hooks");
    } else {
      const RunResult first = bwrap_by_hand(box, edited,
                                            "rm -r '" + box.ws("sub") + "' && ln -s '/oldroot" +
                                                victim + "' '" + box.ws("sub") + "'");
      BOOST_TEST(first.out.find("status=0") != std::string::npos, first.describe());
      BOOST_TEST(!exists(victim + "/x"));
      bwrap_by_hand(box, edited, "true");
      BOOST_TEST(exists(victim + "/x"), "the second run's bwrap made the link outside");
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
