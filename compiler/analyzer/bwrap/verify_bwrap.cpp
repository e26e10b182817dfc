#include "compiler/analyzer/bwrap/verify_bwrap.hpp"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/kernel_state.hpp"
#include "compiler/analyzer/bwrap/mount_table.hpp"
#include "compiler/analyzer/bwrap/regions.hpp"
#include "compiler/analyzer/probes.hpp"
#include "ir/path.hpp"

namespace zpolicy::compiler {

namespace {

constexpr const char* kTarget = "linux";
constexpr const char* kArtifact = "bwrap.args";
// Each -try bind whose source may be missing doubles the mount tables to check; past
// this many the artifact is refused rather than checked partially.
constexpr size_t kMaxUncertainOps = 8;
// Every table is replayed and proven over the whole argv, and all are kept together: the
// argv text of all tables together is bounded as one argv's is (issue 19's 1 MiB, which
// one table answers within budget; Z19-5).
constexpr size_t kMaxScenarioBytes = size_t{1} << 20;
// Region findings reported in full; a grant in one region usually shows in many (every
// directory below a writable bind of "/"), and the rest are counted.
constexpr size_t kMaxRegionFindings = 32;

ir::SourceLoc builtin() { return ir::SourceLoc{ir::kBuiltinFile, 0, 0}; }

// An artifact outside what the verifier reads, at the place `error` names.
ir::Diagnostic malformed(const ir::Diagnostic& error) {
  return ir::finding(kTarget, "malformed-artifact", error.loc, error.loc.file,
                     "a bwrap argv in the subset zpolicy verifies", error.message);
}

ir::Diagnostic malformed(int line, std::string message) {
  return malformed(ir::error_at({kArtifact, line, 1}, std::move(message)));
}

// An operation outside the verified subset; `text` is the operation as quoted.
ir::Diagnostic outside_subset(int line, std::string_view text, const std::string& why) {
  return malformed(line,
                   std::string(text) + ": " + why + "; outside the subset zpolicy verifies");
}

// The first of `ops` that `refused(op)` names a reason for (not empty), counting the
// others: an argv may repeat one a million times. `say(reason)` is what follows the
// quoted operation.
template <class Refused, class Say>
void report_first(const std::vector<BwrapOp>& ops, Refused&& refused, Say&& say,
                  std::vector<ir::Diagnostic>& out) {
  const auto is_refused = [&](const BwrapOp& op) { return !refused(op).empty(); };
  const auto first = std::find_if(ops.begin(), ops.end(), is_refused);
  if (first == ops.end()) return;
  const auto more = std::count_if(first + 1, ops.end(), is_refused);
  // Quoted briefly: a hostile option may be a megabyte long.
  std::string message = "'" + std::string(first->text.substr(0, 160)) +
                        (first->text.size() > 160 ? "...'" : "'") + say(refused(*first));
  if (more > 0) message += "; " + std::to_string(more) + " more such operations";
  out.push_back(malformed(first->line, std::move(message)));
}

ir::Diagnostic hardening(std::string what, std::string expected, std::string actual) {
  return ir::finding(kTarget, "missing-hardening", builtin(), std::move(what), std::move(expected),
                     std::move(actual));
}

// What holds at a bind source in every run of the argv that gets as far as its bind: a
// plain bind's source exists (bwrap aborts otherwise), and so does everything above it.
// The resolved policy's kinds are facts of the moment it was resolved, and the host
// changes them between runs of one argv (`rm -rf node_modules` before a reinstall,
// `ssh-keygen` making ~/.ssh): where a plain bind then aborts, a -try bind of the same
// path runs another sandbox, in which the sandbox made node_modules or wrote ~/.ssh (red
// team A29B-2). So they decide no -try bind; they still say where a plain bind aborts on
// this host.
class SourceFacts {
 public:
  SourceFacts(const Intent& intent, const std::vector<BwrapOp>& ops)
      : paths_(intent.paths()), missing_(intent.paths()) {
    PathMap<bool> seen(paths_);
    for (const auto* roots :
         {&intent.read(), &intent.write(), &intent.protect(), &intent.deny(), &intent.pin()})
      for (const auto& r : *roots) {
        if (seen.find(r.id)) continue;  // the first list to name a path says its kind
        seen.insert(r.id, true);
        if (r.kind == ir::HostKind::Missing) missing_.insert(r.id, true);
      }
    for (const auto& op : ops)
      if (op.source && !op.try_source) required_.push_back(*op.source);
  }

  // Whether the resolved policy says the host lacks `src`.
  bool known_missing(PathTable::Id src) const {
    return missing_.deepest_containing(src) != nullptr;
  }

  // Whether every run that reaches a bind of `src` finds it.
  bool always_exists(PathTable::Id src) const {
    return std::any_of(required_.begin(), required_.end(),
                       [&](PathTable::Id req) { return paths_.contains(src, req); });
  }

 private:
  PathTable& paths_;
  PathMap<bool> missing_;  // the policy's paths the host lacks
  std::vector<PathTable::Id> required_;
};

struct Scenario {
  MountTable table;
  std::vector<std::string> assumptions;  // the -try binds assumed skipped
};

// Whether the -try binds find their sources: `applied` says it of each op every run
// applies (every op that is no -try bind, and each -try bind a plain bind's source
// below it makes find its own), `uncertain` lists the other -try binds.
struct TryBinds {
  std::vector<bool> applied;
  std::vector<size_t> uncertain;
};

TryBinds try_binds(const std::vector<BwrapOp>& ops, const SourceFacts& facts) {
  TryBinds out{std::vector<bool>(ops.size(), true), {}};
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].try_source && !facts.always_exists(*ops[i].source)) out.uncertain.push_back(i);
  return out;
}

