#include "compiler/analyzer/sbpl/sbpl_verify.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <unordered_set>
#include <utility>

#include "compiler/analyzer/intent.hpp"
#include "compiler/analyzer/path_text.hpp"
#include "compiler/analyzer/sbpl/sbpl_decided_trees.hpp"
#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "compiler/analyzer/sbpl/sbpl_nested_places.hpp"
#include "compiler/analyzer/symbolic_path.hpp"
#include "ir/macos_sysctls.hpp"
#include "ir/target.hpp"

namespace zpolicy::compiler {
namespace {

using ir::Mode;
using ir::SourceLoc;

// The policy's lists of paths: read, write, protect, deny and pin.
template <class Resolved>
auto path_lists(Resolved& r) {
  return std::array{&r.read, &r.write, &r.protect, &r.deny, &r.pin};
}

// What the policy says about an operation that is not on a file path (the network,
// Mach services, other processes): its answer, a reason, and no policy line but the
// network's.
Expectation allow(std::string why) { return {Expect::Allow, SourceLoc{}, std::move(why)}; }
Expectation deny(std::string why) { return {Expect::Deny, SourceLoc{}, std::move(why)}; }
Expectation either(std::string why) { return {Expect::Either, SourceLoc{}, std::move(why)}; }

bool denies(Expect e) { return e == Expect::Deny || e == Expect::DenyStrict; }

// The operations probed on every probe path: every file operation of the subset, then
// process-exec of the file, with the operation of the intent each one is. A file
// operation left out here is one a rule could grant anywhere unseen.
struct PathOperation {
  std::string_view name;
  FsOp op;
};
constexpr std::array<PathOperation, 18> kPathOperations = {{
    {"file-read-data", FsOp::Read},
    {"file-read-metadata", FsOp::Read},
    {"file-read-xattr", FsOp::Read},
    {"file-write-data", FsOp::Write},
    {"file-write-create", FsOp::Create},
    {"file-write-unlink", FsOp::Delete},
    {"file-write-mode", FsOp::Attributes},
    {"file-write-xattr", FsOp::Attributes},
    {"file-write-times", FsOp::Attributes},
    {"file-write-flags", FsOp::Attributes},
    {"file-write-owner", FsOp::Attributes},
    // Seatbelt's other file-write* operations, which no rule of the subset can name but
    // every file-write* rule grants: without them a profile that allows file-write* and
    // denies each operation above one by one would keep ACLs, setuid bits and Finder
    // info of protected paths writable, unseen (docs/macos.md, Z19-2).
    {"file-write-acl", FsOp::Attributes},
    {"file-write-setugid", FsOp::Attributes},
    {"file-write-finderinfo", FsOp::Attributes},
    {"file-link", FsOp::Link},
    {"file-ioctl", FsOp::Ioctl},
    {"file-map-executable", FsOp::Map},
    {"process-exec", FsOp::Exec},
}};

// A path of the profile or of the probes, in the intent's table, interned name by name
// rather than by SymbolicPath's reading, which refuses names the SBPL subset accepts (a
// '$' inside a name) and texts the probes make (`${WORKSPACE}hub`, a sibling of the
// symbolic root that only "/" holds): every probe path has an id. A directory of "/"
// whose name is spelled like a symbolic root (`/${HOME}`) is not that root: a portable
// table knows it by a name no root has (a bound table has no roots, and the name is its
// own, as the intent's paths spell it).
PathTable::Id intern(PathTable& table, std::string_view path) {
  const bool portable = table.spelling() == PathSpelling::Portable;
  PathTable::Id id = PathTable::kRoot;
  for (size_t start = 0; start <= path.size();) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view name = path.substr(start, end - start);
    if (portable && start == 1 && name.starts_with("${"))
      id = table.child(id, "/" + std::string(name));
    else if (!name.empty())
      id = table.child(id, name);
    start = end + 1;
  }
  return id;
}

// The network a confined profile gets: none under read-only, whatever the policy says.
ir::Network network_of(const ir::Resolved& r) {
  return r.mode == Mode::ReadOnly ? ir::Network::None : r.network;
}

Expectation network_intent(const ir::Resolved& r, std::string_view op, std::string_view target) {
  if (r.mode == Mode::DangerFullAccess) return allow("danger-full-access");
  const ir::Network n = network_of(r);
  Expectation v = deny(std::string("network: ") + ir::to_string(n));
  if (n == ir::Network::Full || (n == ir::Network::Loopback && target.starts_with("localhost:")))
    v.expect = Expect::Allow;
  if (n == ir::Network::Allow && op == "network-outbound")
    for (const auto& d : r.allow)
      if (d.value.kind == ir::DestinationKind::Localhost &&
          target == "localhost:" + std::to_string(d.value.port))
        v.expect = Expect::Allow;
  return v;
}

// The Mach services a confined profile may look up (docs/macos.md, "Process primitives"
// and "Network"): the user database and preferences always, name resolution and
// certificate checks with `network: full`. Reaching them is neither required nor refused
// by a policy; any other service is a grant nobody asked for (a Mach service runs outside
// the sandbox, with its own rights).
constexpr std::array<std::string_view, 3> kPlatformServices = {
    "com.apple.system.opendirectoryd.libinfo", "com.apple.cfprefsd.daemon",
    "com.apple.cfprefsd.agent"};
constexpr std::array<std::string_view, 6> kNetworkServices = {
    "com.apple.dnssd.service",
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.SystemConfiguration.configd",
    "com.apple.networkd",
    "com.apple.trustd.agent",
    "com.apple.ocspd"};

Expectation service_intent(const ir::Resolved& r, std::string_view service) {
  if (r.mode == Mode::DangerFullAccess) return allow("danger-full-access");
  auto listed = [&](const auto& list) {
    return std::find(list.begin(), list.end(), service) != list.end();
  };
  if (listed(kPlatformServices)) return either("a platform service");
  if (listed(kNetworkServices)) {
    if (network_of(r) == ir::Network::Full) return either("a network service under network: full");
    return deny(std::string("a network service under network: ") + ir::to_string(network_of(r)));
  }
  return deny("a Mach service the design grants no profile");
}

// AF_SYSTEM sockets (kernel control, routing events) come with the network.
Expectation system_socket_intent(const ir::Resolved& r) {
  if (r.mode == Mode::DangerFullAccess) return allow("danger-full-access");
  if (network_of(r) == ir::Network::Full) return either("system sockets under network: full");
  return deny(std::string("system sockets under network: ") + ir::to_string(network_of(r)));
}

// The probes of sysctl-read beside the design's own (ir::kMacosPlatformSysctls): what a
// widened rule would show, the host's processes, their arguments and environment.
constexpr std::array<std::string_view, 4> kHostProcessSysctls = {"kern.proc.all", "kern.procargs2",
                                                                 "kern.proc.uid", "kern.proc.pgrp"};

// Reading the design's sysctls is neither required nor refused by a policy; any other is
// a grant nobody asked for.
Expectation sysctl_intent(const ir::Resolved& r, std::string_view name) {
  if (r.mode == Mode::DangerFullAccess) return allow("danger-full-access");
  const bool platform =
      std::ranges::find(ir::kMacosPlatformSysctls, name) != ir::kMacosPlatformSysctls.end() ||
      std::ranges::any_of(ir::kMacosPlatformSysctlPrefixes,
                          [&](std::string_view p) { return name.starts_with(p); });
  if (platform) return either("a sysctl runtimes read, no policy's concern");
  return deny("a sysctl nobody asked for (the host's processes, their arguments)");
}

Expectation process_intent(const ir::Resolved& r, std::string_view op, std::string_view target) {
  if (op == "process-fork") return allow("the command must run");
  if (target == "same-sandbox") return allow("processes of the sandbox itself");
  if (r.mode == Mode::DangerFullAccess) return allow("danger-full-access");
  return deny("host processes are out of reach");
}

// What a profile names that its answers can depend on: the value of every path filter
// (constant or bound parameter) and every port of an address filter. Views of the
// profile text and the parameters.
struct ArtifactNames {
  std::vector<std::string_view> paths;
  std::vector<std::string_view> ports;     // distinct, without "*"
  std::vector<std::string_view> services;  // of global-name filters
  std::vector<std::string_view> sysctls;   // of sysctl-name and sysctl-name-prefix filters
};

// The most distinct names of each kind a profile may name. Each port is probed with every
// network operation by a query that reads every rule, and so is each service and sysctl
// name with its operation; zpolicy names no port ("localhost:*"), nine services at most
// and thirty sysctl names and prefixes.
constexpr size_t kMaxNames = 64;

// The names of a bound profile; an error at the rule that names one port, service or
// sysctl name too many.
ir::Result<ArtifactNames> artifact_names(const SbplProfile& bound) {
  ArtifactNames out;
  // `name` into `names` unless it is there already; false past kMaxNames.
  auto distinct = [](std::vector<std::string_view>& names, std::string_view name) {
    if (std::ranges::find(names, name) != names.end()) return true;
    if (names.size() == kMaxNames) return false;
    names.push_back(name);
    return true;
  };
  for (size_t r = 0; r < bound.rules.size(); ++r) {
    auto too_many = [&](const char* what) {
      return ir::error_at({"profile.sb", bound.rules[r].line, 1},
                          "more than " + std::to_string(kMaxNames) + " distinct " + what +
                              " are outside the subset zpolicy emits");
    };
    // A rule's filters, nested ones included, run up to the next rule's first.
    const size_t end =
        r + 1 < bound.rules.size() ? bound.rules[r + 1].first_filter : bound.filters.size();
    for (size_t i = bound.rules[r].first_filter; i < end; ++i) {
      const SbplFilter& f = bound.filters[i];
      using K = SbplFilter::Kind;
      if (f.is_path()) {
        // The emitter names each excluded path twice in a row, as a literal and as a
        // subpath: a value the filter before named is listed once (every reader of the
        // list takes each path once; region_paths sorts what is listed).
        const std::string_view path = f.param_value ? *f.param_value : std::string_view(f.value);
        if (out.paths.empty() || out.paths.back() != path) out.paths.push_back(path);
      } else if (f.kind == K::GlobalName) {
        if (!distinct(out.services, f.value)) return too_many("Mach services");
      } else if (f.kind == K::SysctlName || f.kind == K::SysctlNamePrefix) {
        if (!distinct(out.sysctls, f.value)) return too_many("sysctl names");
      } else if (f.kind == K::LocalIp || f.kind == K::RemoteIp) {
        const std::string_view port = std::string_view(f.value).substr(f.value.rfind(':') + 1);
        if (port != "*" && !distinct(out.ports, port)) return too_many("ports");
      }
    }
  }
  return out;
}

// One path of each region of the namespace that the policy's paths and the profile's
// filters cut it into (docs/verify.md, "The SBPL proof"): both the profile's answer and
// the policy's intent for a path depend only on which named paths equal it, hold it, or
// lie below it, and on the same for its parent. Every named path and every deepest common
// holder of two of them is a node; each node is probed, with a child no named path lies
// at or below (everything below the node and outside the named paths), and the node's
// parent (what lies strictly between the node and the next node above). Sorted, each once.
std::vector<std::string> region_paths(std::vector<std::string_view> named) {
  named.push_back("/");
  // In byte order, the paths that start with any given text are one run, so the paths
  // below a node are too: where two neighbours below a branch point lie below different
  // children of it, their deepest common holder is that branch point, and so every
  // branch point is the common holder of some two neighbours.
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  // Each node once: a branch point is the common holder of many pairs of neighbours.
  std::unordered_set<std::string_view> probed;
  std::vector<std::string> paths;
  auto probe_node = [&](std::string_view n) {
    if (!probed.insert(n).second) return;
    paths.emplace_back(n);
    paths.push_back(fresh_child(named, n, "zp-probe"));
    if (const auto parent = parent_of(n)) paths.emplace_back(*parent);
  };
  for (size_t i = 0; i < named.size(); ++i) {
    probe_node(named[i]);
    if (i > 0) {
      const std::string_view holder = common_holder(named[i - 1], named[i]);
      if (holder != named[i - 1] && holder != named[i]) probe_node(holder);
    }
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

// The paths whose regions are probed: the profile's (`artifact_paths`), the policy's,
// and the intent's own constants, at which its answer changes.
std::vector<std::string_view> named_path_views(
    const ir::Resolved& r, const std::vector<std::string_view>& artifact_paths) {
  std::vector<std::string_view> named = artifact_paths;
  for (std::string_view p : Intent::platform_paths(Platform::Macos)) named.push_back(p);
  for (const auto* group : path_lists(r))
    for (const auto& p : *group) named.push_back(p.path);
  return named;
}

// The second net, drawn from the policy alone: every path of the policy, a child, a
// grandchild, a sibling sharing its name as a prefix (".git" vs ".github"), its parent and
// a child of that, every ancestor of each protected path, and paths outside every root.
// Sorted, each once. The region probes answer for every path these name (each relates
// to every named path as some region probe does), so the net finds nothing they do not;
// it is asked for the findings of a profile they find wrong, which it lists too.
std::vector<std::string> net_paths(const ir::Resolved& r, const Intent& intent) {
  std::vector<std::string> paths = {"/zp-outside", "/etc/zp-outside", "/usr/local/zp-outside"};
  // Paths share parents (a writable root holds each of its protected paths): each
  // parent's two probes are made once.
  std::unordered_set<std::string_view> parents;
  for (const auto* group : path_lists(r))
    for (const auto& policy_path : *group) {
      const std::string& p = policy_path.path;
      paths.push_back(p);
      paths.push_back(p + "/zp-probe");
      paths.push_back(p + "/zp-dir/zp-probe");
      paths.push_back(p + "hub");
      if (const auto parent = parent_of(p); parent && parents.insert(*parent).second) {
        paths.emplace_back(*parent);
        paths.push_back((*parent == "/" ? std::string() : std::string(*parent)) + "/zp-sibling");
      }
    }
  // Every ancestor of each protected path ("/" only above an absolute one). A walk stops
  // at a directory listed before, whose ancestors were listed with it: each is built once,
  // not once per protected path below it.
  const PathTable& table = intent.paths();
  std::unordered_set<PathTable::Id> listed;
  for (const auto& p : intent.protect())
    for (auto a = table.parent(p.id); a && listed.insert(*a).second; a = table.parent(*a))
      paths.push_back(table.path(*a).str());
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

// `names` with the first `fresh(i)` (i = 0, 1, ...) that is not among them, sorted, each once.
template <class Fresh>
void with_fresh_name(std::vector<std::string>& names, Fresh&& fresh) {
  for (int i = 0;; ++i)
    if (std::string name = fresh(i); std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(std::move(name));
      break;
    }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
}

// The probes that are not of a file path, in sbpl_probes() order: the network, the Mach
// services, system sockets, sysctls, exec of a shell and the other processes.
template <class OnOther>
void for_each_other_probe(const ir::Resolved& r, Intent& intent, const ArtifactNames& names,
                          OnOther&& on_other) {
  // An address filter tells "localhost" from any host, and its port from any other: each
  // named port and one that none names, on both kinds of host, cover every address.
  std::vector<std::string> ports(names.ports.begin(), names.ports.end());
  for (const auto& d : r.allow)  // the ports the policy forwards, whether the profile names them
    if (d.value.kind == ir::DestinationKind::Localhost)
      ports.push_back(std::to_string(d.value.port));
  with_fresh_name(ports, [](int i) { return std::to_string(8080 + i); });
  for (const char* op : {"network-bind", "network-inbound", "network-outbound"})
    for (const char* host : {"localhost:", "192.0.2.1:"})
      for (const auto& port : ports) {
        const std::string t = host + port;
        on_other(op, t, network_intent(r, op, t));
      }
  on_other("network-outbound", "unix:/private/var/run/docker.sock",
           network_intent(r, "network-outbound", "unix:/private/var/run/docker.sock"));
  // A global-name filter tells its name from every other: each named service, the
  // design's own, and one nobody names.
  std::vector<std::string> services(names.services.begin(), names.services.end());
  services.insert(services.end(), kPlatformServices.begin(), kPlatformServices.end());
  services.insert(services.end(), kNetworkServices.begin(), kNetworkServices.end());
  with_fresh_name(services, [](int i) { return "org.zpolicy.probe." + std::to_string(i); });
  for (const auto& service : services) on_other("mach-lookup", service, service_intent(r, service));
  on_other("system-socket", "", system_socket_intent(r));
  // A sysctl-name filter tells its name from every other, a prefix its names: each named
  // name, one below each (a prefix's other names), the design's own, the host's process
  // table, and one nobody names.
  std::vector<std::string> sysctls;
  for (const std::string_view n : names.sysctls) {
    sysctls.emplace_back(n);
    sysctls.push_back(std::string(n) + "zpolicy-probe");
  }
  sysctls.insert(sysctls.end(), ir::kMacosPlatformSysctls.begin(), ir::kMacosPlatformSysctls.end());
  for (const std::string_view p : ir::kMacosPlatformSysctlPrefixes)
    sysctls.push_back(std::string(p) + "1");
  sysctls.insert(sysctls.end(), kHostProcessSysctls.begin(), kHostProcessSysctls.end());
  with_fresh_name(sysctls, [](int i) { return "zpolicy.probe." + std::to_string(i); });
  for (const auto& name : sysctls) on_other("sysctl-read", name, sysctl_intent(r, name));
  on_other("process-exec", "/bin/sh", intent.expect(intern(intent.paths(), "/bin/sh"), FsOp::Exec));
  on_other("process-fork", "", process_intent(r, "process-fork", ""));
  for (const char* op : {"signal", "process-info-pidinfo"})
    for (const char* t : {"same-sandbox", "host-process"})
      on_other(op, t, process_intent(r, op, t));
}

using Answers = std::vector<std::pair<const SbplModel*, SbplDecision>>;

// decide_all_models() with each decision paired with its model.
Answers answers_of(std::vector<SbplDecision> decisions) {
  Answers answers;
  for (size_t i = 0; i < decisions.size(); ++i)
    answers.emplace_back(&all_sbpl_models()[i], std::move(decisions[i]));
  return answers;
}

// Models that reached the same answer by the same rule share one line of the trace.
std::vector<std::string> describe_answers(const Answers& answers) {
  std::vector<std::pair<std::string, std::string>> lines;  // (models, trace), in first use
  for (const auto& [m, d] : answers) {
    const auto same =
        std::ranges::find(lines, d.trace, &std::pair<std::string, std::string>::second);
    if (same == lines.end())
      lines.emplace_back(m->str(), d.trace);
    else
      same->first += ", " + m->str();
  }
  std::vector<std::string> out;
  for (const auto& [models, trace] : lines) out.push_back(models + ": " + trace);
  return out;
}

// "allow under last-match/..., deny-wins/...; deny under ..."
std::string answers_summary(const Answers& answers) {
  std::string allowed, denied;
  for (const auto& [m, d] : answers) {
    std::string& list = d.allowed ? allowed : denied;
    list += (list.empty() ? "" : ", ") + m->str();
  }
  std::string out;
  if (!allowed.empty()) out = "allow under " + allowed;
  if (!denied.empty()) out += (out.empty() ? "" : "; ") + std::string("deny under ") + denied;
  return out;
}

// See verify_sbpl.
constexpr size_t kMaxRulesPerTarget = 256;
// Each finding is explained by evaluating every rule again: past this many, the profile
// is refused all the same and the rest are not reported.
constexpr size_t kMaxFindings = 1024;

constexpr const char* kMaxPathExpected = "a path of at most 1023 bytes (macOS MAXPATHLEN)";
static_assert(kSbplMaxPathBytes == 1023, "kMaxPathExpected states the limit");

ir::Diagnostic malformed_profile(ir::SourceLoc loc, std::string what, std::string expected,
                                 std::string actual) {
  return ir::finding("macos", "malformed-artifact", std::move(loc), std::move(what),
                     std::move(expected), std::move(actual));
}

// A profile that parse_sbpl() or artifact_names() cannot read, at the error's place.
ir::Diagnostic outside_profile_subset(const ir::Diagnostic& error) {
  return malformed_profile(error.loc, "profile.sb", "the SBPL subset zpolicy emits", error.message);
}

// The finding for a probe the profile answers wrongly or ambiguously, with the traces
// of the models that give the wrong answer.
void report(std::vector<ir::Diagnostic>& findings, const SbplProfile& profile,
            const SbplParams& values, std::string_view op, std::string_view target,
            const Expectation& v) {
  const Answers answers = answers_of(decide_all_models(profile, op, target, values));
  const std::string what = std::string(op) + (target.empty() ? "" : " " + std::string(target));
  Answers wrong;
  for (const auto& a : answers)
    if ((denies(v.expect) && a.second.allowed) || (v.expect == Expect::Allow && !a.second.allowed))
      wrong.push_back(a);
  if (!wrong.empty()) {
    bool dropped = denies(v.expect);
    findings.push_back(ir::finding("macos", dropped ? "dropped-deny" : "missing-allow", v.rule,
                                   what,
                                   std::string(dropped ? "deny" : "allow") + " (" + v.reason + ")",
                                   answers_summary(wrong), describe_answers(wrong)));
    return;
  }
  if (v.expect != Expect::Either) return;
  // Not judged by the policy, but the answer must not depend on rule precedence.
  for (auto self : {SbplSubpathSelf::Included, SbplSubpathSelf::ExcludedOnCreate}) {
    Answers group;
    bool any_allow = false, any_deny = false;
    for (const auto& a : answers) {
      if (a.first->subpath_self != self) continue;
      group.push_back(a);
      (a.second.allowed ? any_allow : any_deny) = true;
    }
    if (any_allow && any_deny) {
      findings.push_back(ir::finding("macos", "ambiguous-precedence", v.rule, what,
                                     "the same answer under every precedence (" + v.reason + ")",
                                     answers_summary(group), describe_answers(group)));
      return;
    }
  }
}

// A proof of one nested binding (prove_nested): the root bound to `place`, a path at or
// below the other root `outer`. Only the paths whose answers the binding can change are
// probed: `place` and the paths below it, and `outer` itself when it now holds the bound
// root's protected paths or deny roots (docs/verify.md, "Nested symbolic roots").
struct NestedScope {
  std::string_view outer, place;
  bool outer_too = false;
};

// Rules no index places are matched against every probe, and the probes grow with the
// profile: their number is bounded so that the work is linear in the profile. zpolicy's
// profiles have a fixed number of them (the unconditional platform rules, the exec and
// write rules), whatever the policy. False, with a finding, past the bound.
bool few_unindexed_rules(const SbplTargetQuery& query, const SbplProfile& profile,
                         std::vector<ir::Diagnostic>& findings) {
  const auto per_target = query.rules_matched_per_target();
  if (per_target.size() <= kMaxRulesPerTarget) return true;
  const int line = profile.rules[per_target[kMaxRulesPerTarget]].line;
  findings.push_back(malformed_profile({"profile.sb", line, 1}, "profile.sb",
                                       "the SBPL subset zpolicy emits",
                                       "more than " + std::to_string(kMaxRulesPerTarget) +
                                           " rules that are unconditional or not decided by their "
                                           "paths alone"));
  return false;
}

// The names the probes are cut at: the profile's, and with `scope` only those inside its
// place, and its two paths. None, with a finding, for a profile whose names cannot be
// read.
std::optional<ArtifactNames> probe_names(const SbplProfile& profile, const NestedScope* scope,
                                         std::vector<ir::Diagnostic>& findings) {
  auto names = artifact_names(profile);
  if (!names) {
    findings.push_back(outside_profile_subset(names.error()));
    return std::nullopt;
  }
  auto& out = *names;
  if (scope) {
    // The regions outside the scope are not probed: their names cut nothing inside it.
    std::erase_if(out.paths, [&](std::string_view p) { return !within(scope->place, p); });
    out.paths.push_back(scope->place);
    out.paths.push_back(scope->outer);
  }
  return std::move(out);
}

// Whether report() finds fault with a probe whose models answer `allowed` (bit m set when
// all_sbpl_models()[m] allows): a model allows what the policy denies or denies what it
// requires, or, where the policy asks neither, the precedences disagree under one subpath
// reading (all_sbpl_models(): models 0 to 3 read subpaths one way, 4 to 7 the other).
bool faulty(Expect expect, unsigned allowed) {
  if (denies(expect)) return allowed != 0;
  if (expect == Expect::Allow) return allowed != 0xff;
  const unsigned included = allowed & 0xf, excluded = allowed >> 4;
  return (included != 0 && included != 0xf) || (excluded != 0 && excluded != 0xf);
}

// The proof over the regions of `policy` and the bound `profile` (docs/verify.md, "The
// SBPL proof"): every probe path with every file operation, then the network, the Mach
// services and the other processes; with `scope`, only its paths.
void prove(const ir::Resolved& policy, const SbplProfile& profile, const SbplParams& values,
           std::vector<ir::Diagnostic>& findings, const NestedScope* scope = nullptr) {
  SbplTargetQuery path_query(profile, [] {
    std::vector<std::string> names;
    for (const auto& o : kPathOperations) names.emplace_back(o.name);
    return names;
  }());
  if (!few_unindexed_rules(path_query, profile, findings)) return;
  const auto names = probe_names(profile, scope, findings);
  if (!names) return;
  Intent intent(policy, nullptr, Platform::Macos);
  // A probe path and operation (its place in kPathOperations) that report() finds fault
  // with; `id` is the path's in the intent's table.
  struct Fault {
    std::string_view path;
    PathTable::Id id;
    size_t op;
  };
  auto faults_on = [&](const std::vector<std::string>& paths) {
    std::vector<Fault> out;
    for (const std::string& path : paths) {
      // Only the first kMaxFindings in path order can be reported, of these or of both
      // lists merged.
      if (out.size() >= kMaxFindings) break;
      if (scope && !(scope->outer_too && path == scope->outer) && !within(scope->place, path))
        continue;
      const PathTable::Id id = intern(intent.paths(), path);
      const auto allowed = path_query.allowed(path);
      // Each operation of the intent once, whichever Seatbelt operations share it.
      const auto verdicts = intent.every_verdict(id);
      for (size_t k = 0; k < kPathOperations.size(); ++k)
        if (faulty(verdicts[static_cast<size_t>(kPathOperations[k].op)], allowed[k]))
          out.push_back({path, id, k});
    }
    return out;
  };
  const std::vector<std::string> regions = region_paths(named_path_views(policy, names->paths));
  std::vector<Fault> faults = faults_on(regions);
  // The region probes decide alone whether the profile is right; the net's are asked
  // only of a profile they find wrong, for the findings they show too, in path order.
  std::vector<std::string> net;
  if (!faults.empty()) {
    std::ranges::set_difference(net_paths(policy, intent), regions, std::back_inserter(net));
    std::vector<Fault> all;
    std::ranges::merge(faults, faults_on(net), std::back_inserter(all), {}, &Fault::path,
                       &Fault::path);
    faults = std::move(all);
  }
  // The reason and the policy line are built only for a finding.
  for (const Fault& f : faults) {
    if (findings.size() >= kMaxFindings) break;
    const PathOperation& op = kPathOperations[f.op];
    report(findings, profile, values, op.name, f.path, intent.expect(f.id, op.op));
  }
  if (scope) return;  // no binding changes what the profile says of the others
  std::map<std::string, SbplTargetQuery, std::less<>> other_queries;
  for_each_other_probe(
      policy, intent, *names,
      [&](std::string_view op, std::string_view target, const Expectation& v) {
        // One query per operation, which picks the rules naming it once for all its
        // targets (every port, every service).
        auto query = other_queries.find(op);
        if (query == other_queries.end()) {
          const std::vector<std::string> operations = {std::string(op)};
          query = other_queries.try_emplace(std::string(op), profile, operations).first;
        }
        if (faulty(v.expect, query->second.allowed(target)[0]) && findings.size() < kMaxFindings)
          report(findings, profile, values, op, target, v);
      });
}

// The symbolic roots (`${HOME}`) the parameters' values and the policy's paths start
// with, sorted.
std::vector<std::string> symbolic_roots(const ir::Resolved& policy, const SbplParams& values) {
  std::vector<std::string> roots;
  auto root_of = [&](std::string_view text) {
    if (text.starts_with("${") && text.find('}') != std::string_view::npos)
      roots.emplace_back(text.substr(0, text.find('}') + 1));
  };
  for (const auto& [name, value] : values) root_of(value);
  for (const auto* group : path_lists(policy))
    for (const auto& p : *group) root_of(p.path);
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

// A binding of symbolic roots: each root bound to its place in turn, so that a later
// place may be written below an earlier root's place (`${HOME}/.ssh/zp-bind`).
using Binding = std::vector<std::pair<std::string_view, std::string_view>>;

// `policy` bound by `binding`.
ir::Resolved rebound_to(const ir::Resolved& policy, const Binding& binding) {
  ir::Resolved bound = policy;
  for (auto* group : path_lists(bound))
    for (auto& p : *group)
      for (const auto& [root, place] : binding) p.path = rebased(p.path, root, place);
  return bound;
}

// `values` bound by `binding`; the values that change are kept in `texts`, which the
// returned table views (reserved first, so that no view moves), as it views the others
// where `values` does.
SbplParams rebound_to(const SbplParams& values, const Binding& binding,
                      std::vector<std::string>& texts) {
  texts.clear();
  texts.reserve(values.size());
  SbplParams out;
  for (const auto& [name, value] : values) {
    std::string text(value);
    for (const auto& [root, place] : binding) text = rebased(text, root, place);
    out.insert(name, text == value ? value : std::string_view(texts.emplace_back(std::move(text))));
  }
  return out;
}

// prove() with the symbolic roots bound by `binding` in `bound` (the policy, bound by
// the caller) and in the profile's parameters. Findings name the binding first, `how`
// saying it ("${HOME} bound to /Users/zp-bind"); true when there are any.
bool prove_bound(const ir::Resolved& bound, const SbplProfile& unbound, const SbplParams& values,
                 const Binding& binding, const std::string& how,
                 std::vector<ir::Diagnostic>& findings, const NestedScope* scope = nullptr) {
  std::vector<std::string> texts;
  const SbplParams bound_values = rebound_to(values, binding, texts);
  prove(bound, bind_params(unbound, bound_values), bound_values, findings, scope);
  for (auto& f : findings)
    f.trace.insert(f.trace.begin(),
                   "with " + how + " (a portable profile must hold for every binding)");
  return !findings.empty();
}

// The most places each symbolic root is bound to (see prove_bindings): each is a whole
// proof again. With the places of the policy's own paths (zpolicy verify), the most
// places; in both modes their proofs' work is bounded too (kMaxNestedWork).
constexpr size_t kMaxBindings = 32;
constexpr size_t kMaxPolicyBindings = 64;

// Which concrete paths of the profile make places (docs/verify.md, "Portable profiles"):
// those the policy does not name (as a path or an ancestor of one), or all of them.
enum class PolicyPlaces { Left, Included };

// The concrete places a symbolic root is bound to (prove_bindings), sorted: one place in
// each region the concrete paths the profile names (but the policy's own, unless
// `policy_places` includes them) cut the namespace into: each such path, a child of it
// that nothing names, and each of its ancestors but "/". The platform's runtime trees and
// devices are not places. Empty when the profile's names are outside the subset (prove()
// reports it).
std::vector<std::string> concrete_places(const ir::Resolved& policy, const SbplProfile& profile,
                                         PolicyPlaces policy_places) {
  auto names = artifact_names(profile);
  if (!names) return {};
  const auto platform = Intent::platform_paths(Platform::Macos);
  std::vector<std::string_view> concrete;
  for (std::string_view c : names->paths)
    if (c.starts_with('/') && c != "/" &&
        std::none_of(platform.begin(), platform.end(), [&](std::string_view t) {
          return t != "/" && within(t, c) && t != "/etc" && t != "/tmp" && t != "/var";
        }))
      concrete.push_back(c);
  // The policy's paths and their ancestors (which the emitter pins above them) are no
  // places: a concrete path is one of them when it is a policy path or holds one, which a
  // search of the policy's paths sorted tells (every ancestor of every path is not
  // listed). Sorted only when a concrete path is left to check (a profile that names
  // none but the platform's has no place).
  if (policy_places == PolicyPlaces::Left && !concrete.empty()) {
    std::vector<std::string_view> policy_paths;
    for (const auto* group : path_lists(policy))
      for (const auto& p : *group) policy_paths.push_back(p.path);
    std::sort(policy_paths.begin(), policy_paths.end());
    std::erase_if(concrete, [&](std::string_view c) { return holds_at_or_below(policy_paths, c); });
  }
  std::vector<std::string> places;
  for (std::string_view c : concrete) {
    places.emplace_back(c);
    places.push_back(std::string(c) + "/zp-bind");
    for (auto a = parent_of(c); a && *a != "/"; a = parent_of(*a)) places.emplace_back(*a);
  }
  std::sort(places.begin(), places.end());
  places.erase(std::unique(places.begin(), places.end()), places.end());
  return places;
}

// Whether the profile's rules alone prove every chain of roots under the concrete place
// `top` (docs/verify.md, "Trees the rules decide"): `top` lies at or below a concrete deny
// root of a confined policy, so the intent refuses every operation there but mapping
// (neither required nor refused), at every path of the tree, wherever the roots lie and
// whatever they bring (Intent::decide answers a path under a deny root before any other
// entry); and tree_answers() finds every such operation denied there, and mapping given one
// answer, by every rule that can match there, under every model. Then no probe of the tree
// could fail, whichever roots are bound in it.
bool rules_decide_tree(const ir::Resolved& policy, const SbplProfile& profile,
                       std::string_view top) {
  if (!ir::is_confined(policy.mode)) return false;
  if (std::none_of(policy.deny.begin(), policy.deny.end(), [&](const ir::ResolvedPath& d) {
        return d.path.starts_with('/') && within(d.path, top);
      }))
    return false;
  std::vector<std::string_view> operations;
  for (const auto& o : kPathOperations) operations.push_back(o.name);
  const std::vector<std::optional<bool>> answers = tree_answers(profile, top, operations);
  for (size_t k = 0; k < kPathOperations.size(); ++k)
    if (!answers[k] || (*answers[k] && kPathOperations[k].op != FsOp::Map)) return false;
  return true;
}

// The proof of one chain of nested roots: its last root's tree, with every root of the
// chain bound. True when there are findings.
bool prove_chain(const ir::Resolved& policy, const SbplProfile& unbound, const SbplParams& values,
                 const NestedChain& chain, std::vector<ir::Diagnostic>& findings) {
  Binding binding;
  std::string how;
  if (!chain.top.empty()) {
    const std::string& first = chain.steps.front().inside;
    binding.emplace_back(first, chain.top);
    how = first + " bound to " + chain.top;
  }
  for (const NestedStep& s : chain.steps) {
    binding.emplace_back(s.root, s.place);
    how += (how.empty() ? "" : ", ") + s.root + " bound to " + s.place +
           (s.stands_for > 1 ? " and " + std::to_string(s.stands_for - 1) + " places like it"
                             : "") +
           " inside " + s.inside;
  }
  ir::Resolved bound = rebound_to(policy, binding);
  // The policy's entries that can decide a path at or below the last place, or the place
  // of the root before it: those at or below the last place (the last root's among them),
  // those at or above it, and the concrete ones. The other roots' and those beside the
  // place decide nothing there (an Intent decides a path by the entries at, above and
  // below it).
  const std::string_view place = chain.steps.back().place;
  const std::string_view outer =
      chain.steps.size() > 1 ? std::string_view(chain.steps[chain.steps.size() - 2].place)
      : !chain.top.empty()   ? std::string_view(chain.top)
                             : std::string_view(chain.steps.front().inside);
  for (auto* group : path_lists(bound))
    std::erase_if(*group, [&](const ir::ResolvedPath& p) {
      return p.path.starts_with("${") && !within(place, p.path) &&
             !within(p.path, place);
    });
  const bool guards = std::any_of(bound.protect.begin(), bound.protect.end(),
                                  [&](const auto& p) { return within(place, p.path); }) ||
                      std::any_of(bound.deny.begin(), bound.deny.end(),
                                  [&](const auto& p) { return within(place, p.path); });
  const NestedScope scope{outer, place, guards};
  return prove_bound(bound, unbound, values, binding, how, findings, &scope);
}

// Symbolic roots bound inside one another (docs/verify.md, "Nested symbolic roots"):
// `${WORKSPACE}` inside `${HOME}`, `${HOME}` inside `${WORKSPACE}`, both the same
// directory, and chains of more (`${TMPDIR}` inside `${WORKSPACE}` inside `${HOME}`).
// The first root of a chain is left symbolic or bound to each concrete place of
// prove_bindings (`${HOME}` at /Users/zp-bind, `${WORKSPACE}` inside it, for a rule that
// names /Users and both roots), and to those of the policy's own paths (docs/verify.md,
// "Under a place the policy names"), but where the rules decide the whole tree of the
// place alone (rules_decide_tree). nested_chains() gives one chain of each class the profile
// and the policy cannot tell apart; each is proved where binding its last root can change
// an answer. The first chain with findings is reported, each finding naming it.
void prove_nested(const ir::Resolved& policy, const SbplProfile& unbound,
                  const SbplProfile& profile, const SbplParams& values, size_t spent,
                  std::vector<ir::Diagnostic>& findings) {
  const std::vector<std::string> roots = symbolic_roots(policy, values);
  if (roots.size() < 2) return;
  // The places whose whole tree the rules decide need no chain (rules_decide_tree).
  std::vector<std::string> tops = concrete_places(policy, profile, PolicyPlaces::Left);
  std::vector<std::string> policy_tops;  // those of the policy's own paths, after `tops`
  std::ranges::set_difference(concrete_places(policy, profile, PolicyPlaces::Included), tops,
                              std::back_inserter(policy_tops));
  for (auto* list : {&tops, &policy_tops})
    std::erase_if(*list, [&](const std::string& top) {
      return rules_decide_tree(policy, profile, top);
    });
  // The pairs first, proved before the chains of more are sought: their findings are the
  // plainest, and a profile whose longer chains are past the bounds is refused only once
  // the pairs are proved.
  const size_t proof_work = profile.filters.size() + values.size();
  size_t proved = 0;
  for (const size_t steps : {size_t{1}, roots.size() - 1}) {
    auto nested =
        nested_chains(policy, profile, roots, tops, proof_work, steps, spent, policy_tops);
    if (!nested) {
      findings.push_back(nested.error());
      return;
    }
    const auto& chains = *nested;
    for (; proved < chains.size(); ++proved)
      if (prove_chain(policy, unbound, values, chains[proved], findings)) return;
    if (steps == roots.size() - 1) return;  // the pairs were every chain
  }
}

// The refusal of prove_bindings() past its bounds: `places` places for `roots` roots,
// more than kMaxBindings (`too_many`), or `work` past kMaxNestedWork; with `every`
// (EveryNesting), either.
ir::Diagnostic refuse_bindings(bool every, bool too_many, size_t work, size_t places,
                               size_t roots) {
  const std::string retry = " (verify the profile bound to a host: compile --workspace)";
  if (every)
    return malformed_profile(
        {"profile.sb"}, "profile.sb",
        "at most " + std::to_string(kMaxPolicyBindings) +
            " places where a concrete path of a portable profile or its policy can meet a "
            "symbolic root, and " +
            std::to_string(kMaxNestedWork) + " filters and parameters bound over their proofs",
        std::to_string(work) + " for " + std::to_string(places) + " places" + retry);
  if (too_many)
    return malformed_profile({"profile.sb"}, "profile.sb",
                             "at most " + std::to_string(kMaxBindings) +
                                 " places where a concrete path of a portable profile can meet a "
                                 "symbolic root",
                             std::to_string(places) + retry);
  return malformed_profile(
      {"profile.sb"}, "profile.sb",
      "at most " + std::to_string(kMaxNestedWork) +
          " filters and parameters bound over the proofs of every place where a "
          "concrete path of a portable profile can meet a symbolic root",
      std::to_string(work) + " for " + std::to_string(places) + " places and " +
          std::to_string(roots) + " roots" + retry);
}

// A symbolic root (`${HOME}`) is opaque to prove(): no concrete path is known to hold it,
// so `(allow file-read* (subpath "/Users"))` ahead of the deny of `${HOME}/.ssh` is only a
// grant on /Users, which `read: ["/"]` allows, though on a Mac ${HOME} lies below /Users.
// A portable profile is meant for every binding, so the proof runs again with each
// symbolic root bound, one at a time, to each of concrete_places() (docs/verify.md,
// "Portable profiles"): a workspace, home or temporary directory inside the platform's
// runtime trees is outside what the proof covers. The places of the policy's own concrete
// paths are proved only for `zpolicy verify` (EveryNesting): the profiles the pipeline
// emits name no other concrete path, and are held to them by the tests. There the
// places are bounded by the work of their proofs (a policy with a dozen concrete paths
// has some fifty places), counted against the nested proof's bound, rather than by
// their number; for compile and check, by their number (32) and the same work bound.
// The first binding with findings is reported, each finding naming it.
// Roots bound there with others inside them are prove_nested's. Returns the work done.
size_t prove_bindings(const ir::Resolved& policy, const SbplProfile& unbound,
                      const SbplProfile& profile, const SbplParams& values, SbplBindings bindings,
                      std::vector<ir::Diagnostic>& findings) {
  const bool every = bindings == SbplBindings::EveryNesting;
  const std::vector<std::string> places =
      concrete_places(policy, profile, every ? PolicyPlaces::Included : PolicyPlaces::Left);
  if (places.empty()) return 0;
  const std::vector<std::string> roots = symbolic_roots(policy, values);
  if (roots.empty()) return 0;
  // Each binding is a whole proof again: the work, every filter and parameter bound once
  // per place and root, is bounded in both modes (compile and check as verify), so that
  // any profile under 1 MiB is answered within issue 19's 2 s.
  const size_t work = places.size() * roots.size() * (profile.filters.size() + values.size());
  const bool too_many = places.size() > (every ? kMaxPolicyBindings : kMaxBindings);
  if (too_many || work > kMaxNestedWork) {
    findings.push_back(refuse_bindings(every, too_many, work, places.size(), roots.size()));
    return work;
  }
  for (const auto& root : roots)
    for (const auto& place : places)
      if (prove_bound(rebound_to(policy, {{root, place}}), unbound, values, {{root, place}},
                      root + " bound to " + place, findings))
        return work;
  return work;
}
}  // namespace

std::vector<SbplProbe> sbpl_probes(const ir::Resolved& r) {
  std::vector<SbplProbe> out;
  auto add = [&](std::string_view op, std::string_view target, const Expectation& v) {
    out.push_back({std::string(op), std::string(target), v.expect, v.rule, v.reason});
  };
  Intent intent(r, nullptr, Platform::Macos);
  std::vector<std::string> paths;
  std::ranges::set_union(region_paths(named_path_views(r, {})), net_paths(r, intent),
                         std::back_inserter(paths));
  for (const std::string& path : paths) {
    const PathTable::Id id = intern(intent.paths(), path);
    for (const auto& [name, op] : kPathOperations) add(name, path, intent.expect(id, op));
  }
  for_each_other_probe(r, intent, ArtifactNames{}, add);
  return out;
}

std::vector<ir::Diagnostic> unnameable_policy_paths(const ir::Resolved& policy) {
  std::vector<ir::Diagnostic> findings;
  for (const auto* group : path_lists(policy))
    for (const auto& p : *group)
      if (p.path.size() > kSbplMaxPathBytes)
        findings.push_back(malformed_profile(p.loc, "path " + p.path.substr(0, 64) + "...",
                                             kMaxPathExpected,
                                             std::to_string(p.path.size()) + " bytes"));
  return findings;
}

namespace {

const ir::SourceLoc kParamsFile{"params.txt"};

// The parameters' values, each a normalized absolute path Seatbelt can match, defined
// once; a finding at params.txt for each that is not.
SbplParams read_params(const SbplParamList& params, std::vector<ir::Diagnostic>& findings) {
  SbplParams values;
  for (const auto& [name, value] : params) {
    auto what = [&] { return "parameter " + std::string(name); };
    if (value.find('\n') != std::string::npos || value.find('\0') != std::string::npos)
      findings.push_back(
          malformed_profile(kParamsFile, what(), "a path", "a value with a newline or NUL"));
    else if (!sbpl_normalized_path(value))
      findings.push_back(
          malformed_profile(kParamsFile, what(), "a normalized absolute path", std::string(value)));
    else if (value.size() > kSbplMaxPathBytes)
      findings.push_back(malformed_profile(kParamsFile, what(), kMaxPathExpected,
                                           std::to_string(value.size()) + " bytes"));
    if (!values.insert(name, value))
      findings.push_back(
          malformed_profile(kParamsFile, what(), "one definition", "a second definition"));
  }
  return values;
}

// A bound profile's parameters must be canonical: Seatbelt matches the path a symlink
// resolves to, so a rule for a path under /tmp, /var or /etc never applies.
void check_canonical_params(const SbplParamList& params, std::vector<ir::Diagnostic>& findings) {
  for (const auto& [name, value] : params)
    for (const char* link : {"/tmp", "/var", "/etc"})
      if (within(link, value))
        findings.push_back(ir::finding("macos", "not-canonical", kParamsFile,
                                       "parameter " + std::string(name),
                                       std::string("a canonical macOS path (") + link +
                                           " is a symlink to /private" + link +
                                           "; Seatbelt matches the resolved path)",
                                       std::string(value) + ", on which a rule would never apply"));
}

}  // namespace

std::vector<ir::Diagnostic> verify_sbpl(const ir::Resolved& policy, std::string_view profile_text,
                                     const SbplParamList& params, SbplBindings bindings) {
  std::vector<ir::Diagnostic> findings;
  const auto parsed = parse_sbpl(profile_text);
  if (!parsed) return {outside_profile_subset(parsed.error())};
  // A confined profile denies what no rule allows. Rules can name only the operations
  // of the subset, so under (allow default) every other one Seatbelt knows is granted
  // unseen, whatever the rules deny: appleevent-send (Terminal runs a script outside the
  // sandbox), lsopen, iokit-open, mach-register, file-mount, ... (docs/macos.md, Z19-1).
  if (parsed->default_allow && ir::is_confined(policy.mode))
    return {malformed_profile({"profile.sb", parsed->default_line, 1}, "(allow default)",
                              "(deny default): a confined profile grants only what its rules allow",
                              "every operation outside the subset zpolicy verifies allowed")};
  // Before any probe is made from such a path.
  findings = unnameable_policy_paths(policy);
  if (!findings.empty()) return findings;
  const SbplParams values = read_params(params, findings);
  const SbplProfile& unbound = *parsed;
  const SbplProfile profile = bind_params(unbound, values);
  for (const auto& name : unbound_params(profile))
    findings.push_back(malformed_profile(kParamsFile, "parameter " + name,
                                         "a definition (the profile reads it)", "none"));
  if (!findings.empty()) return findings;
  if (!policy.portable) check_canonical_params(params, findings);
  prove(policy, profile, values, findings);
  if (!findings.empty() || !policy.portable) return findings;
  const size_t spent = prove_bindings(policy, unbound, profile, values, bindings, findings);
  if (findings.empty() && bindings == SbplBindings::EveryNesting)
    prove_nested(policy, unbound, profile, values, spent, findings);
  return findings;
}

ir::Result<SbplExplanation> explain_sbpl(const ir::Resolved& policy, std::string_view profile_text,
                                         const SbplParamList& params, std::string_view operation,
                                         std::string_view path) {
  std::string op = operation == "read"     ? "file-read-data"
                   : operation == "write"  ? "file-write-data"
                   : operation == "create" ? "file-write-create"
                                           : std::string(operation);
  const auto* known = std::ranges::find(kPathOperations, op, &PathOperation::name);
  if (known == kPathOperations.end() || known->op == FsOp::Exec)
    return ir::error_at({}, "unknown operation '" + std::string(operation) + "'");
  auto parsed = parse_sbpl(profile_text);
  if (!parsed)
    return ir::error_at(parsed.error().loc,
                        parsed.error().loc.str() + ": " + parsed.error().message);
  SbplParams values(params.begin(), params.end());
  const SbplProfile profile = bind_params(std::move(*parsed), values);
  if (auto missing = unbound_params(profile); !missing.empty())
    return ir::error_at(kParamsFile, "parameter " + missing.front() + " is not defined");

  SbplExplanation out;
  Intent intent(policy, nullptr, Platform::Macos);
  const Expectation v = intent.expect(intern(intent.paths(), path), known->op);
  out.policy = {op, std::string(path), v.expect, v.rule, v.reason};
  const Answers answers = answers_of(decide_all_models(profile, op, path, values));
  out.allowed = answers.front().second.allowed;  // all_sbpl_models() starts with last-match
  out.models_agree = std::ranges::all_of(
      answers, [&](const auto& a) { return a.second.allowed == out.allowed; });
  out.trace = describe_answers(answers);
  return out;
}

ir::Result<SbplParamList> parse_params_text(std::string_view text) {
  SbplParamList out;
  SbplParams seen;  // to refuse a name defined twice
  const std::vector<std::string_view> lines = ir::artifact_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int line_no = static_cast<int>(i) + 1;
    const std::string_view line = lines[i];
    const auto eq = line.find('=');
    auto fail = [&](const std::string& why) {
      return ir::error_at({"params.txt", line_no, 1},
                          "params.txt:" + std::to_string(line_no) + ": " + why);
    };
    if (eq == std::string_view::npos) return fail("expected NAME=VALUE");
    const std::string_view name = line.substr(0, eq);
    if (name.empty()) return fail("empty parameter name");
    const std::string_view value = line.substr(eq + 1);
    if (!seen.insert(name, value))
      return fail("parameter " + std::string(name) + " is defined twice");
    out.emplace_back(name, value);
  }
  return out;
}

}  // namespace zpolicy::compiler
