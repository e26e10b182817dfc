#include "compiler/pipeline.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/verify.hpp"
#include "compiler/resolve/dir_fd.hpp"
#include "emitters/bwrap/bwrap_emitter.hpp"
#include "emitters/sbpl/profile.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"

namespace zpolicy::compiler {

std::vector<Artifact> emit_artifacts(const ir::Resolved& r, Target target, ArtifactSet set) {
  std::vector<Artifact> out;
  if (target == Target::Linux) {
    namespace bw = emitters::bwrap;
    if (set == ArtifactSet::All) {
      out.push_back({"bwrap.args", bw::args_text(bw::emit_args(r))});
    } else {
      auto emitted = bw::emit(r, bw::BindForm::Descriptor);
      out.push_back({"bwrap.args", bw::args_text(emitted.args)});
      out.push_back({"bwrap.fds", bw::sources_text(emitted.sources)});
    }
    out.push_back({"seccomp.bpf", emitters::seccomp::emit_bpf(r.syscalls), true});
    if (set == ArtifactSet::All)
      out.push_back({"seccomp.txt", emitters::seccomp::emit_listing(r.syscalls)});
  } else {
    auto profile = emitters::sbpl::emit(r);
    out.push_back({"profile.sb", profile.text});
    out.push_back({"params.txt", emitters::sbpl::params_text(profile)});
  }
  return out;
}

namespace {

// The first line of `given` that is not the one of `expected` at its place (or is one too
// many, or missing), as a finding at that line of seccomp.txt.
std::optional<ir::Diagnostic> listing_difference(std::string_view given,
                                                 std::string_view expected) {
  if (given == expected) return std::nullopt;
  // Split at every newline, keeping what follows the last one (empty when the text ends
  // with a newline), so that a missing or extra final newline is a difference too.
  auto lines = [](std::string_view text) {
    std::vector<std::string_view> out;
    for (size_t at = 0;;) {
      const size_t nl = text.find('\n', at);
      out.push_back(text.substr(at, nl == std::string_view::npos ? nl : nl - at));
      if (nl == std::string_view::npos) return out;
      at = nl + 1;
    }
  };
  const auto g = lines(given), e = lines(expected);
  const size_t n = std::min(g.size(), e.size());
  size_t i = 0;
  while (i < n && g[i] == e[i]) ++i;
  // `i` is the first piece that differs; the line it is on, and what is there.
  auto quoted = [](std::string_view text) {
    constexpr size_t kShown = 160;  // a hostile line may be a megabyte long
    return "`" + std::string(text.substr(0, kShown)) + (text.size() > kShown ? "…`" : "`");
  };
  int line = static_cast<int>(i + 1);
  std::string what;
  if (i == n && g.size() < e.size()) {  // the listing stops inside the expected one
    line = static_cast<int>(i);
    what = i + 1 == e.size()
               ? "a last line without a newline"
               : "the end of the listing where zpolicy writes " + quoted(e[i]) + " next";
  } else if (i == n || i + 1 == e.size()) {  // the expected listing ends before this line
    line = static_cast<int>(i == n ? i : i + 1);
    what = quoted(g[line - 1]) + " after the last line zpolicy writes";
  } else if (i + 1 == g.size() && g[i].empty()) {
    what = "the end of the listing where zpolicy writes " + quoted(e[i]);
  } else {
    what = quoted(g[i]) + " where zpolicy writes " + quoted(e[i]);
  }
  return ir::finding("linux", "malformed-artifact", {"seccomp.txt", line, 1}, "seccomp.txt",
                     "the listing zpolicy writes for this policy", what);
}

// A Linux sandbox has a procfs of its own at /proc, read-only (DESIGN.md; docs/decisions.md
// "A deny root at or below /proc"): the host's /proc is never there, and zpolicy masks
// nothing inside the sandbox's own, where an emitted mask would either fail (bwrap cannot
// make a mount point for an entry procfs lacks) or cover the sandbox's entry, not the
// object the policy named (its pids are not the host's). Such a deny root is refused at
// its line rather than found as a dropped deny by the verifier.
bool refuse_deny_roots_in_proc(const ir::Resolved& r, ir::Diagnostics& diags) {
  bool refused = false;
  for (const auto& d : r.deny) {
    if (!ir::path_within("/proc", d.path)) continue;
    diags.error(d.loc, "the deny root '" + d.path.substr(0, 200) +
                           (d.path.size() > 200 ? "...'" : "'") +
                           " is at or below /proc, which a Linux sandbox mounts as a procfs "
                           "of its own, read-only: the host's is not there to deny, and "
                           "zpolicy does not mask entries of the sandbox's own; remove it "
                           "(docs/decisions.md)");
    refused = true;
  }
  return refused;
}

}  // namespace

std::optional<ir::Resolved> resolve_for_target(const ir::Policy& policy, Target target,
                                               ir::Mode mode, const std::optional<HostFacts>& host,
                                               ir::Diagnostics& diags) {
  if (!ir::is_confined(mode)) {
    diags.error(policy.mode.loc.line ? policy.mode.loc : policy.origin,
                "nothing to compile: danger-full-access runs without a sandbox "
                "(use --mode to compile a narrower mode)");
    return std::nullopt;
  }
  if (!host) {
    auto portable = resolve_portable(policy, mode, diags);
    if (portable && target == Target::Linux && refuse_deny_roots_in_proc(*portable, diags))
      return std::nullopt;
    return portable;
  }
  const HostOs needed = target == Target::Linux ? HostOs::Linux : HostOs::Macos;
  if (host->os != needed) {
    diags.error({"<command line>"},
                std::string("--workspace binds the policy to this host's paths, and this host "
                            "is not ") +
                    (target == Target::Linux ? "Linux" : "macOS") + "; compile the " +
                    to_string(target) + " target without --workspace (portable) instead");
    return std::nullopt;
  }
  auto bound = resolve_for_host(policy, mode, *host, diags);
  if (bound && target == Target::Linux && refuse_deny_roots_in_proc(*bound, diags))
    return std::nullopt;
  // Only bwrap needs a missing protected path to exist (runner/placeholders); Seatbelt's
  // literal + subpath pair refuses creating it, so a macOS run creates nothing.
  if (bound && target == Target::Linux) assume_placeholders(*bound);
  return bound;
}

namespace {

// The operations of a bound bwrap.args whose paths pass through a link on this host.
// bwrap mounts what a source's link leads to (`--ro-bind /var/run/secret /tmp/x` is
// /run/secret, with /var/run -> /run), the verifier judges the path as written, and a
// bound artifact of zpolicy names every source canonically. Destinations the same: bwrap
// looks them up from its setup root, where /oldroot is the host's root, so a link the
// workspace holds (`WS/l -> /oldroot/etc`) makes `--ro-bind /dev/null WS/l/x` create
// /etc/x on the host (accepted before 2026-12-06; red team verify18). A destination's
// host object below a bind is the bind's source rebased; what a tmpfs or bwrap's own
// root holds is the verifier's (--symlink). Portable artifacts are left alone: their
// sources mean whatever the host they run on makes of them (`--ro-bind /bin /bin`), and
// their symbolic roots name no host path here.
void check_host_links(const ir::Resolved& r, const std::vector<Artifact>& artifacts,
                      std::vector<ir::Diagnostic>& out) {
  auto artifact = [&](std::string_view name) -> const Artifact* {
    const auto a = std::find_if(artifacts.begin(), artifacts.end(),
                                [&](const Artifact& a) { return a.name == name; });
    return a == artifacts.end() ? nullptr : &*a;
  };
  const Artifact* args = artifact("bwrap.args");
  if (r.portable || !args) return;
  const Artifact* fds = artifact("bwrap.fds");
  const auto argv =
      parse_bwrap_args(args->content, std::make_shared<PathTable>(PathSpelling::Bound),
                       fds ? std::optional<std::string_view>(fds->content) : std::nullopt);
  if (!argv) return;  // reported by the verifier
  auto refuse = [&](const BwrapOp& op, const std::string& what, const std::string& link) {
    out.push_back(ir::finding(
        "linux", "malformed-artifact", {"bwrap.args", op.line, 1}, "bwrap.args",
        what + " as a bound artifact names them, with no link on the way",
        std::string(op.text) + ": " + link + ", which bwrap follows and the verifier does not"));
  };
  // The mounts made so far, by destination (the latest at each): when, and the host
  // object a bind shows there (none: a tmpfs, bwrap's own root).
  struct Mounted {
    size_t step;
    std::optional<PathTable::Id> source;
  };
  const PathTable& paths = *argv->paths;
  std::unordered_map<PathTable::Id, Mounted> mounts;
  std::set<std::pair<size_t, PathTable::Id>> asked;  // stretches looked up: mount step, end
  std::optional<PathTable::Id> opened;               // the source `from` holds
  std::optional<DirFd> from;
  std::vector<PathTable::Id> lineage;
  for (size_t step = 0; step < argv->ops.size(); ++step) {
    const BwrapOp& op = argv->ops[step];
    std::optional<std::string> source;
    if (op.source) source = paths.path(*op.source).str();
    if (source && source->starts_with('/') && !op.source_fd)
      if (const auto link = host_link_on_the_way(*source))
        refuse(op, "bind sources", *link + " is a link on this host");
    if (!paths.path(op.dest).str().starts_with('/')) continue;
    lineage = {op.dest};
    while (lineage.back() != PathTable::kRoot) lineage.push_back(paths.up(lineage.back()));
    // Down from "/": a mount is visible unless one made later lies above it. Each stretch
    // of the path inside one bind is looked up once, from the bind's source, by a lookup
    // that fails on any link (RESOLVE_NO_SYMLINKS), so that a deep path costs its depth
    // once. --symlink and --dir make their last component; the others follow it.
    const bool makes_last = op.kind == BwrapOpKind::Symlink || op.kind == BwrapOpKind::Dir;
    std::optional<size_t> latest;
    std::optional<PathTable::Id> shown;  // the host object the visible bind shows
    std::string rel;                     // the stretch below it, relative
    PathTable::Id last = PathTable::kRoot;
    auto stretch_has_link = [&] {
      // A stretch is asked once: later operations below it walk it again.
      if (!shown || rel.empty() || !asked.emplace(*latest, last).second) return false;
      if (opened != *shown) {
        from.emplace(paths.path(*shown).str(), DirFd::Link::Follow);
        opened = *shown;
      }
      if (from->get() < 0) return false;
      const int to = open_without_links_at(from->get(), rel, O_PATH);
      if (to >= 0) close(to);
      return to < 0 && errno == ELOOP;
    };
    bool linked = false;
    for (auto it = lineage.rbegin(); it != lineage.rend() && !linked; ++it) {
      if (const auto m = mounts.find(*it);
          m != mounts.end() && (!latest || m->second.step > *latest)) {
        // The mounted object itself: its source's links were followed.
        linked = stretch_has_link();
        latest = m->second.step;
        shown = m->second.source;
        rel.clear();
        continue;
      }
      if (*it == PathTable::kRoot || (makes_last && it + 1 == lineage.rend())) continue;
      if (!rel.empty()) rel += '/';
      rel += paths.name(*it);
      last = *it;
    }
    if (linked || stretch_has_link())
      refuse(op, "destinations",
             "the way to " + paths.path(last).str() + " holds a link on this host");
    if (!is_mount(op.kind)) continue;
    if (op.try_source && source && access(source->c_str(), F_OK) != 0) continue;  // skipped
    mounts[op.dest] = Mounted{
        step, op.source_fd || (source && source->starts_with('/')) ? op.source : std::nullopt};
  }
}

}  // namespace

std::vector<ir::Diagnostic> verify_given_artifacts(const ir::Resolved& r, Target target,
                                                   const std::vector<Artifact>& artifacts) {
  auto out = verify_artifacts(r, target, artifacts, ArtifactSet::All, true);
  if (target != Target::Linux || !ir::is_confined(r.mode)) return out;
  check_host_links(r, artifacts, out);
  const auto listing = std::find_if(artifacts.begin(), artifacts.end(),
                                    [](const Artifact& a) { return a.name == "seccomp.txt"; });
  // A missing or untrue listing is reported already, at the line the verifier found
  // wrong: the more telling of two findings on one file.
  const bool reported = std::any_of(out.begin(), out.end(), [](const ir::Diagnostic& d) {
    return d.loc.file == "seccomp.txt" || d.probe == "seccomp.txt";
  });
  if (listing == artifacts.end() || reported) return out;
  if (auto d = listing_difference(listing->content, emitters::seccomp::emit_listing(r.syscalls)))
    out.push_back(std::move(*d));
  return out;
}

std::optional<Compiled> compile(const ir::Policy& policy, Target target, ir::Mode mode,
                                const std::optional<HostFacts>& host, ir::Diagnostics& diags,
                                ArtifactSet set, Proof proof) {
  auto r = resolve_for_target(policy, target, mode, host, diags);
  if (!r) return std::nullopt;
  Compiled c{std::move(*r), {}, {}};
  c.findings = inexpressible(c.resolved, target);
  if (!c.findings.empty()) return c;
  c.artifacts = emit_artifacts(c.resolved, target, set);
  c.findings = proof == Proof::MountPlanOnly && target == Target::Linux
                   ? verify_linux_part(c.resolved, LinuxPart::Mounts, c.artifacts, set)
                   : verify_artifacts(c.resolved, target, c.artifacts, set);
  return c;
}

}  // namespace zpolicy::compiler