// Whether the -try binds in `uncertain` can find their sources as `applied` says: not
// when a skipped source contains an applied one (that one exists, so its ancestors do).
bool possible(const BwrapArgv& argv, const std::vector<size_t>& uncertain,
              const std::vector<bool>& applied) {
  for (size_t i : uncertain)
    for (size_t j : uncertain)
      if (!applied[i] && applied[j] &&
          argv.paths->contains(*argv.ops[i].source, *argv.ops[j].source))
        return false;
  return true;
}

// One mount table per possible combination of the uncertain -try binds finding their
// source or not; the first, every source present, is the case the artifact exists for.
std::vector<Scenario> scenarios(const BwrapArgv& argv, const TryBinds& known,
                                std::vector<ir::Diagnostic>& findings) {
  const std::vector<BwrapOp>& ops = argv.ops;
  const std::vector<size_t>& uncertain = known.uncertain;
  if (uncertain.size() > kMaxUncertainOps) {
    findings.push_back(malformed(ops[uncertain[kMaxUncertainOps]].line,
                                 std::to_string(uncertain.size()) +
                                     " -try binds with sources of unknown existence; at most " +
                                     std::to_string(kMaxUncertainOps) + " can be verified"));
    return {};
  }
  std::vector<std::vector<bool>> runs;  // what each possible run applies; the first applies all
  for (size_t mask = 0; mask < size_t{1} << uncertain.size(); ++mask) {
    std::vector<bool> applied = known.applied;
    for (size_t b = 0; b < uncertain.size(); ++b)
      applied[uncertain[b]] = !(mask & (size_t{1} << b));
    if (possible(argv, uncertain, applied)) runs.push_back(std::move(applied));
  }
  const size_t tables = runs.size();
  size_t bytes = 0;
  for (const BwrapOp& op : ops) bytes += op.text.size() + 1;
  if (tables > 1 && tables * bytes > kMaxScenarioBytes) {
    findings.push_back(malformed(
        ops[uncertain.front()].line,
        std::to_string(uncertain.size()) + " -try binds with sources of unknown existence make " +
            std::to_string(tables) + " mount tables of " + std::to_string(bytes) +
            " bytes of options each to verify; at most " + std::to_string(kMaxScenarioBytes) +
            " bytes in all can be verified"));
    return {};
  }
  std::vector<Scenario> out;
  for (const std::vector<bool>& applied : runs) {
    auto replayed = MountTable::replay(argv, [&](size_t i) { return applied[i]; });
    if (!replayed) {
      // bwrap aborting is fail-closed; it is a defect only when it happens with every
      // source present.
      if (&applied == &runs.front()) findings.push_back(malformed(replayed.error()));
      continue;
    }
    Scenario s{std::move(*replayed), {}};
    for (size_t i : uncertain)
      if (!applied[i])
        s.assumptions.push_back("assuming the source of bwrap.args:" + std::to_string(ops[i].line) +
                                " (" + std::string(ops[i].text) +
                                ") is missing, so bwrap skips it");
    out.push_back(std::move(s));
  }
  return out;
}

// Host device nodes, the host's /proc and the host's root bound elsewhere are outside
// the verified subset. The model knows no device but the /dev/null zpolicy binds over a
// denied file (nodev, so not even that opens); `--dev-bind` makes device nodes usable. A
// source under /proc is resolved by bwrap in the host's namespace, where
// /proc/self/root/etc/shadow is /etc/shadow and /proc/N/cwd leads anywhere, and its
// entries are the host's processes and kernel state (invariants 5 and 10). A bind is
// recursive, so the host's root bound anywhere but at "/" shows the host's /proc below it.
void check_devices(const BwrapArgv& argv, std::vector<ir::Diagnostic>& out) {
  PathTable& paths = *argv.paths;
  const PathTable::Id dev = *paths.parse("/dev");
  const PathTable::Id null = *paths.parse("/dev/null");
  const PathTable::Id proc = *paths.parse("/proc");
  for (const BwrapOp& op : argv.ops) {
    const char* why = nullptr;
    if (op.kind == BwrapOpKind::DevBind)
      why = "--dev-bind lets the sandbox open host device nodes";
    else if (op.source && *op.source != null && paths.contains(dev, *op.source))
      why = "binds the host's device tree (only /dev/null masks a file)";
    else if (op.source && paths.contains(proc, *op.source))
      why = "binds from the host's /proc, whose links lead anywhere on the host "
            "(/proc/self/root is its root)";
    else if (op.source == PathTable::kRoot && op.dest != PathTable::kRoot)
      why = "binds the host's root elsewhere, with the host's /proc below it";
    if (why) out.push_back(outside_subset(op.line, op.text, why));
  }
}

