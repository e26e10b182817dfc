// The real bwrap and kernel as the referee of verify_bwrap's verdicts (issue 19): the
// mutation tier's referee (tests/unit/verify_bwrap_random_edits.cpp) is a model written
// apart from the mount table, but a model all the same. Here each mutant of the golden
// workspace argv (extra binds of host directories, dev-binds, reordered mounts,
// symlinks, weakenings), bound to a scratch tree, runs in one real bwrap with a probe
// that reads and writes every file and directory it can find there; what it read is
// seen in its output, what it wrote in the scratch tree afterwards. Every mutant that
// the kernel lets read a denied file, or change anything the policy keeps read-only,
// must be one that `verify_bwrap` refuses.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "../unit/bwrap_argv_editor.hpp"
#include "../unit/verify_bwrap_fixture.hpp"
#include "bwrap_script_run.hpp"
#include "compiler/analyzer/bwrap/verify_bwrap.hpp"

namespace fs = std::filesystem;
using namespace zpolicy;
using compiler::verify_bwrap;
using test::Option;

namespace {

// The denied files' contents: seen in the probe's output, they were read.
const std::map<std::string, std::string> kSecrets = {{"/h/.ssh/id", "zp-secret-ssh"},
                                                     {"/h/.aws/credentials", "zp-secret-aws"}};

// The host side: a workspace with protected entries, a home with the deny roots, and a
// directory the policy only lets read. Everything is open to every user, so that only
// the sandbox stands between the probe (root or nobody) and each file.
void make_tree(const std::string& root) {
  for (const char* d : {"/w/src", "/w/.git", "/w/data/agent-sessions", "/h/.ssh", "/h/.aws",
                        "/victim/sub"})
    fs::create_directories(root + d);
  for (const char* f : {"/w/src/a.c", "/w/.git/config", "/w/.env",
                        "/w/data/agent-sessions/s.json", "/h/notes", "/victim/f",
                        "/victim/sub/g"})
    std::ofstream(root + f) << "host content\n";
  for (const auto& [f, secret] : kSecrets) std::ofstream(root + f) << secret << "\n";
  for (const auto& e : fs::recursive_directory_iterator(root))
    fs::permissions(e.path(), fs::perms::all);
  fs::permissions(root, fs::perms::all);
}

// Every entry below root (never following links), with what a write would change.
std::map<std::string, std::string> snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = e.path().string().substr(root.size());
    struct stat st;
    if (lstat(e.path().c_str(), &st) != 0) continue;
    std::string what = std::to_string(st.st_mode);
    if (S_ISREG(st.st_mode)) {
      std::ifstream in(e.path());
      what += " " + std::string(std::istreambuf_iterator<char>(in), {});
    } else if (S_ISLNK(st.st_mode)) {
      what += " -> " + fs::read_symlink(e.path()).string();
    }
    out[rel] = what;
  }
  return out;
}

// The plain reading of the policy, written apart from the analyzer's intent: the
// workspace is writable but for its protected entries; nothing else is.
bool policy_lets_change(const std::string& rel) {
  auto below = [&](const std::string& dir) {
    return rel == dir || rel.starts_with(dir + "/");
  };
  return below("/w") && !below("/w/.git") && !below("/w/.env") &&
         !below("/w/data/agent-sessions");
}

// Reads and writes whatever it finds below the scratch tree and the two names below /tmp
// where mutants put aliases; links are not followed, their targets are walked as
// themselves. Builtins only, so that a run costs one fork (find): `read` shows a file's
// first line (each file here has one), `true`, not `:`, makes the files (a failed
// redirection of a special builtin ends the shell). Never all of /tmp: a mutant that shows the host's /tmp (or a probe that
// runs outside a sandbox) would append to every file there as root; on 2026-12-05 it did,
// corrupting git objects that /tmp clones hard-link with the main repository (lead).
std::string probe_script(const std::string& root) {
  return "PATH=/usr/bin:/bin; echo zp-probe-started\n"
         "find '" + root + "' /tmp/zp-alias /tmp/zp-link 2>/dev/null | while IFS= read -r p; do\n"
         "  if test -f \"$p\" && ! test -L \"$p\"; then read -r l < \"$p\" && echo \"$l\"; echo zp-write >> \"$p\"; fi\n"
         "  if test -d \"$p\" && ! test -L \"$p\"; then true > \"$p/zp-new\"; fi\n"
         "done 2>/dev/null\n"
         "echo zp-probe-finished\n";
}

