#define BOOST_TEST_DYN_LINK
#include <boost/test/unit_test.hpp>
#include <map>
#include <set>
#include <sstream>

#include "compiler/bwrap_argv.hpp"
#include "compiler/mount_table.hpp"
#include "compiler/probes.hpp"
#include "compiler/verify_bwrap.hpp"
#include "golden_support.hpp"
#include "verify_bwrap_fixture.hpp"

// Mutation test of the verifier: every single deletion, move or weakening of one
// element of a correct artifact must either be caught by verify_bwrap, or be shown by
// the mount-table model to grant nothing the original did not (then it changes nothing
// that matters, or only restricts). A surviving mutant that grants more fails the test.
using namespace zpolicy;
using namespace zpolicy::compiler;
using test::Option;

namespace {

struct Mutant {
  std::string description;
  std::string text;
};

std::vector<Mutant> mutants(const std::vector<Option>& argv) {
  std::vector<Mutant> out;
  auto join = [](const Option& o) {
    std::string s;
    for (const auto& a : o) s += (s.empty() ? "" : " ") + a;
    return s;
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    auto m = argv;
    m.erase(m.begin() + static_cast<long>(i));
    out.push_back({"delete option '" + join(argv[i]) + "'", test::render(m)});
  }
  {
    std::vector<std::string> lines;
    for (const auto& o : argv) lines.insert(lines.end(), o.begin(), o.end());
    for (size_t j = 0; j < lines.size(); ++j) {
      std::string text;
      for (size_t k = 0; k < lines.size(); ++k)
        if (k != j) text += lines[k] + "\n";
      out.push_back({"delete line " + std::to_string(j + 1) + " '" + lines[j] + "'", text});
    }
  }
  // A mask moves as a whole too: --perms with the option it modifies, and a
  // --remount-ro with the mount it remounts.
  std::vector<std::vector<Option>> units;
  for (size_t i = 0; i < argv.size(); ++i) {
    bool joins_previous =
        !units.empty() &&
        (units.back().back()[0] == "--perms" ||
         (argv[i][0] == "--remount-ro" && units.back().back().back() == argv[i][1]));
    if (joins_previous)
      units.back().push_back(argv[i]);
    else
      units.push_back({argv[i]});
  }
  for (size_t i = 0; i < units.size(); ++i) {
    if (units[i].size() == 1) continue;
    for (size_t k = 0; k < units.size(); ++k) {
      if (k == i) continue;
      auto m = units;
      auto moved = m[i];
      m.erase(m.begin() + static_cast<long>(i));
      m.insert(m.begin() + static_cast<long>(k), moved);
      std::vector<Option> flat;
      for (const auto& u : m) flat.insert(flat.end(), u.begin(), u.end());
      out.push_back({"move the group '" + join(units[i][0]) + " ... " + join(units[i].back()) +
                         "' to position " + std::to_string(k),
                     test::render(flat)});
    }
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    for (size_t k = 0; k < argv.size(); ++k) {
      if (k == i) continue;
      auto m = argv;
      Option moved = m[i];
      m.erase(m.begin() + static_cast<long>(i));
      m.insert(m.begin() + static_cast<long>(k), moved);
      out.push_back(
          {"move '" + join(argv[i]) + "' to position " + std::to_string(k), test::render(m)});
    }
  }
  // Weakenings of one option: a read-only bind made writable or optional, a mode
  // opened up, a namespace made optional or shared, a mask replaced by something
  // that shows or stores.
  const std::multimap<std::string, std::string> weaker = {
      {"--ro-bind", "--bind"},
      {"--ro-bind", "--ro-bind-try"},
      {"--ro-bind", "--dev-bind"},
      {"--bind", "--bind-try"},
      {"--tmpfs", "--dir"},
      {"--unshare-user", "--unshare-user-try"},
      {"--unshare-net", "--share-net"},
      {"--unshare-cgroup-try", "--share-net"},
      {"--proc", "--dir"},
      {"--dev", "--dir"},
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    auto [lo, hi] = weaker.equal_range(argv[i][0]);
    for (auto it = lo; it != hi; ++it) {
      auto m = argv;
      m[i][0] = it->second;
      out.push_back({"weaken '" + join(argv[i]) + "' to " + it->second, test::render(m)});
    }
    if (argv[i][0] == "--perms") {
      for (const char* mode : {"0700", "0755", "0111", "0444"}) {
        auto m = argv;
        m[i][1] = mode;
        out.push_back({"weaken '" + join(argv[i]) + "' to mode " + mode, test::render(m)});
      }
    }
    if (argv[i][0] == "--cap-drop") {
      auto m = argv;
      m[i][1] = "CAP_SYS_ADMIN";
      out.push_back({"weaken '" + join(argv[i]) + "' to one capability", test::render(m)});
    }
    // A path turned into a sibling that shares its name as a prefix (.git -> .gitx).
    for (size_t a = 1; a < argv[i].size(); ++a) {
      if (argv[i][a].empty() || (argv[i][a][0] != '/' && argv[i][a][0] != '$') || argv[i][a] == "/")
        continue;
      auto m = argv;
      m[i][a] += "x";
      out.push_back(
          {"rename argument " + std::to_string(a) + " of '" + join(argv[i]) + "' to a sibling",
           test::render(m)});
    }
  }
  return out;
}

int rank(Outcome o) { return o == Outcome::Denied ? 0 : o == Outcome::Scratch ? 1 : 2; }

// The oracle's scenarios: every -try bind applied, and every -try bind skipped whose
// source is not implied to exist by a plain bind below it or by the IR.
std::vector<MountTable> oracle_tables(const BwrapArgv& argv, const ir::Resolved& policy) {
  std::vector<SymbolicPath> present;
  for (const auto& op : argv.ops)
    if (op.source && !op.try_source) present.push_back(*op.source);
  for (const auto* list : {&policy.read, &policy.write, &policy.protect, &policy.deny, &policy.pin})
    for (const auto& rp : *list)
      if (rp.kind == ir::HostKind::Directory || rp.kind == ir::HostKind::File)
        present.push_back(*SymbolicPath::parse(rp.path));
  std::vector<MountTable> out;
  for (bool skip : {false, true}) {
    auto applied = [&](size_t i) {
      if (!skip) return true;
      for (const auto& p : present)
        if (argv.ops[i].source->contains(p)) return true;
      return false;
    };
    auto r = MountTable::replay(argv.ops, applied);
    if (auto* t = std::get_if<MountTable>(&r)) out.push_back(std::move(*t));
  }
  return out;
}

// What the mutant grants that the original does not, or "" when nothing.
std::string grants_more(const ir::Resolved& policy, const BwrapArgv& orig, const BwrapArgv& mut,
                        const std::vector<SymbolicPath>& paths) {
  const BwrapFlags &a = orig.flags, &b = mut.flags;
  const std::pair<bool, bool> flags[] = {
      {a.new_session, b.new_session},
      {a.die_with_parent, b.die_with_parent},
      {a.unshare_user, b.unshare_user},
      {a.unshare_ipc, b.unshare_ipc},
      {a.unshare_pid, b.unshare_pid},
      {a.unshare_net, b.unshare_net},
      {a.unshare_uts, b.unshare_uts},
      {a.cap_drop_all, b.cap_drop_all},
      {a.unshare_cgroup || a.unshare_cgroup_try, b.unshare_cgroup || b.unshare_cgroup_try},
      {a.disable_userns, b.disable_userns},
      {a.seccomp_fd.has_value(), b.seccomp_fd.has_value()},
  };
  for (const auto& [was, is] : flags)
    if (was && !is) return "a namespace or lockdown option is gone";
  if (a.chdir != b.chdir) return "the working directory changed";
  auto ta = oracle_tables(orig, policy), tb = oracle_tables(mut, policy);
  if (tb.size() < ta.size()) return "";  // bwrap aborts in a scenario: nothing runs there
  for (size_t s = 0; s < ta.size(); ++s)
    for (const auto& p : paths)
      for (FsOp op : kAllFsOps) {
        auto ra = ta[s].host_access(p, op), rb = tb[s].host_access(p, op);
        if (rank(rb.outcome) > rank(ra.outcome))
          return std::string(to_string(op)) + " " + p.str() + ": " + to_string(ra.outcome) +
                 " -> " + to_string(rb.outcome);
      }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_mutants)

void check_mutants(const ir::Resolved& policy, const std::vector<Option>& argv, const std::string& name,
                   size_t min_mutants = 500) {
  const auto original = *parse_bwrap_args(test::render(argv)).argv;
  BOOST_TEST_REQUIRE(verify_bwrap(policy, test::render(argv)).empty());

  // The oracle looks wider than the verifier's probes: every destination of either
  // artifact, its parent and a child, on top of the probe set.
  std::set<SymbolicPath> base;
  const Intent intent(policy);
  for (const auto& p : generate_probes(intent)) base.insert(p.path());
  for (const auto& op : original.ops) base.insert(op.dest);

  size_t killed = 0, harmless = 0;
  std::vector<std::string> harmless_list;
  const auto all = mutants(argv);
  for (const auto& m : all) {
    if (!verify_bwrap(policy, m.text).empty()) {
      ++killed;
      continue;
    }
    auto parsed = parse_bwrap_args(m.text);
    BOOST_TEST_REQUIRE(parsed.argv.has_value(), m.description + ": unparsable yet verified");
    std::set<SymbolicPath> paths = base;
    for (const auto& op : parsed.argv->ops) paths.insert(op.dest);
    std::vector<SymbolicPath> wide;
    for (const auto& p : paths) {
      wide.push_back(p);
      wide.push_back(p.child("zpolicy-oracle"));
      if (auto parent = p.parent()) wide.push_back(*parent);
    }
    std::string more = grants_more(policy, original, *parsed.argv, wide);
    BOOST_TEST(more.empty(),
               "surviving mutant weakens the sandbox: " << m.description << ": " << more);
    ++harmless;
    harmless_list.push_back(m.description);
  }
  BOOST_TEST_MESSAGE(name << ": bwrap mutants: " << killed << " killed, " << harmless
                          << " survived granting nothing more, of " << all.size());
  for (const auto& h : harmless_list) BOOST_TEST_MESSAGE("  survivor: " << h);
  BOOST_TEST(killed + harmless == all.size());
  BOOST_TEST(all.size() > min_mutants);
}

BOOST_AUTO_TEST_CASE(every_mutant_is_killed_or_grants_nothing_more) {
  check_mutants(test::workspace_policy(), test::workspace_argv(), "workspace-write portable");
  check_mutants(test::readonly_policy(), test::readonly_argv(), "read-only bound");
}

// The same over the artifacts the golden policies really compile to. `large` repeats the
// shapes of the others two hundred times over; its mutants would cost minutes and add
// no new kind of element, so it is left out.
BOOST_AUTO_TEST_CASE(golden_policies_every_mutant_is_killed_or_grants_nothing_more) {
  for (const auto& g : test::golden_compiles(Target::Linux)) {
    if (g.name == "large") continue;
    std::vector<Option> argv;
    std::istringstream lines(g.artifact("bwrap.args"));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("--", 0) == 0 || argv.empty()) argv.push_back({});
      argv.back().push_back(line);
    }
    check_mutants(g.compiled.resolved, argv, g.name, 50);
  }
}

BOOST_AUTO_TEST_SUITE_END()