// `--remount-ro D` remounts the one mount at D, and a bind is recursive: the host's
// filesystems mounted below a writable bind's source (a separate /home, /var/tmp, /sys)
// stay writable when its root is remounted (Z19-4). The emitter remounts only what bwrap
// mounts itself (--proc, the tmpfs masks).
void check_remounts(const BwrapArgv& argv, std::vector<ir::Diagnostic>& out) {
  std::unordered_set<PathTable::Id> writable_binds;
  for (const BwrapOp& op : argv.ops) {
    if (op.source && op.kind != BwrapOpKind::RoBind) writable_binds.insert(op.dest);
    if (op.kind == BwrapOpKind::RemountRo && writable_binds.count(op.dest)) {
      out.push_back(outside_subset(op.line, op.text.substr(0, 160),
                                   "remounts a writable bind's root only; the host's "
                                   "filesystems below its source stay writable"));
      return;
    }
  }
}

// The symbolic root `id` lies under ("${HOME}"), or "" for a host path.
std::string_view variable_of(const PathTable& paths, PathTable::Id id) {
  if (id == PathTable::kRoot) return {};
  while (paths.up(id) != PathTable::kRoot) id = paths.up(id);
  return paths.parent(id) ? std::string_view() : paths.name(id);
}

// A ${VAR} is no path to bwrap but a relative one, which it resolves against its own
// working directory, where a link of that name leads anywhere (Z19-3). A bound artifact
// names no variable; a portable one only those of the policy language, which whoever
// binds it substitutes.
void check_variables(const ir::Resolved& resolved, const BwrapArgv& argv,
                     std::vector<ir::Diagnostic>& out) {
  const PathTable& paths = *argv.paths;
  report_first(
      argv.ops,
      [&](const BwrapOp& op) -> std::string_view {  // the variable it names, if refused
        const std::array<std::string_view, 3> named = {
            variable_of(paths, op.dest), op.source ? variable_of(paths, *op.source) : "",
            op.link_target.starts_with("${")
                ? op.link_target.substr(0, op.link_target.find('}') + 1)
                : ""};
        for (const std::string_view v : named) {
          const bool known = v == ir::variable_name(ir::PathRoot::Workspace) ||
                             v == ir::variable_name(ir::PathRoot::Home) ||
                             v == ir::variable_name(ir::PathRoot::Tmpdir);
          if (!v.empty() && (!resolved.portable || !known)) return v;
        }
        return {};
      },
      [&](std::string_view v) {
        return ": " + std::string(v) +
               (resolved.portable
                    ? " is none of the policy's variables (${WORKSPACE}, ${HOME}, ${TMPDIR})"
                    : " is no variable in a bound artifact") +
               "; bwrap reads the path as relative to its working directory, outside the subset "
               "zpolicy verifies";
      },
      out);
}

// bwrap's own creations and mode changes act with its privileges, on the host under a
// writable bind: `--chmod 4755` makes a host file setuid, a --dir or --symlink placed
// before a protected path's read-only bind lands in the host's protected directory
// (R3-V2, R3-V3), and a private tmpfs over a read root hides what the policy grants
// (R3-V4). So only the emitter's are in the subset: a --symlink at the name of each
// readable root reached through a link (check_read_links judges its target), a --tmpfs
// at a private /tmp and at each deny root that is no file; --chmod and --dir never.
void check_creations(const ir::Resolved& intent, const BwrapArgv& argv, PathTable& paths,
                     std::vector<ir::Diagnostic>& out) {
  std::unordered_set<PathTable::Id> links, tmpfs;
  auto add = [&](std::unordered_set<PathTable::Id>& places, const std::string& path) {
    if (auto id = paths.parse(path)) places.insert(*id);
  };
  for (const auto& l : intent.read_links) add(links, l.link);
  if (intent.private_tmp) add(tmpfs, "/tmp");
  for (const auto& d : intent.deny)
    if (d.kind != ir::HostKind::File) add(tmpfs, d.path);
  report_first(
      argv.ops,
      [&](const BwrapOp& op) -> std::string_view {
        if (op.kind == BwrapOpKind::Symlink && !links.contains(op.dest))
          return "a symlink that is no readable root's name";
        if (op.kind == BwrapOpKind::Tmpfs && !tmpfs.contains(op.dest))
          return "a private tmpfs where the policy gives neither private /tmp nor a deny root";
        if (op.kind == BwrapOpKind::Chmod || op.kind == BwrapOpKind::Dir)
          return "bwrap creates or changes a mode with its own privileges, on the host under a bind";
        return {};
      },
      [](std::string_view why) {
        return " is outside the subset zpolicy verifies (" + std::string(why) + ")";
      },
      out);
}

void check_flags(const ir::Resolved& intent, const BwrapFlags& f,
                 std::vector<ir::Diagnostic>& out) {
  struct Required {
    bool present;
    const char* option;
    const char* why;
  };
  const Required required[] = {
      {f.new_session, "--new-session", "no terminal input injection (TIOCSTI)"},
      {f.die_with_parent, "--die-with-parent", "the sandbox dies with its runner"},
      {f.unshare_user, "--unshare-user", "a user namespace (-try may be skipped)"},
      {f.unshare_pid, "--unshare-pid", "host processes invisible"},
      {f.unshare_ipc, "--unshare-ipc", "no host IPC"},
      {f.unshare_uts, "--unshare-uts", "no host hostname changes"},
      {f.unshare_cgroup || f.unshare_cgroup_try, "--unshare-cgroup-try",
       "host cgroup paths hidden"},
      {f.cap_drop_all, "--cap-drop ALL", "no capabilities, even when run as root"},
      {f.disable_userns, "--disable-userns", "no nested user namespace to remount from"},
      {f.seccomp_fd.has_value(), "--seccomp FD", "the syscall filter is loaded"},
  };
  for (const auto& r : required)
    if (!r.present) out.push_back(hardening(r.option, std::string("present: ") + r.why, "absent"));
  bool want_net_ns = intent.network != ir::Network::Full;
  if (want_net_ns && !f.unshare_net) {
    ir::Diagnostic missing =
        hardening("--unshare-net", std::string("present: network ") + ir::to_string(intent.network),
                  "absent: the host network is reachable");
    missing.loc = intent.network_loc;
    out.push_back(std::move(missing));
  }
  if (!want_net_ns && f.unshare_net)
    out.push_back(ir::finding(kTarget, "missing-allow", intent.network_loc, "--unshare-net",
                              "absent: network full", "present: no network"));
  if (!intent.cwd.empty()) {
    auto cwd = SymbolicPath::parse(intent.cwd, path_spelling(intent));
    if (!f.chdir || !cwd || !(*f.chdir == *cwd))
      out.push_back(ir::finding(kTarget, "missing-allow", builtin(), "--chdir",
                                "--chdir " + intent.cwd,
                                f.chdir ? "--chdir " + f.chdir->str() : "absent"));
  }
}