struct Outcome {
  bool ran = false;  // bwrap set the sandbox up and the probe finished
  std::string output;
};

// One bwrap, as the caller or as nobody. A mutant bwrap refuses to set up is no access.
Outcome run_bwrap(const std::vector<Option>& argv, const std::string& script, bool as_nobody) {
  std::vector<Option> options;
  for (const auto& o : argv)
    if (o.front() != "--seccomp") options.push_back(o);
  Outcome o;
  o.output = tests::kernel::run_script_in_bwrap(options, script, as_nobody).output;
  o.ran = o.output.find("zp-probe-finished") != std::string::npos;
  return o;
}

// What the kernel let the probe do beyond the policy, in words; empty if nothing.
std::vector<std::string> escapes(const std::string& root, const Outcome& o,
                                 const std::map<std::string, std::string>& before) {
  std::vector<std::string> out;
  for (const auto& [file, secret] : kSecrets)
    if (o.output.find(secret) != std::string::npos) out.push_back("read " + file);
  const auto after = snapshot(root);
  std::set<std::string> changed;
  for (const auto& [rel, what] : after)
    if (auto it = before.find(rel); it == before.end() || it->second != what) changed.insert(rel);
  for (const auto& [rel, what] : before)
    if (!after.contains(rel)) changed.insert(rel);
  for (const auto& rel : changed)
    if (!policy_lets_change(rel)) out.push_back("changed " + rel);
  return out;
}

ir::Resolved bound_policy(const std::string& root) {
  ir::Resolved r = test::workspace_policy();
  r.portable = false;
  for (auto* list : {&r.read, &r.write, &r.pin, &r.protect, &r.deny})
    for (auto& rp : *list) {
      rp.path = tests::kernel::bind_scratch_roots(rp.path, root);
      std::error_code ec;
      const auto st = fs::symlink_status(rp.path, ec);
      rp.kind = st.type() == fs::file_type::directory ? ir::HostKind::Directory
                : st.type() == fs::file_type::regular ? ir::HostKind::File
                                                      : ir::HostKind::Missing;
    }
  r.cwd = tests::kernel::bind_scratch_roots(r.cwd, root);
  return r;
}

struct Mutant {
  std::string name;
  std::vector<Option> argv;  // symbolic: ${WORKSPACE} is ROOT/w, ${HOME} ROOT/h
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
  };
}

