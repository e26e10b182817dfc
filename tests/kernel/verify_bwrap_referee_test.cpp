// The real bwrap and kernel as the referee of verify_bwrap's verdicts (issue 19), on a
// fixed sample of mutants of the golden workspace argv: extra binds of host directories,
// dev-binds, reordered mounts, symlinks, weakenings, each class with members that escape
// and members that do not. Bound to a scratch tree, each runs in one real bwrap with the
// probe of tests/unit/support/bwrap_referee.hpp (which the mutation tier's random edits
// share): every mutant that the kernel lets read a denied file, or change anything the
// policy keeps read-only, must be one that `verify_bwrap` refuses.
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "../unit/support/bwrap_referee.hpp"
#include "../unit/verify_bwrap_fixture.hpp"
#include "compiler/analyzer/bwrap/verify_bwrap.hpp"

namespace fs = std::filesystem;
using namespace zpolicy;
using compiler::verify_bwrap;
using test::Option;

namespace {

// The host side: a workspace with protected entries, a home with the deny roots, and a
// directory the policy only lets read; the plain reading of the policy: the workspace is
// writable but for its protected entries, nothing else is, the deny roots are unreadable.
const test::ScratchWorld& world() {
  static const test::ScratchWorld w{
      {"/w/src", "/w/.git", "/w/data/agent-sessions", "/h/.ssh", "/h/.aws", "/victim/sub"},
      {"/w/src/a.c", "/w/.git/config", "/w/.env", "/w/data/agent-sessions/s.json", "/h/notes",
       "/victim/f", "/victim/sub/g", "/h/.ssh/id", "/h/.aws/credentials"},
      {"/w"},
      {"/w/.git", "/w/.env", "/w/data/agent-sessions"},
      {"/h/.ssh", "/h/.aws/credentials"}};
  return w;
}

ir::Resolved bound_policy(const std::string& root) {
  ir::Resolved r = test::workspace_policy();
  r.portable = false;
  for (auto* list : {&r.read, &r.write, &r.pin, &r.protect, &r.deny})
    for (auto& rp : *list) {
      rp.path = test::bind_scratch_roots(rp.path, root);
      std::error_code ec;
      const auto st = fs::symlink_status(rp.path, ec);
      rp.kind = st.type() == fs::file_type::directory ? ir::HostKind::Directory
                : st.type() == fs::file_type::regular ? ir::HostKind::File
                                                      : ir::HostKind::Missing;
    }
  r.cwd = test::bind_scratch_roots(r.cwd, root);
  return r;
}

struct Mutant {
  std::string name;
  std::vector<Option> argv;  // symbolic: ${WORKSPACE} is ROOT/w, ${HOME} ROOT/h
  // ROOT/victim a file system of its own (a tmpfs, when run as root): the host's mounts
  // below a bind's source, which --remount-ro of the bind leaves writable.
  bool victim_mounted = false;
};

size_t index_of(const std::vector<Option>& argv, const Option& o) {
  const auto it = std::find(argv.begin(), argv.end(), o);
  BOOST_TEST_REQUIRE((it != argv.end()), "the golden argv has no " << o.front() << " " << o.back());
  return static_cast<size_t>(it - argv.begin());
}

// The options at [first, last) moved to stand before `before` (an index of the argv
// without them), or to the end.
std::vector<Option> moved(std::vector<Option> argv, size_t first, size_t last,
                          std::optional<size_t> before) {
  std::vector<Option> group(argv.begin() + static_cast<std::ptrdiff_t>(first),
                            argv.begin() + static_cast<std::ptrdiff_t>(last));
  argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(first),
             argv.begin() + static_cast<std::ptrdiff_t>(last));
  const size_t at = before.value_or(argv.size());
  argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(at), group.begin(), group.end());
  return argv;
}

