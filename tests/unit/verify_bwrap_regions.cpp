// The region proof as a user meets it: each tests/data/verify-bwrap/*.case compiles a
// policy with the built binary, edits the bwrap.args it wrote, and runs `zpolicy verify`
// on the result, which must exit as the case says and print each finding it names.
//
// A case file: `#` comments, then header lines
//   policy PATH          the policy, relative to the source tree
//   bound                compile and verify with --workspace (a fresh directory)
//   expect N             verify's exit status
//   finding TEXT         a text verify's output must contain (any number)
// then edits of bwrap.args, one argument per line after each directive:
//   @before LINE         insert before the first argument equal to LINE
//   @replace ... @with   replace the first run of the arguments after @replace
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/cli.hpp"

using namespace zpolicy;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string policy;
  bool bound = false;
  int expect = -1;
  std::vector<std::string> findings;
  struct Edit {
    std::string before;                // @before
    std::vector<std::string> replace;  // @replace
    std::vector<std::string> lines;    // the new arguments
  };
  std::vector<Edit> edits;
};

Case read_case(const fs::path& file) {
  Case c;
  std::ifstream in(file);
  std::string line;
  Case::Edit* edit = nullptr;
  bool in_replace = false;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) continue;
    if (line.starts_with("@before ")) {
      edit = &c.edits.emplace_back(Case::Edit{line.substr(8), {}, {}});
      in_replace = false;
    } else if (line == "@replace") {
      edit = &c.edits.emplace_back();
      in_replace = true;
    } else if (line == "@with") {
      in_replace = false;
    } else if (edit) {
      (in_replace ? edit->replace : edit->lines).push_back(line);
    } else if (line.starts_with("policy ")) {
      c.policy = line.substr(7);
    } else if (line == "bound") {
      c.bound = true;
    } else if (line.starts_with("expect ")) {
      c.expect = std::stoi(line.substr(7));
    } else if (line.starts_with("finding ")) {
      c.findings.push_back(line.substr(8));
    } else if (!line.empty()) {
      throw std::runtime_error(file.string() + ": cannot read '" + line + "'");
    }
  }
  if (c.policy.empty() || c.expect < 0 || c.edits.empty())
    throw std::runtime_error(file.string() + ": needs policy, expect and an edit");
  return c;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The edited argv, or a message saying which edit found nothing to apply to.
std::string apply(const std::vector<Case::Edit>& edits, std::vector<std::string> args) {
  for (const auto& e : edits) {
    if (!e.replace.empty()) {
      auto at = std::search(args.begin(), args.end(), e.replace.begin(), e.replace.end());
      if (at == args.end()) return "no run to replace starting " + e.replace.front();
      at = args.erase(at, at + static_cast<std::ptrdiff_t>(e.replace.size()));
      args.insert(at, e.lines.begin(), e.lines.end());
    } else {
      auto at = std::find(args.begin(), args.end(), e.before);
      if (at == args.end()) return "no argument " + e.before;
      args.insert(at, e.lines.begin(), e.lines.end());
    }
  }
  std::string out;
  for (const auto& a : args) out += a + "\n";
  return "\n" + out;  // a leading newline marks success: no argv starts with one
}

std::vector<fs::path> case_files() {
  std::vector<fs::path> files;
  for (const auto& e :
       fs::directory_iterator(std::string(ZPOLICY_SOURCE_DIR) + "/tests/data/verify-bwrap"))
    if (e.path().extension() == ".case") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("no verify-bwrap cases");
  return files;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_regions)

BOOST_AUTO_TEST_CASE(every_case_exits_as_it_says_with_its_findings) {
  for (const auto& file : case_files()) {
    BOOST_TEST_CONTEXT(file.filename().string()) {
      const Case c = read_case(file);
      test::Cli cli;
      const std::string policy = fs::path(c.policy).filename().string();
      cli.dir.write(policy, test::slurp(std::string(ZPOLICY_SOURCE_DIR) + "/" + c.policy));
      std::vector<std::string> bind;
      if (c.bound) bind = {"--workspace", cli.dir.mkdir("ws")};
      std::vector<std::string> compile = {"compile", policy, "--target", "linux", "--out", "out"};
      compile.insert(compile.end(), bind.begin(), bind.end());
      const auto compiled = cli.run(compile);
      BOOST_REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
      const std::string edited =
          apply(c.edits, split_lines(test::slurp(cli.dir / "out/bwrap.args")));
      BOOST_REQUIRE_MESSAGE(edited.starts_with("\n"), edited);
      cli.dir.write("out/bwrap.args", edited.substr(1));
      std::vector<std::string> verify = {"verify", policy, "out", "--target", "linux"};
      verify.insert(verify.end(), bind.begin(), bind.end());
      const auto r = cli.run(verify);
      BOOST_TEST(r.signal == 0);
      BOOST_TEST(r.exit_code == c.expect, r.err);
      for (const auto& f : c.findings)
        BOOST_TEST(r.err.find(f) != std::string::npos, "missing: " << f << "\n" << r.err);
    }
  }
}