void check_mounts(const ir::Resolved& intent, std::vector<Scenario>& tables,
                  std::vector<ir::Diagnostic>& out) {
  struct Required {
    const char* path;
    MountTable::MountKind kind;
    const char* option;
  };
  std::vector<Required> required = {{"/proc", MountTable::MountKind::Proc, "--proc /proc"},
                                    {"/dev", MountTable::MountKind::Dev, "--dev /dev"}};
  if (intent.private_tmp)
    required.push_back({"/tmp", MountTable::MountKind::Tmpfs, "--tmpfs /tmp"});
  for (const auto& r : required) {
    const auto path = *SymbolicPath::parse(r.path);
    for (auto& s : tables) {
      const auto* m = s.table.mount_at(path);
      if (m && m->kind == r.kind) continue;
      ir::Diagnostic f = hardening(
          r.option, std::string("the sandbox's own ") + r.path,
          m ? "a different mount: " + std::string(m->text) : "no mount at " + std::string(r.path));
      // A deny root over it is the policy line that took it away.
      for (const auto& d : intent.deny)
        if (auto dp = SymbolicPath::parse(d.path, path_spelling(intent));
            dp && dp->contains(path)) {
          f.loc = d.loc;
          f.trace.push_back("deny root " + d.path + " masks " + r.path);
          break;
        }
      f.trace.insert(f.trace.end(), s.assumptions.begin(), s.assumptions.end());
      out.push_back(std::move(f));
      break;
    }
  }
}

// A readable root named through a symlink must keep its name: reading at the name
// reaches the canonical root on the host, or programs that use the name (the ELF
// interpreter under /lib64) do not start.
void check_read_links(const ir::Resolved& intent, std::vector<Scenario>& tables, PathTable& paths,
                      std::vector<ir::Diagnostic>& out) {
  for (const auto& l : intent.read_links) {
    auto link = SymbolicPath::parse(l.link, paths.spelling());
    auto target = SymbolicPath::parse(l.target, paths.spelling());
    if (!link || !target) continue;  // reported as unparsable intent paths
    const PathTable::Id target_id = paths.intern(*target);
    for (auto& s : tables) {
      AccessResult r = s.table.access(*link, FsOp::Read, true);
      if (r.outcome == Outcome::Host && r.host == target_id) continue;
      ir::Diagnostic f = ir::finding(kTarget, "missing-allow", l.loc, "read " + l.link,
                                     "the readable root " + l.target + " under its name " + l.link,
                                     to_string(r.outcome), std::move(r.trace));
      f.trace.insert(f.trace.end(), s.assumptions.begin(), s.assumptions.end());
      out.push_back(std::move(f));
      break;
    }
  }
}

bool satisfies(Expect e, const MountTable::Reach& r, PathTable::Id path) {
  const Outcome o = r.outcome;
  switch (e) {
    case Expect::Allow:
      return o == Outcome::Host && r.host == path;
    case Expect::Deny:
      return o != Outcome::Host;
    case Expect::DenyStrict:
      return o == Outcome::Denied;
    case Expect::Either:
      return true;
  }
  return false;
}

// A deny root the host lacks (the resolved policy says Missing) cannot be masked under
// a read-only bind (bwrap cannot create the mount point), and needs no mask when the
// sandbox cannot bring it into existence either: there is nothing to read at it. A
// file the host itself creates there during the run is outside this guarantee.
bool absent_and_uncreatable(const Intent& intent, MountTable& table, PathTable::Id path) {
  for (const auto& d : intent.deny())
    if (d.kind == ir::HostKind::Missing && intent.paths().contains(d.id, path))
      return table.host_access(d.id, FsOp::Create, false).outcome == Outcome::Denied;
  return false;
}

// A grant found: in which table, for which operation, through which mount.
using Grant = std::tuple<size_t, FsOp, size_t>;

struct Found {
  PathTable::Id path;
  FsOp op;
  ir::Diagnostic finding;
};

// The findings by path, then operation: the order a reader scans a report in.
void append_sorted(std::vector<Found>& found, const PathTable& paths,
                   std::vector<ir::Diagnostic>& out) {
  std::sort(found.begin(), found.end(), [&](const Found& a, const Found& b) {
    if (a.path != b.path) return paths.less(a.path, b.path);
    return a.op < b.op;
  });
  for (auto& f : found) out.push_back(std::move(f.finding));
}

