#include <boost/test/unit_test.hpp>
#include <map>
#include <set>
#include <sstream>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/mount_table.hpp"
#include "compiler/analyzer/probes.hpp"
#include "compiler/analyzer/bwrap/verify_bwrap.hpp"
#include "golden_support.hpp"
#include "tests/unit/support/mutant_dump.hpp"
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

bool is_modifier(const Option& o) { return o[0] == "--perms" || o[0] == "--size"; }

std::vector<SymbolicPath> paths_of(const Option& o) {
  std::vector<SymbolicPath> out;
  for (size_t i = 1; i < o.size(); ++i)
    if (auto p = SymbolicPath::parse(o[i])) out.push_back(*p);
  return out;
}

// Whether the relative order of two options that name paths can matter to bwrap, for
// one artifact. Options without paths are flags, read wherever they stand. Two mounts
// interact when a path of one contains a path of the other (a mount covers what lies
// below it), and when one carries a --perms and both need a missing parent directory
// in the same scratch mount: the first to create it sets its mode. A modifier (--perms,
// --size) matters only to the option right after it; moves() keeps every move that
// changes that pairing.
class Interaction {
 public:
  explicit Interaction(const std::vector<Option>& argv) {
    bool root_bound = false;
    for (size_t i = 0; i < argv.size(); ++i) {
      const Option& o = argv[i];
      if ((o[0] == "--tmpfs" || o[0] == "--dev" || o[0] == "--proc") && o.size() > 1)
        if (auto p = SymbolicPath::parse(o[1])) scratch_.push_back(*p);
      if (o.size() > 2 && o[2] == "/") root_bound = true;
      if (i > 0 && is_modifier(argv[i - 1])) with_perms_.insert(o);
    }
    // bwrap's own root is a tmpfs until something is mounted over "/".
    if (!root_bound) scratch_.push_back(SymbolicPath{});
  }

  bool operator()(const Option& a, const Option& b) const {
    if (is_modifier(a) || is_modifier(b)) return false;
    const bool perms = with_perms_.contains(a) || with_perms_.contains(b);
    for (const auto& p : paths_of(a))
      for (const auto& q : paths_of(b)) {
        if (p.contains(q) || q.contains(p)) return true;
        if (perms && share_scratch_parent(p, q)) return true;
      }
    return false;
  }

 private:
  bool share_scratch_parent(const SymbolicPath& p, const SymbolicPath& q) const {
    for (auto a = p.parent(); a; a = a->parent())
      if (a->contains(q))
        for (const auto& s : scratch_)
          if (s.contains(*a)) return true;
    return false;
  }

  std::vector<SymbolicPath> scratch_;
  std::set<Option> with_perms_;  // options a modifier applies to
};

const Option& first(const Option& o) { return o; }
const Option& first(const std::vector<Option>& group) { return group.front(); }
const Option& last(const Option& o) { return o; }
const Option& last(const std::vector<Option>& group) { return group.back(); }

// All moves of one element to every other position, or with `commute` one move per
// distinct outcome: a move past options it does not interact with yields the same mount
// table, so such moves are one mutant, told apart by the interacting options they pass,
// the modifier they land behind, and, for a modifier, the option it lands in front of
// (which it now modifies, or makes bwrap refuse). The large golden policy has 400
// options, so 160 000 moves, nearly all of them repeats.
template <class Unit, class Interact>
std::vector<size_t> move_key(const std::vector<Unit>& units, size_t i, size_t k,
                             Interact&& interacts) {
  const size_t kBehind = size_t{1} << 62, kInFront = size_t{1} << 61;
  // The neighbours at the new place, as indices into `units`.
  auto original = [&](size_t j) { return j < i ? j : j + 1; };
  std::vector<size_t> key;
  if (is_modifier(last(units[i]))) {
    const bool modifies = k + 1 < units.size() && (first(units[original(k)])[0] == "--tmpfs" ||
                                                   first(units[original(k)])[0] == "--dir");
    key.push_back(kInFront | (modifies ? original(k) : 0));
    return key;
  }
  for (size_t j = std::min(i, k); j <= std::max(i, k); ++j)
    if (j != i && interacts(units[i], units[j])) key.push_back(j);
  if (k > 0 && is_modifier(last(units[original(k - 1)]))) key.push_back(kBehind | original(k - 1));
  return key;
}

template <class Unit, class Interact>
std::vector<std::pair<size_t, size_t>> moves(const std::vector<Unit>& units, bool commute,
                                             Interact&& interacts) {
  std::vector<std::pair<size_t, size_t>> out;
  std::set<std::pair<size_t, std::vector<size_t>>> seen;
  for (size_t i = 0; i < units.size(); ++i)
    for (size_t k = 0; k < units.size(); ++k)
      if (k != i && (!commute || seen.insert({i, move_key(units, i, k, interacts)}).second))
        out.emplace_back(i, k);
  return out;
}

std::vector<Option> moved(std::vector<Option> argv, size_t i, size_t k) {
  Option o = argv[i];
  argv.erase(argv.begin() + static_cast<long>(i));
  argv.insert(argv.begin() + static_cast<long>(k), o);
  return argv;
}

