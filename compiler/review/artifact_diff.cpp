#include "compiler/review/artifact_diff.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/mount_table.hpp"
#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "compiler/analyzer/symbolic_path.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/review/program_diff.hpp"

namespace zpolicy::compiler::review {
namespace {

// A fresh name: no artifact mounts it, so it stands for everything else at its level.
constexpr std::string_view kFresh = "zpolicy-probe";

// Denied < sandbox scratch < the host's own object: more of the host is more access.
int rank(Outcome o) {
  switch (o) {
    case Outcome::Denied:
      return 0;
    case Outcome::Scratch:
      return 1;
    case Outcome::Host:
      return 2;
  }
  return 2;
}

// "bwrap.args:54: --ro-bind ..." as the trace gives it: its line, for the row's side.
ir::SourceLoc loc_of(const std::vector<std::string>& trace) {
  constexpr std::string_view kPrefix = "bwrap.args:";
  for (const auto& t : trace) {
    const auto at = t.find(kPrefix);
    if (at == std::string::npos) continue;
    int line = 0;
    for (size_t i = at + kPrefix.size(); i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i)
      line = line * 10 + (t[i] - '0');
    if (line > 0) return {"bwrap.args", line, 1};
  }
  return {"bwrap.args", 0, 0};
}

Side side_of(const AccessResult& r) {
  std::string reason;
  for (const auto& t : r.trace) reason += (reason.empty() ? "" : "; ") + t;
  return {to_string(r.outcome), reason, loc_of(r.trace)};
}

// Rows of several paths and operations are one difference when the same change is
// decided by the same lines: widening, each side's verdict and line.
using RowKey = std::tuple<bool, std::string, std::string, std::string, std::string>;

std::vector<Difference> diff_mounts(MountTable& before, MountTable& after,
                                    const std::vector<PathTable::Id>& probes, PathTable& table) {
  std::map<RowKey, Difference> rows;
  std::vector<RowKey> order;
  for (PathTable::Id p : probes) {
    const std::string path = table.path(p).str();
    for (FsOp op : kAllFsOps)
      for (bool host : {false, true}) {
        const auto ask = [&](MountTable& t) {
          return host ? t.host_access(p, op) : t.access(p, op);
        };
        const AccessResult was = ask(before), now = ask(after);
        if (rank(was.outcome) == rank(now.outcome)) continue;
        const Side b = side_of(was), a = side_of(now);
        const bool widening = rank(now.outcome) > rank(was.outcome);
        const RowKey key{widening, b.verdict, b.loc.str(), a.verdict, a.loc.str()};
        auto [it, fresh] = rows.try_emplace(key);
        Difference& d = it->second;
        const char* kind = host ? "the host object, wherever the sandbox reaches it"
                                : "the path in the sandbox";
        if (fresh) {
          // Spoken of with the words of its first (shallowest) path.
          order.push_back(key);
          d.targets = {ir::Target::Linux};
          d.area = Area::Filesystem;
          d.path_class = kind;
          d.direction = widening ? Direction::Widening : Direction::Narrowing;
          d.before = b;
          d.after = a;
        } else if (d.path_class != kind && d.path_class.find(" and ") == std::string::npos) {
          d.path_class = "the path in the sandbox and the host object";
        }
        if (std::find(d.operations.begin(), d.operations.end(), to_string(op)) == d.operations.end())
          d.operations.push_back(to_string(op));
        if (std::find(d.paths.begin(), d.paths.end(), path) == d.paths.end()) d.paths.push_back(path);
      }
  }
  std::vector<Difference> out;
  for (const auto& k : order) {
    Difference d = std::move(rows[k]);
    std::vector<std::string> ops;
    for (FsOp op : kAllFsOps)
      if (std::find(d.operations.begin(), d.operations.end(), to_string(op)) != d.operations.end())
        ops.push_back(to_string(op));
    d.operations = std::move(ops);
    d.subject = d.paths.front() +
                (d.paths.size() > 1 ? " and " + std::to_string(d.paths.size() - 1) + " more" : "");
    out.push_back(std::move(d));
  }
  return out;
}

// The switches that confine more when set, by the option that sets them.
std::vector<Difference> diff_flags(const BwrapFlags& before, const BwrapFlags& after) {
  const std::pair<const char*, bool BwrapFlags::*> switches[] = {
      {"--unshare-user", &BwrapFlags::unshare_user},
      {"--unshare-user-try", &BwrapFlags::unshare_user_try},
      {"--unshare-cgroup-try", &BwrapFlags::unshare_cgroup_try},
      {"--unshare-ipc", &BwrapFlags::unshare_ipc},
      {"--unshare-pid", &BwrapFlags::unshare_pid},
      {"--unshare-net", &BwrapFlags::unshare_net},
      {"--unshare-uts", &BwrapFlags::unshare_uts},
      {"--unshare-cgroup", &BwrapFlags::unshare_cgroup},
      {"--new-session", &BwrapFlags::new_session},
      {"--die-with-parent", &BwrapFlags::die_with_parent},
      {"--cap-drop ALL", &BwrapFlags::cap_drop_all},
      {"--disable-userns", &BwrapFlags::disable_userns},
  };
  std::vector<Difference> out;
  auto add = [&](std::string subject, bool was, bool now, Area area) {
    if (was == now) return;
    Difference d;
    d.targets = {ir::Target::Linux};
    d.area = area;
    d.subject = std::move(subject);
    d.direction = was ? Direction::Widening : Direction::Narrowing;
    d.before = {was ? "set" : "not set", "", {"bwrap.args", 0, 0}};
    d.after = {now ? "set" : "not set", "", {"bwrap.args", 0, 0}};
    out.push_back(std::move(d));
  };
  for (const auto& [option, field] : switches)
    add(std::string("bwrap ") + option, before.*field, after.*field,
        field == &BwrapFlags::unshare_net ? Area::Network : Area::Mode);
  add("bwrap --seccomp (a syscall filter is loaded)", before.seccomp_fd.has_value(),
      after.seccomp_fd.has_value(), Area::Syscalls);
  // Neither narrower nor wider: counted as a widening, as every such change (difference.hpp).
  if (before.chdir != after.chdir) {
    Difference d;
    d.targets = {ir::Target::Linux};
    d.area = Area::Mode;
    d.subject = "bwrap --chdir (where the command starts)";
    d.direction = Direction::Widening;
    d.before = {before.chdir ? before.chdir->str() : "not set", "", {"bwrap.args", 0, 0}};
    d.after = {after.chdir ? after.chdir->str() : "not set", "", {"bwrap.args", 0, 0}};
    out.push_back(std::move(d));
  }
  return out;
}

// A writable procfs lets a sandbox started by root write the host kernel's /proc/sys and
// /proc/sysrq-trigger, which the mount table counts as the sandbox's own (docs/verify.md).
std::optional<Difference> diff_proc(MountTable& before, MountTable& after) {
  const auto proc = SymbolicPath::parse("/proc");
  auto read_only = [&](MountTable& t) {
    const auto* m = t.mount_at(*proc);
    return !m || m->kind != MountTable::MountKind::Proc || m->read_only;
  };
  const bool was = read_only(before), now = read_only(after);
  if (was == now) return std::nullopt;
  Difference d;
  d.targets = {ir::Target::Linux};
  d.area = Area::Mode;
  d.subject = "procfs at /proc (/proc/sys and /proc/sysrq-trigger are the host kernel's)";
  d.direction = was ? Direction::Widening : Direction::Narrowing;
  d.before = {was ? "read-only" : "writable", "", {"bwrap.args", 0, 0}};
  d.after = {now ? "read-only" : "writable", "", {"bwrap.args", 0, 0}};
  return d;
}

}  // namespace

std::variant<std::vector<Difference>, ArtifactError> diff_linux_artifacts(
    const LinuxArtifacts& before, const LinuxArtifacts& after) {
  auto table = std::make_shared<PathTable>();
  std::vector<BwrapArgv> argvs;
  std::vector<MountTable> mounts;
  for (const auto* side : {&before, &after}) {
    auto parsed = parse_bwrap_args(side->bwrap_args, table);
    const bool second = side == &after;
    if (!parsed) {
      const ir::Diagnostic& e = parsed.error();
      return ArtifactError{second, e.loc.file, e.loc.line, e.message};
    }
    auto replayed = MountTable::replay(*parsed, [](size_t) { return true; });
    if (!replayed) {
      const ir::Diagnostic& e = replayed.error();
      return ArtifactError{second, "bwrap.args", e.loc.line,
                           "bwrap would refuse the argv: " + e.message};
    }
    mounts.push_back(std::move(*replayed));
    argvs.push_back(std::move(*parsed));
  }
  std::vector<std::vector<BpfInsn>> programs;
  for (const auto* side : {&before, &after}) {
    auto prog = parse_bpf(side->seccomp_bpf);
    if (!prog) return ArtifactError{side == &after, "seccomp.bpf", 0, prog.error().message};
    programs.push_back(std::move(*prog));
  }

  std::set<PathTable::Id> ids = {PathTable::kRoot, table->child(PathTable::kRoot, kFresh)};
  for (const auto& argv : argvs)
    for (const auto& op : argv.ops)
      for (auto id : {std::optional(op.dest), op.source}) {
        if (!id) continue;
        ids.insert(*id);
        ids.insert(table->child(*id, kFresh));
        ids.insert(table->up(*id));
      }
  std::vector<PathTable::Id> probes(ids.begin(), ids.end());
  std::sort(probes.begin(), probes.end(),
            [&](PathTable::Id a, PathTable::Id b) { return table->less(a, b); });

  // The same bytes do the same: only what differs is probed.
  std::vector<Difference> out;
  if (before.bwrap_args != after.bwrap_args) {
    out = diff_flags(argvs[0].flags, argvs[1].flags);
    if (auto proc = diff_proc(mounts[0], mounts[1])) out.push_back(std::move(*proc));
    for (auto& d : diff_mounts(mounts[0], mounts[1], probes, *table)) out.push_back(std::move(d));
  }
  if (before.seccomp_bpf != after.seccomp_bpf) {
    auto programs_diff = diff_programs(programs[0], programs[1]);
    if (auto* e = std::get_if<ProgramDiffError>(&programs_diff))
      return ArtifactError{
          e->after, "seccomp.bpf", 0,
          e->instruction ? "instruction " + std::to_string(*e->instruction) + ": " + e->message
                         : e->message};
    for (auto& d : std::get<std::vector<Difference>>(programs_diff)) out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const Difference& x, const Difference& y) {
    return static_cast<int>(x.area) < static_cast<int>(y.area);
  });
  return out;
}