// bwrap resolves a bind's source on the host, following its links; the verifier takes the
// path as written. A bound artifact names every source canonically, so `verify
// --workspace` refuses a source with a link on its way: here `--ro-bind WS/alias /mnt/x`,
// with WS/alias -> secret, a deny root (accepted before 2026-12-06; on most hosts
// /var/run -> /run does the same for any deny root below /run).
BOOST_AUTO_TEST_CASE(a_bound_bind_source_through_a_host_link_is_refused) {
  test::Cli cli;
  cli.dir.write("p.yaml",
                "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
                "  write: [\"${WORKSPACE}\"]\n  deny: [\"${WORKSPACE}/secret\"]\nnetwork: none\n");
  const std::string ws = cli.dir.mkdir("ws");
  cli.dir.write("ws/secret/key", "secret\n");
  cli.dir.symlink("secret", "ws/alias");
  const auto compiled =
      cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out", "--workspace", ws});
  BOOST_REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
  auto verify_with = [&](const std::string& source) {
    const std::string edited = apply({Case::Edit{"--chdir", {}, {"--ro-bind", source, "/mnt/x"}}},
                                     split_lines(test::slurp(cli.dir / "out/bwrap.args")));
    BOOST_REQUIRE(edited.starts_with("\n"));
    cli.dir.write("out/bwrap.args", edited.substr(1));
    return cli.run({"verify", "p.yaml", "out", "--target", "linux", "--workspace", ws});
  };
  const auto through_link = verify_with(ws + "/alias");
  BOOST_TEST(through_link.exit_code == 3, through_link.err);
  BOOST_TEST(through_link.err.find("malformed-artifact: bwrap.args: expected bind sources as a "
                                   "bound artifact names them, with no link on the way, artifact "
                                   "gives --ro-bind " +
                                   ws + "/alias /mnt/x: " + ws + "/alias is a link on this host") !=
                 std::string::npos,
             through_link.err);
}

// `verify --workspace` takes a protected path the host lacks to exist (the runner's
// placeholder), but bwrap run without the runner skips a -try bind of it: with
// `--ro-bind-try WS/.git WS/.git` the sandbox made `.git/config` in a workspace without
// one (a core.fsmonitor for the host's next `git status`), accepted before 2026-12-06
// (red team fuzz19, Z19-6). Where the host holds `.git` now, the -try bind finds it now,
// but not after the host removes it: a plain bind then aborts, the -try bind lets the
// sandbox make `.git` (red team A29B-2), so it is refused as well.
BOOST_AUTO_TEST_CASE(a_try_bind_of_a_placeholder_is_not_taken_to_find_it) {
  test::Cli cli;
  cli.dir.write("p.yaml",
                "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
                "  write: [\"${WORKSPACE}\"]\n  protect: [.git]\nnetwork: none\n");
  const std::string ws = cli.dir.mkdir("ws");
  auto verify_try = [&] {
    const auto compiled =
        cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out", "--workspace", ws});
    BOOST_REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
    Case::Edit e;
    e.replace = {"--ro-bind", ws + "/.git", ws + "/.git"};
    e.lines = {"--ro-bind-try", ws + "/.git", ws + "/.git"};
    const std::string edited = apply({e}, split_lines(test::slurp(cli.dir / "out/bwrap.args")));
    BOOST_REQUIRE_MESSAGE(edited.starts_with("\n"), edited);
    cli.dir.write("out/bwrap.args", edited.substr(1));
    return cli.run({"verify", "p.yaml", "out", "--target", "linux", "--workspace", ws});
  };
  const auto missing = verify_try();
  BOOST_TEST(missing.exit_code == 3, missing.err);
  BOOST_TEST(missing.err.find("dropped-deny: create " + ws + "/.git:") != std::string::npos,
             missing.err);
  BOOST_TEST(missing.err.find("assuming the source of bwrap.args:") != std::string::npos,
             missing.err);
  cli.dir.mkdir("ws/.git");
  const auto present = verify_try();
  BOOST_TEST(present.exit_code == 3, present.err);
  BOOST_TEST(present.err.find("dropped-deny: create " + ws + "/.git:") != std::string::npos,
             present.err);
}