// A scratch directory outside /tmp (the sandbox's private /tmp would hide it), removed
// however the test ends (a failed requirement throws).
class ScratchBase {
 public:
  ScratchBase() {
    std::string tmpl = "/var/tmp/zpolicy-kt-referee.XXXXXX";
    BOOST_TEST_REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
    fs::permissions(path_, fs::perms::all);
  }
  ~ScratchBase() { fs::remove_all(path_); }
  ScratchBase(const ScratchBase&) = delete;
  ScratchBase& operator=(const ScratchBase&) = delete;
  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

// The callers each mutant runs as: the test's own user, and nobody when that is root.
std::vector<bool> callers_as_nobody() {
  std::vector<bool> callers = {false};
  if (geteuid() == 0 && fs::exists("/usr/bin/setpriv")) callers.push_back(true);
  return callers;
}

// `argv` with ${WORKSPACE} and ${HOME} bound below `root`, each path in normal form.
std::vector<Option> bound_argv(const std::vector<Option>& argv, const std::string& root) {
  std::vector<Option> out;
  for (const auto& o : argv) {
    Option b;
    for (const auto& a : o)
      b.push_back(fs::path(tests::kernel::bind_scratch_roots(a, root)).lexically_normal().string());
    out.push_back(b);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_kernel_referee)

// The mutation tier's random edits, judged by the kernel instead of a model: seeded edits
// of the golden workspace argv naming the scratch tree's places,
// of which every one verify_bwrap accepts runs in the real bwrap with the probe, as the
// caller and as nobody. None may let the probe read a denied file or change anything the
// policy keeps read-only. Only accepted edits run: a refused one cannot be unsound.
BOOST_AUTO_TEST_CASE(every_random_edit_verify_accepts_holds_in_the_kernel) {
  BOOST_TEST_REQUIRE(fs::exists(tests::kernel::kBwrapPath));
  constexpr unsigned kSeed = 19;
  constexpr int kEdits = 3000;
  constexpr size_t kRuns = 16;  // distinct accepted edits run, at most (about 4 s)
  const std::string w = "${WORKSPACE}", h = "${HOME}", v = "${WORKSPACE}/../victim";
  // Only places in the scratch tree, and one name in the sandbox's /tmp: the probe walks
  // what a mount shows there, so a bind of /, /tmp or $HOME (the policy lets them be read)
  // would have it read the host's whole tree, and write it if the verifier were wrong.
  test::ArgvEditor editor(kSeed, {"/tmp/zp-alias", h, h + "/.ssh",
                                  h + "/.ssh/id", h + "/.aws", h + "/.aws/credentials", w,
                                  w + "/.git", w + "/.env", w + "/src", w + "/data",
                                  w + "/data/agent-sessions", v, v + "/sub", v + "/f"});
  const ScratchBase base;
  const auto callers = callers_as_nobody();
  const auto golden = test::workspace_argv();
  // The edits are judged on a tree of their own, the same as each run's.
  const std::string judged = base.str() + "/judged";
  fs::create_directory(judged);
  make_tree(judged);
  const auto policy = bound_policy(judged);
  std::set<std::vector<Option>> tried;
  size_t accepted = 0, runs = 0;
  for (int i = 0; i < kEdits && tried.size() < kRuns; ++i) {
    const auto edited = editor.edit(golden);
    if (!verify_bwrap(policy, test::render(bound_argv(edited, judged))).empty()) continue;
    ++accepted;
    if (edited == golden || !tried.insert(edited).second) continue;
    for (bool as_nobody : callers) {
      const std::string root = base.str() + "/" + std::to_string(runs++);
      fs::create_directory(root);
      make_tree(root);
      const auto argv = bound_argv(edited, root);
      const auto before = snapshot(root);
      const Outcome o = run_bwrap(argv, probe_script(root), as_nobody);
      std::string said;
      for (const auto& e : escapes(root, o, before)) said += "\n    " + e;
      BOOST_TEST(said.empty(), "verify accepts, the kernel lets it escape"
                                   << (as_nobody ? " as nobody" : " as the caller") << ":" << said
                                   << "\n" << test::render(argv));
      fs::remove_all(root);
    }
  }
  BOOST_TEST_MESSAGE(accepted << " edits accepted, " << tried.size() << " distinct ones run in "
                              << runs << " bwraps");
  // Something must have been refereed, or the test proves nothing.
  BOOST_TEST(tried.size() >= 8u);
}

BOOST_AUTO_TEST_CASE(every_mutant_the_kernel_lets_escape_is_refused_by_verify) {
  BOOST_TEST_REQUIRE(fs::exists(tests::kernel::kBwrapPath));
  const auto callers = callers_as_nobody();
  const ScratchBase scratch;
  const std::string& base = scratch.str();
  size_t escaping = 0, refused = 0, refused_harmless = 0, runs = 0;
  for (const auto& m : mutants()) {
    for (bool as_nobody : callers) {
      const std::string root = base + "/" + std::to_string(runs++);
      fs::create_directory(root);
      make_tree(root);
      const auto argv = bound_argv(m.argv, root);
      const auto findings = verify_bwrap(bound_policy(root), test::render(argv));
      const auto before = snapshot(root);
      const Outcome o = run_bwrap(argv, probe_script(root), as_nobody);
      const auto beyond = escapes(root, o, before);
      std::string said;
      for (const auto& e : beyond) said += "\n    " + e;
      BOOST_TEST_CONTEXT(m.name << (as_nobody ? " as nobody" : " as the caller")
                                << (o.ran ? "" : " (bwrap refused it)") << said) {
        if (m.name == "golden") {
          BOOST_TEST(findings.empty());
          BOOST_TEST(o.ran);
          BOOST_TEST(beyond.empty());
          // The probe can do what it claims: it reads and writes where the policy allows.
          BOOST_TEST(o.output.find("host content") != std::string::npos);
          BOOST_TEST(snapshot(root).contains("/w/src/zp-new"));
        }
        if (!beyond.empty())
          BOOST_TEST(!findings.empty(), "the kernel lets it escape, verify accepts it");
      }
      escaping += !beyond.empty();
      refused += !findings.empty();
      refused_harmless += !findings.empty() && beyond.empty();
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