namespace {

// One side's profile, parsed and bound to its parameters (which it views).
struct BoundProfile {
  std::string params_text;
  SbplParams params;
  SbplProfile profile;
};

std::variant<std::unique_ptr<BoundProfile>, ArtifactError> bind(const MacosArtifacts& side,
                                                                 bool second) {
  auto out = std::make_unique<BoundProfile>();
  out->params_text = side.params_txt;
  auto list = parse_params_text(out->params_text);
  if (!list) return ArtifactError{second, "params.txt", 0, list.error().message};
  out->params = SbplParams(list->begin(), list->end());
  auto parsed = parse_sbpl(side.profile_sb);
  if (!parsed)
    return ArtifactError{second, "profile.sb", parsed.error().loc.line, parsed.error().message};
  out->profile = bind_params(std::move(*parsed), out->params);
  if (auto missing = unbound_params(out->profile); !missing.empty())
    return ArtifactError{second, "params.txt", 0, "parameter " + missing.front() + " is not defined"};
  return out;
}

// Every path a literal or subpath filter of the profile names.
void named_paths(const SbplProfile& p, std::set<std::string>& out) {
  for (const auto& f : p.filters)
    if (f.kind == SbplFilter::Kind::Literal || f.kind == SbplFilter::Kind::Subpath) {
      const std::string_view v = f.is_param && f.param_value ? *f.param_value : f.value;
      if (!v.empty() && (v.front() == '/' || v.front() == '$')) out.emplace(v);
    }
}

struct Verdict {
  bool allowed = false;  // under some model
  Side side;
};

Verdict ask(const BoundProfile& b, const std::string& op, const std::string& target) {
  const auto decisions = decide_all_models(b.profile, op, target, b.params);
  Verdict v;
  const SbplDecision* deciding = &decisions.front();
  for (const auto& d : decisions)
    if (d.allowed && !v.allowed) {
      v.allowed = true;
      deciding = &d;
    }
  const int line = deciding->rule >= 0 ? b.profile.rules[static_cast<size_t>(deciding->rule)].line : 0;
  v.side = {v.allowed ? "allowed" : "denied", deciding->trace, {"profile.sb", line, line ? 1 : 0}};
  return v;
}

}  // namespace