// bwrap looks destinations up from its own setup root, where /oldroot is the host's root:
// a link on the way to a destination, whether an earlier --symlink made it or the host
// holds it (planted in the workspace), can lead there, and bwrap then creates the mount
// point on the host, outside every writable root. Both were accepted before 2026-12-06,
// and the real bwrap created the file and directories on the host, as root and as nobody
// (red team verify18).
BOOST_AUTO_TEST_CASE(a_destination_through_a_link_is_refused) {
  test::Cli cli;
  // The readable root outside /tmp, which the sandbox makes its own (the build directory
  // is below /tmp in a `mktemp -d` clone).
  const test::TempDir outside("/var/tmp");
  const std::string real = outside.mkdir("real");
  const std::string rl = outside.symlink(real, "rl");
  cli.dir.write("p.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/usr\", \"" +
                              rl + "\"]\n  write: [\"${WORKSPACE}\"]\nnetwork: none\n");
  const std::string ws = cli.dir.mkdir("ws");
  const std::string victim = cli.dir.mkdir("victim");
  cli.dir.symlink("/oldroot" + victim, "ws/l");
  const auto compiled =
      cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out", "--workspace", ws});
  BOOST_REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
  const auto lines = split_lines(test::slurp(cli.dir / "out/bwrap.args"));
  auto verify_with = [&](const std::vector<Case::Edit>& edits) {
    const std::string edited = apply(edits, lines);
    BOOST_REQUIRE(edited.starts_with("\n"));
    cli.dir.write("out/bwrap.args", edited.substr(1));
    return cli.run({"verify", "p.yaml", "out", "--target", "linux", "--workspace", ws});
  };
  // The read link re-pointed into the setup root's /oldroot, its check satisfied by a
  // bind there; then a mount point made through it.
  std::vector<Case::Edit> made_link(2);
  made_link[0].replace = {"--symlink", real, rl};
  made_link[0].lines = {"--ro-bind", real, "/oldroot" + real, "--symlink", "/oldroot" + real, rl};
  made_link[1].before = "--chdir";
  made_link[1].lines = {"--ro-bind", "/dev/null", rl + "/pwned"};
  const auto through_made_link = verify_with(made_link);
  BOOST_TEST(through_made_link.exit_code == 3, through_made_link.err);
  BOOST_TEST(through_made_link.err.find("--ro-bind /dev/null " + rl +
                                        "/pwned: its path passes "
                                        "through " +
                                        rl + ", the link bwrap.args:") != std::string::npos,
             through_made_link.err);
  std::vector<Case::Edit> host_link(1);
  host_link[0].before = "--chdir";
  host_link[0].lines = {"--ro-bind", "/dev/null", ws + "/l/pwned"};
  const auto through_host_link = verify_with(host_link);
  BOOST_TEST(through_host_link.exit_code == 3, through_host_link.err);
  BOOST_TEST(through_host_link.err.find("--ro-bind /dev/null " + ws + "/l/pwned: the way to " + ws +
                                        "/l/pwned holds a link on this host") != std::string::npos,
             through_host_link.err);
  // The emitted artifact itself stays accepted.
  const auto as_emitted = verify_with({});
  BOOST_TEST(as_emitted.exit_code == 0, as_emitted.err);
}

// A read link made after the workspace's bind, below a directory the sandbox may replace:
// bound, `verify` accepted it before 2026-12-06, and after one run swapped `sub` for a link
// to `/oldroot/V` the next run's bwrap made `V/lib` on the host (setup18's F2, for links;
// docs/verify.md "Known limits").
BOOST_AUTO_TEST_CASE(a_read_link_below_a_replaceable_name_is_refused_bound) {
  test::Cli cli;
  const test::TempDir outside("/var/tmp");
  const std::string real = outside.mkdir("real");
  const std::string ws = cli.dir.mkdir("ws");
  cli.dir.mkdir("ws/sub");
  cli.dir.symlink(real, "ws/sub/lib");
  const std::string head = "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/usr\", ";
  const std::string tail = "]\n  write: [\"${WORKSPACE}\"]\n  protect: []\nnetwork: none\n";
  cli.dir.write("direct.yaml", head + "\"" + real + "\"" + tail);
  cli.dir.write("p.yaml", head + "\"${WORKSPACE}/sub/lib\"" + tail);
  const auto compiled =
      cli.run({"compile", "direct.yaml", "--target", "linux", "--out", "out", "--workspace", ws});
  BOOST_REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
  const std::string edited =
      apply({Case::Edit{"--chdir", {}, {"--symlink", real, ws + "/sub/lib"}}},
            split_lines(test::slurp(cli.dir / "out/bwrap.args")));
  BOOST_REQUIRE(edited.starts_with("\n"));
  cli.dir.write("out/bwrap.args", edited.substr(1));
  const auto r = cli.run({"verify", "direct.yaml", "out", "--target", "linux", "--workspace", ws});
  BOOST_TEST(r.exit_code == 3, r.err);
  const std::string refused = "--symlink " + real + " " + ws +
                              "/sub/lib: its link's directory passes through " + ws +
                              "/sub, which the sandbox may create";
  BOOST_TEST(r.err.find(refused) != std::string::npos, r.err);
  // The policy that names the root through the link is refused before any artifact is
  // read (red team A21-3): the link may have been planted by a run.
  const auto named = cli.run({"verify", "p.yaml", "out", "--target", "linux", "--workspace", ws});
  BOOST_TEST(named.exit_code == 2, named.err);
  BOOST_TEST(named.err.find("readable root '" + ws + "/sub/lib' crosses a symlink inside a "
                            "writable root ('" + ws + "/sub/lib')") != std::string::npos,
             named.err);
}