// The finding for `op` at `path` failing `expect` in table `s`, explained by `r`.
ir::Diagnostic probe_finding(Intent& intent, PathTable::Id path, FsOp op, Expect expect,
                             const Scenario& s, const AccessResult& r, std::string first_line) {
  const Expectation exp = intent.expect(path, op);
  ir::Diagnostic f =
      ir::finding(kTarget, expect == Expect::Allow ? "missing-allow" : "dropped-deny", exp.rule,
                  std::string(to_string(op)) + " " + intent.paths().path(path).str(),
                  std::string(to_string(expect)) + " (" + exp.reason + ")", to_string(r.outcome));
  f.trace.push_back(std::move(first_line));
  f.trace.insert(f.trace.end(), s.assumptions.begin(), s.assumptions.end());
  f.trace.insert(f.trace.end(), r.trace.begin(), r.trace.end());
  return f;
}

// The operations at `id` that fail their expectation, each once, in the first table it
// fails in: fail(t, op, expect, reach), the reach untraced. An allow holds only at the
// path itself (the same content under another name is no use to a command); a deny must
// hold wherever the host object shows up.
template <class Fail>
void each_failure(Intent& intent, std::vector<Scenario>& tables, PathTable::Id id,
                  const std::array<Expect, 4>& expected, Fail&& fail) {
  std::array<bool, kAllFsOps.size()> reported{};
  for (size_t t = 0; t < tables.size(); ++t) {
    const MountTable::Reaches reached = tables[t].table.reach_all(id);
    for (FsOp op : kAllFsOps) {
      const size_t i = static_cast<size_t>(op);
      const Expect expect = expected[i];
      const MountTable::Reach& r =
          expect == Expect::Allow ? reached.at_path[i] : reached.of_host[i];
      if (reported[i] || satisfies(expect, r, id)) continue;
      if (op == FsOp::Read && absent_and_uncreatable(intent, tables[t].table, id)) continue;
      reported[i] = true;
      fail(t, op, expect, r);
    }
  }
}

// Every operation of every probe against every table; traces are built only for the
// operations that fail. `probed` gets the probes' ids, `granted` the grants reported.
void check_probes(Intent& intent, std::vector<Scenario>& tables, PathMap<bool>& probed,
                  std::set<Grant>& granted, std::vector<ir::Diagnostic>& out) {
  std::vector<Found> found;
  for_each_probe(intent, [&](const Probe& probe) {
    probed.insert(probe.id, true);
    each_failure(intent, tables, probe.id, probe.expected,
                 [&](size_t t, FsOp op, Expect expect, const MountTable::Reach& r) {
                   MountTable& table = tables[t].table;
                   const bool at_path = expect == Expect::Allow;
                   if (!at_path) granted.emplace(t, op, r.mount);
                   const AccessResult traced = at_path ? table.access(probe.id, op, true)
                                                       : table.host_access(probe.id, op, true);
                   found.push_back({probe.id, op,
                                    probe_finding(intent, probe.id, op, expect, tables[t], traced,
                                                  "probe: " + probe.role())});
                 });
  });
  append_sorted(found, intent.paths(), out);
}

// The paths the regions are cut at besides the policy's own: /tmp, and both ends of
// every readable root named through a link.
std::vector<PathTable::Id> region_cuts(const ir::Resolved& resolved, PathTable& paths) {
  std::vector<PathTable::Id> more{*paths.parse("/tmp")};
  for (const auto& l : resolved.read_links)
    for (const auto* text : {&l.link, &l.target})
      if (auto id = paths.parse(*text)) more.push_back(*id);
  return more;
}

// Whether a probe judged `region` already. The cell below a path is every path there
// that nothing names; the child a probe of that path made (p/zpolicy-probe) is one, and
// its grants are reported already. `named` holds the paths the regions so far name.
bool probed_already(const Region& region, const PathTable& paths, const PathMap<bool>& probed,
                    const PathMap<bool>& named) {
  if (probed.find(region.id)) return true;
  if (region.kind != Region::Kind::Below) return false;
  const auto child = paths.find_child(region.named, "zpolicy-probe");
  return child && probed.find(*child) && !named.find(*child);
}

// What a region must not grant: the policy's verdicts at it, except that a missing
// allow fails closed (the policy's own probes look for those).
std::array<Expect, 4> region_expectations(Intent& intent, PathTable::Id id) {
  std::array<Expect, 4> expected = intent.verdicts(id);
  for (Expect& e : expected)
    if (e == Expect::Allow) e = Expect::Either;
  return expected;
}

