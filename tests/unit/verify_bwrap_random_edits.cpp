// Property test of the bwrap verifier (issue 19): random edits of the golden argvs
// (options inserted, deleted, changed, duplicated; paths changed), with a fixed seed.
// The reference is the real bwrap: the golden policies compiled bound to a scratch tree,
// their argvs edited, and a sample of the edits verify_bwrap accepts run with a probe that
// reads and writes everything it finds there (support/bwrap_referee.hpp); none may read a
// denied file or change what the policy keeps. Every accepted edit of the portable argvs,
// too many to run, is also replayed by a model written apart from the mount table, which
// must find no host object it lets the sandbox read or write that the policy denies. The
// model is deliberately simple: it knows binds, tmpfs, --remount-ro and --dir, which are
// all the edits use, and no modes or links. Its rule for which mount covers a path: the
// latest mount whose destination contains it (a later mount over an ancestor hides
// earlier ones below; a later one below shows above an earlier ancestor).
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>

#include "bwrap_argv_editor.hpp"
#include "compiler/analyzer/bwrap/verify_bwrap.hpp"
#include "compiler/analyzer/probes.hpp"
#include "golden_support.hpp"
#include "support/bwrap_referee.hpp"
#include "verify_bwrap_fixture.hpp"

using namespace zpolicy;
using namespace zpolicy::compiler;
using test::Option;

namespace {

const std::vector<std::string> kPaths = {
    "/",
    "/etc",
    "/etc/passwd",
    "/usr",
    "/tmp",
    "/var/tmp/victim",
    "/mnt/x",
    "/mnt/x/y",
    "${HOME}",
    "${HOME}/.ssh",
    "${WORKSPACE}",
    "${WORKSPACE}/.git",
    "${WORKSPACE}/.env",
    "${WORKSPACE}/src",
    "${WORKSPACE}/data/agent-sessions",
    "/run/docker.sock",
};

bool within(const std::string& root, const std::string& p) {
  return root == "/" || p == root ||
         (p.size() > root.size() && p.starts_with(root) && p[root.size()] == '/');
}

// `p` below `from` moved below `to`. "/" holds the symbolic roots: "${HOME}/x" below "/"
// is "/mnt/${HOME}/x" below "/mnt", and back.
std::string rebase(const std::string& to, const std::string& from, const std::string& p) {
  std::string rest = from == "/" ? (p.starts_with("/") ? p : "/" + p) : p.substr(from.size());
  if (to != "/") return to + (rest == "/" ? "" : rest);
  if (rest.starts_with("/${")) rest.erase(0, 1);
  return rest.empty() ? "/" : rest;
}

struct RefMount {
  std::string kind;  // "bind", "tmpfs"
  std::string source, dest;
  bool read_only = false;
};

// What the referee finds: the host objects a sandbox path reads or writes.
struct Reached {
  std::set<std::string> read, write;
};

// Replays the options bwrap's way as far as the referee knows them. -try binds are
// applied: their sources may exist.
Reached referee(const std::vector<Option>& argv, const std::vector<std::string>& sample) {
  std::vector<RefMount> mounts;
  for (const Option& o : argv) {
    const std::string& k = o[0];
    if (k == "--bind" || k == "--bind-try" || k == "--ro-bind" || k == "--ro-bind-try")
      mounts.push_back({"bind", o[1], o[2], k.starts_with("--ro")});
    else if (k == "--tmpfs" || k == "--dev" || k == "--proc")
      mounts.push_back({"tmpfs", "", o[1], false});
    else if (k == "--remount-ro")
      for (auto it = mounts.rbegin(); it != mounts.rend(); ++it)
        if (it->dest == o[1]) {
          it->read_only = true;
          break;
        }
  }
  Reached out;
  for (const auto& s : sample) {
    const RefMount* cover = nullptr;
    for (const auto& m : mounts)
      if (within(m.dest, s)) cover = &m;  // the latest wins
    if (!cover || cover->kind != "bind") continue;
    const std::string host = rebase(cover->source, cover->dest, s);
    out.read.insert(host);
    // A mount point itself cannot be replaced, but its content can be written.
    if (!cover->read_only) out.write.insert(host);
  }
  return out;
}

std::vector<Option> options_of(const std::string& text) {
  std::vector<Option> argv;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("--", 0) == 0 || argv.empty()) argv.push_back({});
    argv.back().push_back(line);
  }
  return argv;
}