// The sample: each class the issue names, with members that escape and members that
// do not (so that the verifier's refusals are seen to be more than "refuse anything").
std::vector<Mutant> mutants() {
  const auto g = test::workspace_argv();
  const std::string w = "${WORKSPACE}", h = "${HOME}", v = "${WORKSPACE}/../victim";
  const size_t chdir = index_of(g, {"--chdir", w});
  auto with = [&](std::vector<Option> extra, std::optional<size_t> at = std::nullopt) {
    auto argv = g;
    argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(at.value_or(chdir)), extra.begin(),
                extra.end());
    return argv;
  };
  auto replaced = [&](const Option& from, const Option& to) {
    auto argv = g;
    argv[index_of(argv, from)] = to;
    return argv;
  };
  const size_t root_bind = index_of(g, {"--ro-bind", "/", "/"});
  const size_t tmp = index_of(g, {"--tmpfs", "/tmp"});
  const size_t ssh_mask = index_of(g, {"--perms", "000"});
  const size_t aws_mask = index_of(g, {"--ro-bind", "/dev/null", h + "/.aws/credentials"});
  const size_t ws_bind = index_of(g, {"--bind", w, w});
  const size_t data_pin = index_of(g, {"--bind", w + "/data", w + "/data"});
  return {
      {"golden", g},
      // Extra binds of host directories.
      {"--bind victim", with({{"--bind", v, v}})},
      {"--bind-try victim", with({{"--bind-try", v, v}})},
      {"--ro-bind victim", with({{"--ro-bind", v, v}})},
      {"--bind victim into the workspace", with({{"--bind", v, w + "/alias"}})},
      {"--ro-bind victim at /tmp", with({{"--ro-bind", v, "/tmp/zp-alias"}})},
      {"--bind the scratch root at /tmp", with({{"--bind", w + "/..", "/tmp/zp-alias"}})},
      {"--bind ${HOME} after its masks", with({{"--bind", h, h}})},
      {"--ro-bind ${HOME} after its masks", with({{"--ro-bind", h, h}})},
      {"--ro-bind ${HOME} at /tmp", with({{"--ro-bind", h, "/tmp/zp-alias"}})},
      {"--ro-bind ${HOME}/.ssh at /tmp", with({{"--ro-bind", h + "/.ssh", "/tmp/zp-alias"}})},
      {"--ro-bind ${HOME}/.aws after the file mask", with({{"--ro-bind", h + "/.aws", h + "/.aws"}})},
      {"--ro-bind ${HOME} before its masks", with({{"--ro-bind", h, h}}, ssh_mask)},
      {"--bind .git over its read-only bind", with({{"--bind", w + "/.git", w + "/.git"}})},
      {"--bind ${WORKSPACE} again at the end", with({{"--bind", w, w}})},
      {"--bind ${WORKSPACE} again before the protections", with({{"--bind", w, w}}, ws_bind)},
      // A deny root through the host's /proc: bwrap resolves /proc/self/root in the host's
      // namespace (accepted by verify, and read here, before 2026-12-06).
      {"--ro-bind ${HOME}/.ssh through /proc/self/root at /tmp",
       with({{"--ro-bind", "/proc/self/root" + h + "/.ssh", "/tmp/zp-alias"}})},
      // Device binds.
      {"--dev-bind victim", with({{"--dev-bind", v, v}})},
      {"--dev-bind ${HOME}/.ssh after its mask", with({{"--dev-bind", h + "/.ssh", h + "/.ssh"}})},
      {"--ro-bind .git made --dev-bind",
       replaced({"--ro-bind", w + "/.git", w + "/.git"}, {"--dev-bind", w + "/.git", w + "/.git"})},
      {"--dev-bind /dev/null over .env", with({{"--dev-bind", "/dev/null", w + "/.env"}})},
      // Reordered mounts.
      {"workspace bind moved after the protections", moved(g, ws_bind, ws_bind + 1, std::nullopt)},
      {"data pin moved after agent-sessions", moved(g, data_pin, data_pin + 1, std::nullopt)},
      {"~/.ssh mask moved before / ", moved(g, ssh_mask, ssh_mask + 3, root_bind)},
      {"~/.aws/credentials mask moved before /", moved(g, aws_mask, aws_mask + 1, root_bind)},
      {"/tmp tmpfs moved to the end", moved(g, tmp, tmp + 1, std::nullopt)},
      {"--remount-ro of ~/.ssh before its tmpfs",
       moved(g, ssh_mask + 2, ssh_mask + 3, ssh_mask)},
      // Links: made by bwrap, then mounted through.
      {"--bind victim through a link in /tmp",
       with({{"--symlink", v, "/tmp/zp-link"}, {"--bind", v, "/tmp/zp-link"}})},
      {"--ro-bind ${HOME} through a link in /tmp",
       with({{"--symlink", h, "/tmp/zp-link"}, {"--ro-bind", h, "/tmp/zp-link"}})},
      {"--bind .git through a link in the workspace",
       with({{"--symlink", w + "/.git", w + "/zp-link"}, {"--bind", w + "/.git", w + "/zp-link"}})},
      {"a link to the ssh key in the workspace", with({{"--symlink", h + "/.ssh/id", w + "/zp-link"}})},
      {"a link to victim in /tmp", with({{"--symlink", v, "/tmp/zp-link"}})},
      // Weakenings of the golden options.
      {".env made writable",
       replaced({"--ro-bind", w + "/.env", w + "/.env"}, {"--bind", w + "/.env", w + "/.env"})},
      {"~/.ssh mask without --remount-ro", moved(g, ssh_mask + 2, ssh_mask + 3, std::nullopt)},
      {"/ made writable", replaced({"--ro-bind", "/", "/"}, {"--bind", "/", "/"})},
      // --remount-ro remounts the bind's root only (red team fuzz19, Z19-4).
      {"/ made writable, then --remount-ro /, victim a mount of its own",
       [&] {
         auto argv = replaced({"--ro-bind", "/", "/"}, {"--bind", "/", "/"});
         argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(root_bind + 1),
                     Option{"--remount-ro", "/"});
         return argv;
       }(),
       true},
  };
}