// The region proof (docs/verify.md): every cell of the common refinement of the mount
// tables and the intent that the policy net did not probe, for the grants the policy
// does not ask for. The first kMaxRegionFindings are reported in full, sorted; the rest
// are counted.
void check_regions(const ir::Resolved& resolved, const BwrapArgv& argv, Intent& intent,
                   std::vector<Scenario>& tables, const PathMap<bool>& probed,
                   std::set<Grant>& granted, std::vector<ir::Diagnostic>& out) {
  PathTable& paths = intent.paths();
  const std::vector<PathTable::Id> more = region_cuts(resolved, paths);
  std::vector<Found> found;
  size_t unlisted = 0;
  PathMap<bool> named(paths);  // the paths the regions name, and their ancestors
  for_each_region(argv, intent, more, [&](const Region& region) {
    if (region.kind != Region::Kind::Below) named.insert(region.id, true);
    if (probed_already(region, paths, probed, named)) return;
    each_failure(intent, tables, region.id, region_expectations(intent, region.id),
                 [&](size_t t, FsOp op, Expect expect, const MountTable::Reach& r) {
                   // One finding per grant: the same mount granting the same operation
                   // elsewhere was reported already.
                   if (!granted.emplace(t, op, r.mount).second) return;
                   if (found.size() == kMaxRegionFindings) {
                     ++unlisted;
                     return;
                   }
                   const AccessResult traced = tables[t].table.host_access(region.id, op, true);
                   found.push_back({region.id, op,
                                    probe_finding(intent, region.id, op, expect, tables[t],
                                                  traced, region.describe(paths))});
                 });
  });
  append_sorted(found, paths, out);
  if (unlisted > 0)
    out.push_back(ir::finding(kTarget, "dropped-deny", ir::SourceLoc{kArtifact, 0, 0},
                              "more regions", "no access the policy does not grant",
                              std::to_string(unlisted) + " more grants not listed"));
}

// bwrap sets the new root up from a root of its own, a tmpfs holding /newroot (the
// sandbox's root) and /oldroot (the host's), and looks each destination up there, through
// links made by an earlier --symlink: an absolute target leads out of /newroot, so
// `--symlink /oldroot/etc L --ro-bind /dev/null L/x` creates /etc/x on the host, where
// the model, resolving in the sandbox's root, sees scratch. The emitter names every path
// canonically, never through a link it made, so any operation whose path passes through
// a --symlink name is refused; the last component of --symlink and --dir is made, not
// followed.
void check_setup_through_links(const BwrapArgv& argv, std::vector<ir::Diagnostic>& out) {
  const PathTable& paths = *argv.paths;
  std::unordered_map<PathTable::Id, int> links;  // a --symlink's name, its line
  for (const BwrapOp& op : argv.ops) {
    const bool makes_last = op.kind == BwrapOpKind::Symlink || op.kind == BwrapOpKind::Dir;
    if (!links.empty() && !(makes_last && op.dest == PathTable::kRoot)) {
      for (PathTable::Id at = makes_last ? paths.up(op.dest) : op.dest;; at = paths.up(at)) {
        if (const auto link = links.find(at); link != links.end()) {
          out.push_back(outside_subset(
              op.line, op.text,
              "its path passes through " + paths.path(at).str() + ", the link bwrap.args:" +
                  std::to_string(link->second) +
                  " made, which bwrap follows from its own setup root (/oldroot is the host's)"));
          break;
        }
        if (at == PathTable::kRoot) break;
      }
    }
    if (op.kind == BwrapOpKind::Symlink) links.emplace(op.dest, op.line);
  }
}

// bwrap looks every bind source and destination up again on each run, through whatever
// the host holds there then: a name the sandbox may create or delete is one its command
// can replace by a link, and the next run of the same argv mounts through it (setup18:
// `--ro-bind /dev/null WS/l/x` made `D/x` outside every writable root). The emitter
// mounts only at and from names the sandbox can neither create nor delete (roots,
// protected paths, their pinned ancestors, deny roots). Asks the names from `path` up to
// (not including) `stop`, as the host objects `to_host` maps them to. Denial is
// inherited upwards except at a root of the policy, whose ancestors in a writable root
// may be free: so the walk stops at the first denied name that is no root.
template <typename ToHost>
bool way_is_replaceable(PathTable& paths, Intent& intent,
                        const std::unordered_set<PathTable::Id>& roots, const BwrapOp& op,
                        PathTable::Id path, PathTable::Id stop, const ToHost& to_host,
                        const char* what, std::vector<ir::Diagnostic>& out) {
  for (PathTable::Id at = path; at != stop && at != PathTable::kRoot; at = paths.up(at)) {
    const PathTable::Id host = to_host(at);
    const std::array<Expect, 4> verdicts = intent.verdicts(host);
    for (const FsOp fs_op : {FsOp::Create, FsOp::Delete}) {
      const Expect e = verdicts[static_cast<size_t>(fs_op)];
      if (e != Expect::Allow && e != Expect::Either) continue;
      out.push_back(outside_subset(
          op.line, op.text,
          std::string("its ") + what + " passes through " + paths.path(host).str() +
              ", which the sandbox may " + (fs_op == FsOp::Create ? "create" : "delete") +
              " and so replace by a link that bwrap follows on a later run"));
      return true;
    }
    if (!roots.count(host)) return false;
  }
  return false;
}

// Whether `op`, made inside the writable bind of `source` at `bind`, may create on the
// host a path the policy denies creating; reports it if so.
bool mount_point_made(PathTable& paths, Intent& intent,
                      const std::unordered_set<PathTable::Id>& masks, const BwrapOp& op,
                      PathTable::Id bind, PathTable::Id source, std::vector<ir::Diagnostic>& out) {
  const PathTable::Id host = paths.rebase(source, bind, op.dest);
  const bool exists = op.source && *op.source == host;
  if (exists || masks.count(host)) return false;
  PathTable::Id shallowest = op.dest;
  while (paths.up(shallowest) != bind) shallowest = paths.up(shallowest);
  for (const PathTable::Id made : {host, paths.rebase(source, bind, shallowest)}) {
    // The verdict first: the reason's text is for the finding alone.
    const Expect verdict = intent.verdicts(made)[static_cast<size_t>(FsOp::Create)];
    if (verdict != Expect::Deny && verdict != Expect::DenyStrict) continue;
    const Expectation e = intent.expect(made, FsOp::Create);
    ir::Diagnostic f = ir::finding(
        kTarget, "dropped-deny", e.rule, "create " + paths.path(made).str(),
        std::string("no access to the host object (") + e.reason + ")",
        std::string("bwrap creates it on the host if missing, as ") +
            (op.kind == BwrapOpKind::Symlink ? "" : "the mount point of ") + std::string(op.text));
    f.trace.push_back("bwrap.args:" + std::to_string(op.line) + ": " + std::string(op.text) +
                      " is made inside the writable bind at " + paths.path(bind).str());
    out.push_back(std::move(f));
    return true;
  }
  return false;
}