std::variant<std::vector<Difference>, ArtifactError> diff_macos_artifacts(
    const MacosArtifacts& before, const MacosArtifacts& after) {
  std::unique_ptr<BoundProfile> sides[2];
  for (int i = 0; i < 2; ++i) {
    auto bound = bind(i ? after : before, i == 1);
    if (auto* e = std::get_if<ArtifactError>(&bound)) return *e;
    sides[i] = std::get<std::unique_ptr<BoundProfile>>(std::move(bound));
  }
  std::set<std::string> named = {"/"};
  named_paths(sides[0]->profile, named);
  named_paths(sides[1]->profile, named);
  std::set<std::string> probes = {"/", "/" + std::string(kFresh)};
  for (const auto& n : named) {
    const auto p = SymbolicPath::parse(n);
    if (!p) continue;
    probes.insert(p->str());
    probes.insert(p->child(kFresh).str());
    if (auto up = p->parent()) probes.insert(up->str());
  }
  std::map<RowKey, Difference> rows;
  std::vector<RowKey> order;
  auto compare = [&](Area area, const std::string& op, const std::string& target) {
    const Verdict was = ask(*sides[0], op, target), now = ask(*sides[1], op, target);
    if (was.allowed == now.allowed) return;
    const RowKey key{now.allowed, was.side.verdict, was.side.loc.str(), now.side.verdict,
                     now.side.loc.str()};
    auto [it, fresh] = rows.try_emplace(key);
    Difference& d = it->second;
    if (fresh) {
      order.push_back(key);
      d.targets = {ir::Target::Macos};
      d.area = area;
      d.path_class = area == Area::Filesystem ? "the path" : "";
      d.direction = now.allowed ? Direction::Widening : Direction::Narrowing;
      d.before = was.side;
      d.after = now.side;
    }
    if (std::find(d.operations.begin(), d.operations.end(), op) == d.operations.end())
      d.operations.push_back(op);
    if (std::find(d.paths.begin(), d.paths.end(), target) == d.paths.end()) d.paths.push_back(target);
  };
  for (const auto& path : probes)
    for (const char* op : {"file-read-data", "file-write-data", "file-write-create",
                           "file-write-unlink", "process-exec"})
      compare(Area::Filesystem, op, path);
  for (const char* dest : {"localhost:5432", "example.com:443"})
    compare(Area::Network, "network-outbound", dest);
  std::vector<Difference> out;
  for (const auto& k : order) {
    Difference d = std::move(rows[k]);
    d.subject = d.paths.front() +
                (d.paths.size() > 1 ? " and " + std::to_string(d.paths.size() - 1) + " more" : "");
    if (d.area == Area::Network) d.paths.clear();
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const Difference& x, const Difference& y) {
    return static_cast<int>(x.area) < static_cast<int>(y.area);
  });
  return out;
}

}  // namespace zpolicy::compiler::review