// `argv` with ${WORKSPACE} and ${HOME} bound below `root`, each path in normal form.
std::vector<Option> bound_argv(const std::vector<Option>& argv, const std::string& root) {
  std::vector<Option> out;
  for (const auto& o : argv) {
    Option b;
    for (const auto& a : o)
      b.push_back(fs::path(test::bind_scratch_roots(a, root)).lexically_normal().string());
    out.push_back(b);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_kernel_referee)

BOOST_AUTO_TEST_CASE(every_mutant_the_kernel_lets_escape_is_refused_by_verify) {
  BOOST_TEST_REQUIRE(fs::exists(test::kBwrapPath));
  const auto callers = test::callers_as_nobody();
  const test::ScratchBase scratch("zpolicy-kt-referee");
  const std::string& base = scratch.str();
  size_t escaping = 0, refused = 0, refused_harmless = 0, runs = 0;
  for (const auto& m : mutants()) {
    for (bool as_nobody : callers) {
      const std::string root = base + "/" + std::to_string(runs++);
      fs::create_directory(root);
      const std::string victim = root + "/victim";
      const bool mounted = m.victim_mounted && geteuid() == 0;
      if (mounted) {
        fs::create_directory(victim);
        BOOST_TEST_REQUIRE(mount("zpolicy-kt-victim", victim.c_str(), "tmpfs", 0, "mode=0755") == 0);
      }
      test::make_tree(root, world());
      const auto argv = bound_argv(m.argv, root);
      const auto findings = verify_bwrap(bound_policy(root), test::render(argv));
      const auto before = test::snapshot(root);
      const test::ProbeOutcome o = test::run_probe(argv, root, as_nobody);
      const auto beyond = test::escapes(world(), root, o, before);
      std::string said;
      for (const auto& e : beyond) said += "\n    " + e;
      BOOST_TEST_CONTEXT(m.name << (as_nobody ? " as nobody" : " as the caller")
                                << (o.ran ? "" : " (bwrap refused it)") << said) {
        if (m.name == "golden") {
          BOOST_TEST(findings.empty());
          BOOST_TEST(o.ran);
          BOOST_TEST(beyond.empty());
          // The probe can do what it claims: it reads and writes where the policy allows.
          BOOST_TEST(o.output.find(test::content_mark("/w/src/a.c")) != std::string::npos);
          BOOST_TEST(test::snapshot(root).contains("/w/src/zp-new"));
        }
        if (!beyond.empty())
          BOOST_TEST(!findings.empty(), "the kernel lets it escape, verify accepts it");
      }
      escaping += !beyond.empty();
      refused += !findings.empty();
      refused_harmless += !findings.empty() && beyond.empty();
      if (mounted) BOOST_TEST(umount2(victim.c_str(), MNT_DETACH) == 0);
      fs::remove_all(root);
    }
  }
  BOOST_TEST_MESSAGE(runs << " bwrap runs: the kernel let " << escaping << " escape, verify refused "
                          << refused << " (" << refused_harmless
                          << " of them with no escape the probe saw)");
  // A probe that sees no escape at all would make the assertion above vacuous.
  BOOST_TEST(escaping >= callers.size() * 10);
}

BOOST_AUTO_TEST_SUITE_END()