// Before it mounts, bwrap creates the destination, and every missing directory above it,
// in whatever is mounted there at that step; inside a writable bind that is the host's
// tree, and a later mount hiding the destination does not undo it (verify18: `--ro-bind
// /dev/null WS/.git/index.lock` before the mask of `.git` left the file on the host). A
// mount whose destination may be created where the policy denies creating it is refused,
// unless its destination exists (a bind of itself, whose source bwrap requires) or is a
// deny root, protected path or pin (the emitter's masks, which the runner's placeholders
// make exist). The intent denies creating the deepest of the paths made (the destination)
// whenever it denies any but the shallowest (the directory below the bind), so those two
// are asked. A --symlink is made the same way, and asked the same. Every name on the way
// of a source, a destination or a link's target is asked too (way_is_replaceable).
class MountPointCheck {
 public:
  MountPointCheck(const BwrapArgv& argv, Intent& intent, const TryBinds& tries,
                  std::vector<ir::Diagnostic>& out)
      : argv_(argv), paths_(*argv.paths), intent_(intent), tries_(tries), out_(out) {
    for (const auto* list : {&intent.deny(), &intent.protect(), &intent.pin()})
      for (const Intent::Root& r : *list) masks_.insert(r.id);
    for (const auto* list : {&intent.read(), &intent.write()})
      for (const Intent::Root& r : *list) roots_.insert(r.id);
    maybe_skipped_.assign(argv.ops.size(), false);
    for (size_t i : tries.uncertain) maybe_skipped_[i] = true;
  }

  void run() {
    // bwrap skips a -try bind whose source is missing before it makes the mount point.
    for (size_t step = 0; step < argv_.ops.size(); ++step)
      if (tries_.applied[step]) check_step(step);
    // A link's target is looked up whenever the sandbox reads the link, through the mounts
    // setup leaves: a replaceable name on its way lets one run decide what it shows the
    // next.
    for (const size_t step : links_) {
      const BwrapOp& op = argv_.ops[step];
      const auto target = paths_.link_destination(op.dest, op.link_target);
      if (!target) continue;  // a target outside the sandbox's paths leads nowhere it reads
      collect_above(*target, true);
      way_through_bind_is_replaceable(op, *target, "target");
    }
  }

 private:
  struct Mounted {
    size_t step;
    bool writable_host;
    bool maybe_skipped;  // a -try bind whose source the host may lack
    std::optional<PathTable::Id> source;
  };

  void check_step(size_t step) {
    const BwrapOp& op = argv_.ops[step];
    if (op.kind == BwrapOpKind::RemountRo) return remount(op.dest);
    const bool link = op.kind == BwrapOpKind::Symlink;
    if (!is_mount(op.kind) && !link) return;
    collect_above(op.dest, false);
    if (op.source && way_is_replaceable(
                         paths_, intent_, roots_, op, *op.source, PathTable::kRoot,
                         [](PathTable::Id at) { return at; }, "source", out_))
      return;
    // bwrap makes a --symlink's last component (symlink(2) follows no link there), but
    // looks its directory up like a destination's.
    if (link ? op.dest != PathTable::kRoot &&
                   way_through_bind_is_replaceable(op, paths_.up(op.dest), "link's directory")
             : way_through_bind_is_replaceable(op, op.dest, "destination"))
      return;
    for (const Mounted* under : above_) {
      if (under->writable_host && under->source &&
          mount_point_made(paths_, intent_, masks_, op, argv_.ops[under->step].dest, *under->source,
                           out_))
        break;
      if (!under->maybe_skipped) break;
    }
    if (link)
      links_.push_back(step);
    else
      mounts_[op.dest].push_back(Mounted{step, op.source && op.kind != BwrapOpKind::RoBind,
                                         maybe_skipped_[step], op.source});
  }

  // Whichever of the mounts at `dest` is applied last is the one remounted.
  void remount(PathTable::Id dest) {
    const auto m = mounts_.find(dest);
    if (m == mounts_.end()) return;
    for (auto it = m->second.rbegin(); it != m->second.rend(); ++it) {
      it->writable_host = false;
      if (!it->maybe_skipped) break;
    }
  }

  // The mounts made so far at `path`'s strict ancestors (and at `path` itself when
  // `inclusive`), latest first. The visible one is the latest applied; a -try bind that
  // may be skipped leaves the one before it visible in the runs that skip it, so each of
  // those is asked too (setup18).
  void collect_above(PathTable::Id path, bool inclusive) {
    std::vector<PathTable::Id> lineage{path};
    while (lineage.back() != PathTable::kRoot) lineage.push_back(paths_.up(lineage.back()));
    above_.clear();
    for (auto it = lineage.rbegin(); it != lineage.rend(); ++it) {
      if (!inclusive && it + 1 == lineage.rend()) break;
      if (const auto m = mounts_.find(*it); m != mounts_.end())
        for (const Mounted& mounted : m->second) above_.push_back(&mounted);
    }
    std::sort(above_.begin(), above_.end(),
              [](const Mounted* x, const Mounted* y) { return x->step > y->step; });
  }