// The scratch tree every golden policy is bound to: a workspace holding what the goldens
// protect (by name and by pattern) and deny, a home with their deny roots, the temporary
// directory, and a directory no policy lets change.
test::ScratchWorld golden_tree() {
  test::ScratchWorld w;
  w.dirs = {"/w/src",          "/w/.git",  "/w/sub/.git",
            "/w/node_modules", "/w/.next", "/w/data/agent-sessions",
            "/w/secrets",      "/h/.ssh",  "/h/.aws",
            "/h/.gnupg",       "/h/cache", "/t",
            "/victim/sub"};
  w.files = {"/w/src/a.c",       "/w/.git/config",
             "/w/sub/.git/HEAD", "/w/.env",
             "/w/.env.local",    "/w/node_modules/m.js",
             "/w/.next/n",       "/w/data/agent-sessions/s.json",
             "/w/secrets/token", "/h/notes",
             "/h/.ssh/id",       "/h/.aws/credentials",
             "/h/.gnupg/key",    "/t/x",
             "/victim/f",        "/victim/sub/g"};
  return w;
}

// The plain reading of a policy bound below `root`: its writable roots, protected paths
// and deny roots there, straight from the resolved lists (not the analyzer's intent); and
// the tree `w` with the placeholders a run of it makes.
test::ScratchWorld read_policy(test::ScratchWorld w, const ir::Resolved& r,
                               const std::string& root) {
  auto below_root = [&](const std::vector<ir::ResolvedPath>& list) {
    std::vector<std::string> out;
    for (const auto& p : list)
      if (test::ScratchWorld::below(root, p.path) && p.path != root)
        out.push_back(p.path.substr(root.size()));
    return out;
  };
  w.writable = below_root(r.write);
  w.kept = below_root(r.protect);
  w.denied = below_root(r.deny);
  // What `run` would create before bwrap starts: the protected paths and pins the tree
  // lacks (bound, the argv binds them as placeholders).
  for (const auto* list : {&r.protect, &r.pin})
    for (const auto& rel : below_root(*list))
      if (!std::filesystem::exists(root + rel)) w.dirs.push_back(rel);
  return w;
}

// A golden policy compiled as `compile --workspace ROOT/w` would, with home ROOT/h and
// temporary directory ROOT/t.
compiler::Compiled compile_bound(const std::filesystem::path& file, const std::string& root) {
  ir::Diagnostics diags;
  auto policy = compiler::load_policy_file(file.string(), diags);
  auto host = compiler::host_facts(root + "/w", diags);
  BOOST_TEST_REQUIRE((policy && host), file.stem().string() << ": " << diags.str());
  host->home = root + "/h";
  host->tmpdir = root + "/t";
  host->cwd = root + "/w";
  host->state_dir.clear();  // zpolicy's own state: no part of the golden policy
  auto c = compiler::compile(*policy, compiler::Target::Linux, policy->mode.value, host, diags);
  BOOST_TEST_REQUIRE((c && !diags.has_errors() && c->findings.empty()),
                     file.stem().string() << " does not compile bound to " << root << ":\n"
                                          << diags.str());
  return std::move(*c);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_random_edits, *boost::unit_test::label("mutation"))

