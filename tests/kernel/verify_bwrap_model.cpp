#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "../unit/support/bwrap_script_run.hpp"
#include "../unit/verify_bwrap_fixture.hpp"
#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/mount_table.hpp"
#include "compiler/analyzer/probes.hpp"

// Differential test of the mount-table model against the real bwrap and kernel: for
// every probe of the golden workspace policy (bound to a scratch directory) and every
// operation, what the model predicts must be what happens in the sandbox.
namespace fs = std::filesystem;
using namespace zpolicy;
using namespace zpolicy::compiler;
using test::Option;

namespace {

void make_layout(const std::string& root) {
  for (const char* d :
       {"/w/src", "/w/.git", "/w/data/agent-sessions", "/w/data/other", "/h/.ssh", "/h/.aws"})
    fs::create_directories(root + d);
  for (const char* f : {"/w/src/a.c", "/w/.git/config", "/w/.env", "/w/data/agent-sessions/s.json",
                        "/h/.ssh/id", "/h/.aws/credentials"})
    std::ofstream(root + f) << "host content\n";
  // The model assumes host modes allow; make that true for an unprivileged sandbox user.
  for (const auto& e : fs::recursive_directory_iterator(root))
    fs::permissions(e.path(), fs::perms::all);
  fs::permissions(root, fs::perms::all);
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

// Runs `script` in the sandbox built from `argv`, optionally as nobody, and returns
// its standard output.
std::string run_model_script(const std::vector<Option>& argv, const std::string& script,
                             bool as_nobody) {
  const auto r = test::run_script_in_bwrap(argv, script, as_nobody);
  BOOST_TEST_REQUIRE((WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0),
                     "bwrap failed with status " << r.status << ", output: " << r.output);
  return r.output;
}

struct Check {
  SymbolicPath path;
  FsOp op;
};

// One shell line per comparable (path, op); each prints "INDEX STATUS". Successful
// changes are undone in place, except creations, whose host effect is checked after.
std::string script_for(const std::vector<Check>& checks) {
  std::string s;
  for (size_t i = 0; i < checks.size(); ++i) {
    const std::string p = quote(checks[i].path.str()), id = std::to_string(i);
    switch (checks[i].op) {
      case FsOp::Read:
        s += "{ if test -d " + p + "; then ls " + p + "; else cat " + p +
             "; fi; } >/dev/null 2>&1; echo " + id + " $?\n";
        break;
      case FsOp::Write:
        s += "if test -e " + p + "; then if test -d " + p + "; then touch " + p +
             "; else true >> " + p + "; fi; echo " + id + " $?; else if true >> " + p +
             "; then echo " + id + " 0; rm -f " + p + "; else echo " + id +
             " 1; fi; fi 2>/dev/null\n";
        break;
      case FsOp::Delete:
        s += "if mv " + p + " " + p + ".moved 2>/dev/null; then echo " + id + " 0; mv " + p +
             ".moved " + p + "; else echo " + id + " 1; fi\n";
        break;
      case FsOp::Create:
        s += "mkdir " + p + " 2>/dev/null; echo " + id + " $?\n";
        break;
      default:  // Seatbelt's finer operations are not probed on Linux
        break;
    }
  }
  return s;
}

void differential(const std::vector<Option>& argv_symbolic, const std::string& variant, bool exact,
                  bool as_nobody) {
  // Not below /tmp: the sandbox's private /tmp would hide it.
  std::string tmpl = "/var/tmp/zpolicy-kt-verify.XXXXXX";
  BOOST_TEST_REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  const std::string root = tmpl;
  make_layout(root);
  std::vector<Option> argv;
  for (const auto& o : argv_symbolic) {
    if (o.front() == "--seccomp") continue;  // no filter descriptor here; not a mount
    Option b;
    for (const auto& a : o) b.push_back(test::bind_scratch_roots(a, root));
    argv.push_back(b);
  }
  auto parsed = parse_bwrap_args(test::render(argv));
  BOOST_TEST_REQUIRE(parsed.has_value());
  auto replayed = MountTable::replay(*parsed, [](size_t) { return true; });
  BOOST_TEST_REQUIRE(replayed.has_value());
  auto& table = *replayed;

  ir::Resolved bound = test::workspace_policy();
  for (auto* list : {&bound.read, &bound.write, &bound.pin, &bound.protect, &bound.deny})
    for (auto& rp : *list) rp.path = test::bind_scratch_roots(rp.path, root);
  // Creations and deletions are ordered so that no check sees another's effect.
  std::vector<Check> checks;
  Intent intent(bound);
  const auto probes = generate_probes(intent);
  for (FsOp op : {FsOp::Read, FsOp::Write, FsOp::Delete, FsOp::Create})
    for (const auto& probe : probes) {
      const fs::path host(probe.path().str());
      const bool exists = fs::exists(fs::symlink_status(host));
      const bool parent_exists = fs::exists(host.parent_path());
      bool comparable = op == FsOp::Read || op == FsOp::Delete ? exists
                        : op == FsOp::Write                    ? exists || parent_exists
                                                               : !exists && parent_exists;
      if (comparable) checks.push_back({probe.path(), op});
    }
  std::istringstream out(run_model_script(argv, script_for(checks), as_nobody));
  std::map<size_t, int> status;
  for (size_t i, rc; out >> i >> rc;) status[i] = static_cast<int>(rc);
  BOOST_TEST_REQUIRE(status.size() == checks.size());

  // The model may over-approximate (say "allowed" where the kernel refuses: it does
  // not know a host file from a directory, and credits the owner's chmod that this
  // script never tries); that only makes the verifier stricter. The reverse would make
  // it trust a deny that does not hold.
  size_t agreed = 0, conservative = 0;
  for (size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i];
    const AccessResult r = table.access(c.path, c.op);
    const bool kernel_allows = status[i] == 0, model_allows = r.outcome != Outcome::Denied;
    std::string trace;
    for (const auto& t : r.trace) trace += "\n    " + t;
    BOOST_TEST_CONTEXT(variant << (as_nobody ? " as nobody: " : " as caller: ") << to_string(c.op)
                               << " " << c.path.str() << " model " << to_string(r.outcome)
                               << trace) {
      BOOST_TEST(!(kernel_allows && !model_allows),
                 "unsound: the kernel allows what the model denies");
      if (exact) BOOST_TEST(kernel_allows == model_allows);
      if (c.op == FsOp::Create && kernel_allows)
        BOOST_TEST(fs::exists(c.path.str()) == (r.outcome == Outcome::Host));
    }
    agreed += kernel_allows == model_allows;
    conservative += model_allows && !kernel_allows;
  }
  BOOST_TEST_MESSAGE(variant << (as_nobody ? " as nobody" : " as caller")
                             << ": model agrees with the kernel on " << agreed << " of "
                             << checks.size() << " probe operations, over-approximates "
                             << conservative);
  fs::remove_all(root);
}

std::vector<Option> without(std::vector<Option> argv, const Option& drop) {
  argv.erase(std::remove(argv.begin(), argv.end(), drop), argv.end());
  return argv;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_model)

BOOST_AUTO_TEST_CASE(the_mount_table_predicts_the_kernel) {
  BOOST_TEST_REQUIRE(fs::exists(test::kBwrapPath));
  const std::string w = "${WORKSPACE}";
  const auto golden = test::workspace_argv();
  auto env_writable = golden;
  std::replace(env_writable.begin(), env_writable.end(),
               Option{"--ro-bind", w + "/.env", w + "/.env"},
               Option{"--bind", w + "/.env", w + "/.env"});
  const std::pair<std::string, std::vector<Option>> variants[] = {
      {"golden", golden},
      {"no --remount-ro of the deny mask", without(golden, {"--remount-ro", "${HOME}/.ssh"})},
      {"no --perms on the deny mask", without(golden, {"--perms", "000"})},
      {"no pin", without(golden, {"--bind", w + "/data", w + "/data"})},
      {".env writable", env_writable},
  };
  const bool root = geteuid() == 0;
  for (const auto& [name, argv] : variants) {
    const bool exact = name == "golden";
    differential(argv, name, exact, false);
    if (root && fs::exists("/usr/bin/setpriv")) differential(argv, name, exact, true);
  }
}

BOOST_AUTO_TEST_SUITE_END()
