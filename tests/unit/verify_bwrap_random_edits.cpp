// Property test of the bwrap verifier (issue 19): random edits of the golden argvs
// (options inserted, deleted, changed, duplicated; paths changed), with a fixed seed.
// Every edited argv that verify_bwrap accepts is replayed by a referee written apart
// from the mount table, which must find no host object it lets the sandbox read or
// write that the policy denies. The referee is deliberately simple: it knows binds,
// tmpfs, --remount-ro and --dir, which are all the edits use, and no modes or links.
// Its rule for which mount covers a path: the latest mount whose destination contains
// it (a later mount over an ancestor hides earlier ones below; a later one below shows
// above an earlier ancestor). The real bwrap judges the same kind of edits of a bound argv
// in the kernel tier (tests/kernel/verify_bwrap_referee_test.cpp).
#include <boost/test/unit_test.hpp>
#include <set>
#include <sstream>

#include "compiler/analyzer/bwrap/verify_bwrap.hpp"
#include "compiler/analyzer/probes.hpp"
#include "golden_support.hpp"
#include "bwrap_argv_editor.hpp"
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

BOOST_AUTO_TEST_SUITE_END()