BOOST_AUTO_TEST_CASE(every_accepted_edit_grants_nothing_the_policy_denies) {
  constexpr unsigned kSeed = 19;
  constexpr int kEditsPerPolicy = 1500;
  test::ArgvEditor editor(kSeed, kPaths);
  size_t accepted_total = 0;
  for (const auto& g : test::golden_compiles(Target::Linux)) {
    if (g.name == "large") continue;  // 400 options: edits rarely touch what matters
    const ir::Resolved& policy = g.compiled.resolved;
    const std::vector<Option> original = options_of(g.artifact("bwrap.args"));
    Intent intent(policy);
    // The sampled sandbox paths: every path the edits use and every probe, each with a
    // child, and the same below each symbolic root.
    std::vector<std::string> sample;
    for (const auto& p : kPaths) sample.insert(sample.end(), {p, p == "/" ? "/zz" : p + "/zz"});
    for (const auto& p : generate_probes(intent)) sample.push_back(p.path().str());
    size_t accepted = 0;
    for (int i = 0; i < kEditsPerPolicy; ++i) {
      const std::vector<Option> edited = editor.edit(original);
      const std::string text = test::render(edited);
      if (!verify_bwrap(policy, text).empty()) continue;
      ++accepted;
      // And every sampled path as it shows through each bind of another place.
      std::vector<std::string> wide = sample;
      for (const Option& o : edited)
        if (o.size() == 3 && o[0].find("bind") != std::string::npos && o[1] != o[2])
          for (const auto& p : sample)
            if (within(o[1], p)) wide.push_back(rebase(o[2], o[1], p));
      const Reached r = referee(edited, wide);
      // A symbolic root moved below another place ("/mnt/${HOME}") and mapped onto a
      // source other than "/" is a literal name "${HOME}" there, which no policy path
      // can spell: the intent has no answer for it, and the referee skips it.
      auto id_of = [&](const std::string& host) -> std::optional<PathTable::Id> {
        const auto parsed = SymbolicPath::parse(host);
        if (!parsed) return std::nullopt;
        return intent.paths().intern(*parsed);
      };
      for (const auto& host : r.read) {
        const auto id = id_of(host);
        if (!id) continue;
        BOOST_TEST((intent.verdicts(*id)[static_cast<size_t>(FsOp::Read)] == Expect::Allow),
                   g.name << ": accepted, yet the referee reads " << host << " in\n"
                          << text);
      }
      for (const auto& host : r.write) {
        const auto id = id_of(host);
        if (!id) continue;
        BOOST_TEST((intent.verdicts(*id)[static_cast<size_t>(FsOp::Write)] == Expect::Allow),
                   g.name << ": accepted, yet the referee writes " << host << " in\n"
                          << text);
      }
    }
    BOOST_TEST_MESSAGE(g.name << ": " << accepted << " of " << kEditsPerPolicy
                              << " edits accepted");
    accepted_total += accepted;
  }
  // Edits that change nothing that matters (a duplicated flag, a read-only bind of a
  // readable path) are accepted: the test must have something to referee.
  BOOST_TEST(accepted_total > 0u);
}