  // Whether the way from `from` up to the visible bind passes through a name the sandbox
  // may replace, in any run; reported if so.
  bool way_through_bind_is_replaceable(const BwrapOp& op, PathTable::Id from, const char* what) {
    for (const Mounted* under : above_) {
      if (!under->source) return false;  // a tmpfs: bwrap's own, which the sandbox cannot replace
      const PathTable::Id bind = argv_.ops[under->step].dest, source = *under->source;
      if (way_is_replaceable(
              paths_, intent_, roots_, op, from, bind,
              [&](PathTable::Id at) { return paths_.rebase(source, bind, at); }, what, out_))
        return true;
      if (!under->maybe_skipped) return false;
    }
    return false;
  }

  const BwrapArgv& argv_;
  PathTable& paths_;
  Intent& intent_;
  const TryBinds& tries_;
  std::vector<ir::Diagnostic>& out_;
  std::unordered_set<PathTable::Id> masks_;  // deny roots, protected paths, pins
  std::unordered_set<PathTable::Id> roots_;  // the policy's read and write roots
  std::vector<bool> maybe_skipped_;
  // Every mount made at each destination, in order; the last that is applied is visible.
  std::unordered_map<PathTable::Id, std::vector<Mounted>> mounts_;
  std::vector<const Mounted*> above_;  // collect_above's answer
  std::vector<size_t> links_;          // the steps of --symlink, whose targets are asked last
};

// A run binds what the runner opened and checked; a path is looked up again by bwrap
// at mount time, when it may name something else (docs/run.md "Binding by descriptor").
void check_binds_by_descriptor(const BwrapArgv& argv, std::vector<ir::Diagnostic>& out) {
  for (const auto& op : argv.ops)
    if (op.source && !op.source_fd) {
      ir::Diagnostic f =
          hardening(std::string(op.text), "a bind by descriptor (--bind-fd, --ro-bind-fd)",
                    "a bind by path, resolved again when bwrap mounts it");
      f.loc = ir::SourceLoc{kArtifact, op.line, 1};
      out.push_back(std::move(f));
    }
}

// A plain bind of a source the host lacks makes bwrap abort: fail-closed, but the
// artifact never runs the command it was compiled for.
void check_sources_present(const BwrapArgv& argv, const SourceFacts& facts,
                           std::vector<ir::Diagnostic>& out) {
  for (const auto& op : argv.ops)
    if (op.source && !op.try_source && facts.known_missing(*op.source))
      out.push_back(malformed(op.line, std::string(op.text) +
                                           ": the source is missing on this host (per the resolved "
                                           "policy); bwrap would abort"));
}

}  // namespace

std::vector<ir::Diagnostic> verify_bwrap(const ir::Resolved& resolved,
                                         std::string_view bwrap_args_text,
                                         std::optional<std::string_view> bwrap_fds_text) {
  std::vector<ir::Diagnostic> findings;
  if (!ir::is_confined(resolved.mode)) return findings;
  // One table for the artifact and the intent, so that each path is interned once, read
  // as the policy's artifacts spell paths: a bound one's `${x}` is a name (H17-10).
  auto paths = std::make_shared<PathTable>(path_spelling(resolved));
  auto parsed = parse_bwrap_args(bwrap_args_text, paths, bwrap_fds_text);
  if (!parsed) {
    findings.push_back(malformed(parsed.error()));
    return findings;
  }
  const BwrapArgv& argv = *parsed;
  if (bwrap_fds_text) check_binds_by_descriptor(argv, findings);
  Intent intent(resolved, paths);
  for (const auto& p : intent.unparsable())
    findings.push_back(ir::finding(kTarget, "malformed-artifact", p.loc, "intent path " + p.path,
                                   "an absolute or ${VAR} path", "cannot be evaluated"));
  check_flags(resolved, argv.flags, findings);
  const SourceFacts facts(intent, argv.ops);
  const TryBinds tries = try_binds(argv.ops, facts);
  MountPointCheck(argv, intent, tries, findings).run();
  check_devices(argv, findings);
  check_variables(resolved, argv, findings);
  check_remounts(argv, findings);
  check_setup_through_links(argv, findings);
  const size_t before_creations = findings.size();
  check_creations(resolved, argv, *paths, findings);
  if (findings.size() != before_creations) return findings;
  check_sources_present(argv, facts, findings);
  auto tables = scenarios(argv, tries, findings);
  if (tables.empty()) return findings;
  check_mounts(resolved, tables, findings);
  check_read_links(resolved, tables, *paths, findings);
  PathMap<bool> probed(*paths);
  std::set<Grant> granted;
  check_probes(intent, tables, probed, granted, findings);
  check_regions(resolved, argv, intent, tables, probed, granted, findings);
  // After the probes: the kernel paths it interns are no region of the policy's. One
  // table's findings are enough; the others differ only in -try binds.
  for (Scenario& s : tables) {
    const size_t before = findings.size();
    check_kernel_state(resolved, argv, s.table, s.assumptions, findings);
    if (findings.size() != before) break;
  }
  return findings;
}

}  // namespace zpolicy::compiler