// A bound artifact's paths are host paths, and a name that starts with "${" is a name
// (red team H17-10: a workspace below `${x}`, a nested repository `${WORKSPACE}/.git`
// refused every run, exit 3). The artifact as emitted verifies; a writable bind over the
// nested repository is a dropped deny; `${HOME}/x`, relative to bwrap, stays refused
// (Z19-3); and a portable artifact still refuses a name after its root that looks like one.
BOOST_AUTO_TEST_CASE(a_name_that_starts_with_a_variable_is_a_name_in_a_bound_artifact) {
  test::Cli cli;
  cli.copy_golden("default.yaml", "p.yaml");
  const std::string ws = cli.dir.mkdir("${HOME}/${x}/ws");
  const std::string repo = cli.dir.mkdir("${HOME}/${x}/ws/${WORKSPACE}/.git");
  cli.dir.write("${HOME}/${x}/ws/${WORKSPACE}/.git/HEAD", "ref: refs/heads/main\n");
  cli.dir.write("${HOME}/${x}/ws/.git/HEAD", "ref: refs/heads/main\n");
  const std::vector<std::string> bind = {"--workspace", ws};
  std::vector<std::string> compile = {"compile", "p.yaml", "--target", "linux", "--out", "out"};
  compile.insert(compile.end(), bind.begin(), bind.end());
  const auto compiled = cli.run(compile);
  BOOST_REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
  const auto args = split_lines(test::slurp(cli.dir / "out/bwrap.args"));
  BOOST_TEST((std::find(args.begin(), args.end(), repo) != args.end()), "no bind of " + repo);
  auto verify_with = [&](const std::vector<Case::Edit>& edits, bool bound) {
    const std::string edited = apply(edits, args);
    BOOST_REQUIRE_MESSAGE(edited.starts_with("\n"), edited);
    cli.dir.write("out/bwrap.args", edited.substr(1));
    std::vector<std::string> verify = {"verify", "p.yaml", "out", "--target", "linux"};
    if (bound) verify.insert(verify.end(), bind.begin(), bind.end());
    return cli.run(verify);
  };
  const auto as_emitted = verify_with({}, true);
  BOOST_TEST(as_emitted.exit_code == 0, as_emitted.err);
  const auto writable = verify_with({Case::Edit{"--chdir", {}, {"--bind", repo, repo}}}, true);
  BOOST_TEST(writable.exit_code == 3, writable.err);
  BOOST_TEST(writable.err.find("dropped-deny") != std::string::npos, writable.err);
  const auto relative =
      verify_with({Case::Edit{"--chdir", {}, {"--ro-bind", "${HOME}/.ssh", "/mnt"}}}, true);
  BOOST_TEST(relative.exit_code == 3, relative.err);
  BOOST_TEST(relative.err.find("'${HOME}/.ssh' is not an absolute path") != std::string::npos,
             relative.err);

  const auto portable = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
  BOOST_REQUIRE_MESSAGE(portable.exit_code == 0, portable.err);
  const std::string edited = apply({Case::Edit{"--chdir", {}, {"--ro-bind", "/x/${HOME}", "/mnt"}}},
                                   split_lines(test::slurp(cli.dir / "out/bwrap.args")));
  BOOST_REQUIRE(edited.starts_with("\n"));
  cli.dir.write("out/bwrap.args", edited.substr(1));
  const auto symbolic = cli.run({"verify", "p.yaml", "out", "--target", "linux"});
  BOOST_TEST(symbolic.exit_code == 3, symbolic.err);
  BOOST_TEST(symbolic.err.find("no name but a leading symbolic root's may start with '${'") !=
                 std::string::npos,
             symbolic.err);
}

BOOST_AUTO_TEST_SUITE_END()