// The issue's reference for mounts: the real bwrap on a scratch tree. Each golden policy
// (but `large`: its 22 cache roots under $HOME make the tree the point, not the edits) is
// compiled bound to the tree, its argv edited with a fixed seed naming the tree's places
// and one name in the sandbox's /tmp (a bind of /, /tmp or $HOME itself would have the
// probe walk the host), and the first distinct edits verify_bwrap accepts run in the real
// bwrap, as the caller and as nobody, each on the tree made afresh. Refused edits are not
// run: they cannot be unsound.
BOOST_AUTO_TEST_CASE(accepted_edits_of_the_bound_golden_argvs_hold_in_the_real_bwrap) {
  BOOST_TEST_REQUIRE(std::filesystem::exists(test::kBwrapPath));
  constexpr unsigned kSeed = 19;
  constexpr int kEditsPerPolicy = 3000;
  constexpr size_t kRunsPerPolicy = 50;  // distinct accepted edits run, at most
  const auto started = std::chrono::steady_clock::now();
  const test::ScratchBase base("zpolicy-mt-referee");
  const std::string root = base.str() + "/tree";
  const auto callers = test::callers_as_nobody();
  const test::ScratchWorld tree = golden_tree();
  std::vector<std::string> places = {"/tmp/zp-alias"};
  for (const char* p : {"/w", "/w/.git", "/w/.env", "/w/src", "/w/data", "/w/data/agent-sessions",
                        "/w/secrets", "/w/sub/.git", "/h", "/h/.ssh", "/h/.ssh/id", "/h/.aws",
                        "/h/.aws/credentials", "/t", "/victim", "/victim/sub", "/victim/f"})
    places.push_back(root + p);
  // The host's root as bwrap resolves a source (accepted by verify before 2026-12-06).
  places.push_back("/proc/self/root" + root + "/h/.ssh");
  // Each run on the tree made again at the same place, so that the argv runs as verified.
  auto fresh_tree = [&](const test::ScratchWorld& world) {
    std::filesystem::remove_all(root);
    std::filesystem::create_directory(root);
    test::make_tree(root, world);
  };
  size_t policies = 0, accepted_total = 0, runs = 0;
  for (const auto& file : test::golden_policy_files()) {
    const std::string name = file.stem().string();
    if (name == "large") continue;
    fresh_tree(tree);
    const auto c = compile_bound(file, root);
    const test::ScratchWorld world = read_policy(tree, c.resolved, root);
    std::string argv_text;
    for (const auto& a : c.artifacts)
      if (a.name == "bwrap.args") argv_text = a.content;
    const std::vector<Option> golden = options_of(argv_text);
    // Runs `argv`; what the kernel let the probe do beyond the policy, in words.
    auto referee = [&](const std::vector<Option>& argv, bool as_nobody, bool* ran = nullptr) {
      fresh_tree(world);
      const auto before = test::snapshot(root);
      const test::ProbeOutcome o = test::run_probe(argv, root, as_nobody);
      ++runs;
      if (ran) *ran = o.ran && o.output.find(test::content_mark("/w/src/a.c")) != std::string::npos;
      std::string said;
      for (const auto& e : test::escapes(world, root, o, before)) said += "\n    " + e;
      return said;
    };
    // The unedited argv runs, reads what the policy lets read, and escapes nowhere: else
    // the probe could see nothing.
    for (bool as_nobody : callers) {
      bool ran = false;
      const std::string said = referee(golden, as_nobody, &ran);
      BOOST_TEST(ran, name << ": the golden argv does not run the probe");
      BOOST_TEST(said.empty(), name << ": the golden argv lets the probe escape:" << said);
    }
    test::ArgvEditor editor(kSeed, places);
    std::set<std::vector<Option>> tried;
    size_t accepted = 0;
    for (int i = 0; i < kEditsPerPolicy && tried.size() < kRunsPerPolicy; ++i) {
      const auto edited = editor.edit(golden);
      if (!compiler::verify_bwrap(c.resolved, test::render(edited)).empty()) continue;
      ++accepted;
      if (edited == golden || !tried.insert(edited).second) continue;
      for (bool as_nobody : callers) {
        const std::string said = referee(edited, as_nobody);
        BOOST_TEST(said.empty(), name << ": verify accepts, the kernel lets it escape"
                                      << (as_nobody ? " as nobody" : " as the caller") << ":"
                                      << said << "\n"
                                      << test::render(edited));
      }
    }
    BOOST_TEST_MESSAGE(name << ": " << accepted << " edits accepted, " << tried.size()
                            << " distinct ones run");
    // Something must have been refereed, or the test proves nothing.
    BOOST_TEST(tried.size() >= 4u, name << ": too few accepted edits to referee");
    accepted_total += tried.size();
    ++policies;
  }
  BOOST_TEST(policies >= 4u);
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  BOOST_TEST_MESSAGE("real bwrap referee: " << policies << " golden policies, " << accepted_total
                                            << " accepted edits, " << runs << " bwrap runs, "
                                            << seconds << " s");
}

BOOST_AUTO_TEST_SUITE_END()