std::vector<Mutant> mutants(const std::vector<Option>& argv, bool commute) {
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
  const Interaction interact(argv);
  auto group_interacts = [&](const std::vector<Option>& a, const std::vector<Option>& b) {
    for (const auto& x : a)
      for (const auto& y : b)
        if (interact(x, y)) return true;
    return false;
  };
  for (auto [i, k] : moves(units, commute, group_interacts)) {
    if (units[i].size() == 1) continue;
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
  for (auto [i, k] : moves(argv, commute, interact))
    out.push_back({"move '" + join(argv[i]) + "' to position " + std::to_string(k),
                   test::render(moved(argv, i, k))});
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
  const PathTable& paths = *argv.paths;
  std::vector<SymbolicPath> present;
  for (const auto& op : argv.ops)
    if (op.source && !op.try_source) present.push_back(paths.path(*op.source));
  for (const auto* list : {&policy.read, &policy.write, &policy.protect, &policy.deny, &policy.pin})
    for (const auto& rp : *list)
      if (rp.kind == ir::HostKind::Directory || rp.kind == ir::HostKind::File)
        present.push_back(*SymbolicPath::parse(rp.path));
  std::vector<MountTable> out;
  for (bool skip : {false, true}) {
    auto applied = [&](size_t i) {
      if (!skip) return true;
      for (const auto& p : present)
        if (paths.path(*argv.ops[i].source).contains(p)) return true;
      return false;
    };
    auto r = MountTable::replay(argv, applied);
    if (r) out.push_back(std::move(*r));
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

BOOST_AUTO_TEST_SUITE(verify_bwrap_mutants, *boost::unit_test::label("mutation"))

void check_mutants(const ir::Resolved& policy, const std::vector<Option>& argv,
                   const std::string& name, size_t min_mutants = 500, bool commute = false) {
  const auto original = *parse_bwrap_args(test::render(argv));
  BOOST_TEST_REQUIRE(verify_bwrap(policy, test::render(argv)).empty());

  // The oracle looks wider than the verifier's probes: every destination of either
  // artifact, its parent and a child, on top of the probe set.
  std::set<SymbolicPath> base;
  Intent intent(policy);
  for (const auto& p : generate_probes(intent)) base.insert(p.path());
  for (const auto& op : original.ops) base.insert(original.paths->path(op.dest));

  size_t killed = 0, harmless = 0;
  std::vector<std::string> harmless_list;
  const auto all = mutants(argv, commute);
  for (const auto& m : all) {
    const auto findings = verify_bwrap(policy, m.text);
    test::dump_mutant("bwrap " + name, m.description, test::finding_texts(findings));
    if (!findings.empty()) {
      ++killed;
      continue;
    }
    auto parsed = parse_bwrap_args(m.text);
    BOOST_TEST_REQUIRE(parsed.has_value(), m.description + ": unparsable yet verified");
    std::set<SymbolicPath> paths = base;
    for (const auto& op : parsed->ops) paths.insert(parsed->paths->path(op.dest));
    std::vector<SymbolicPath> wide;
    for (const auto& p : paths) {
      wide.push_back(p);
      wide.push_back(p.child("zpolicy-oracle"));
      if (auto parent = p.parent()) wide.push_back(*parent);
    }
    std::string more = grants_more(policy, original, *parsed, wide);
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

// The same over the artifacts the golden policies really compile to; `large` with its
// moves reduced to the distinct ones (see moves()).
BOOST_AUTO_TEST_CASE(golden_policies_every_mutant_is_killed_or_grants_nothing_more) {
  for (const auto& g : test::golden_compiles(Target::Linux)) {
    std::vector<Option> argv;
    std::istringstream lines(g.artifact("bwrap.args"));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("--", 0) == 0 || argv.empty()) argv.push_back({});
      argv.back().push_back(line);
    }
    check_mutants(g.compiled.resolved, argv, g.name, 50, g.name == "large");
  }
}

// The reduction of moves rests on this: moves with the same key are the same mutant to
// the verifier. Checked on every move of policies small enough to try them all.
BOOST_AUTO_TEST_CASE(moves_with_the_same_key_verify_alike) {
  auto check = [](const ir::Resolved& policy, const std::vector<Option>& argv,
                  const std::string& name) {
    const Interaction interact(argv);
    std::map<std::pair<size_t, std::vector<size_t>>, bool> verdict;
    size_t moves_tried = 0;
    for (auto [i, k] : moves(argv, false, interact)) {
      ++moves_tried;
      const bool passes = verify_bwrap(policy, test::render(moved(argv, i, k))).empty();
      auto [it, fresh] = verdict.emplace(std::make_pair(i, move_key(argv, i, k, interact)), passes);
      BOOST_TEST((fresh || it->second == passes), name << ": move " << i << " to " << k);
    }
    BOOST_TEST_MESSAGE(name << ": " << moves_tried << " moves, " << verdict.size() << " distinct");
    BOOST_TEST(verdict.size() < moves_tried);
  };
  check(test::workspace_policy(), test::workspace_argv(), "workspace-write portable");
  for (const auto& g : test::golden_compiles(Target::Linux)) {
    if (g.name == "large") continue;
    std::vector<Option> argv;
    std::istringstream lines(g.artifact("bwrap.args"));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("--", 0) == 0 || argv.empty()) argv.push_back({});
      argv.back().push_back(line);
    }
    check(g.compiled.resolved, argv, g.name);
  }
}

BOOST_AUTO_TEST_SUITE_END()
