#include "compiler/sbpl_verify.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/sbpl_evaluator.hpp"

namespace zpolicy::compiler {
namespace {

using ir::Mode;
using ir::ResolvedPath;
using ir::SourceLoc;

std::optional<std::string> parent_of(std::string_view path) {
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos || path == "/") return std::nullopt;
  if (slash == 0) return std::string("/");
  return std::string(path.substr(0, slash));
}

// Files a confined process must be able to read to start at all, whatever its read roots
// (docs/macos.md, "Platform read defaults"). Reads there are neither required nor refused
// by a policy, so probes that land there are not judged.
bool platform_runtime_path(std::string_view path) {
  for (const char* p : {"/", "/etc", "/tmp", "/var"})
    if (path == p) return true;
  for (const char* p : {"/System", "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/lib",
                        "/usr/libexec", "/usr/share", "/private/etc", "/Library/Apple",
                        "/Library/Preferences", "/private/var/db/timezone", "/dev"})
    if (ir::path_within(p, path)) return true;
  return false;
}

// Seatbelt compares paths as strings after resolving them, so a parameter must already be
// in the one spelling the kernel reports: absolute (or a symbolic variable), no empty,
// "." or ".." component, no trailing slash.
bool normalized(std::string_view v) {
  if (v == "/") return true;
  if (v.starts_with("${")) {
    auto close = v.find('}');
    if (close == std::string_view::npos) return false;
    v.remove_prefix(close + 1);
    if (v.empty()) return true;
  }
  if (!v.starts_with('/') || v.ends_with('/')) return false;
  for (std::string_view bad : {"//", "/./", "/../"})
    if (v.find(bad) != std::string_view::npos) return false;
  return !v.ends_with("/.") && !v.ends_with("/..");
}

struct Verdict {
  SbplIntent intent = SbplIntent::Unspecified;
  SourceLoc loc;
  std::string why;
};

Verdict allow(SourceLoc loc, std::string why) {
  return {SbplIntent::Allow, std::move(loc), std::move(why)};
}
Verdict deny(SourceLoc loc, std::string why) {
  return {SbplIntent::Deny, std::move(loc), std::move(why)};
}
Verdict unspecified(std::string why) { return {SbplIntent::Unspecified, {}, std::move(why)}; }

bool is_read(std::string_view op) { return op.starts_with("file-read"); }

// `path` itself, each of its ancestors, and "/": every root that ir::path_within()
// says holds `path` is one of these.
template <class F>
void for_each_holder(std::string_view path, F&& fn) {
  fn(path);
  for (size_t i = path.size(); i-- > 1;)
    if (path[i] == '/') fn(path.substr(0, i));
  if (path != "/") fn(std::string_view("/"));
}

// The first root of a list (in policy order) that holds a path, found by looking up the
// path's ancestors rather than testing every root: probes are made for every root, so a
// scan made the verifier quadratic.
class RootIndex {
 public:
  explicit RootIndex(const std::vector<ResolvedPath>& roots) : roots_(roots) {
    for (size_t i = 0; i < roots.size(); ++i) first_.emplace(roots[i].path, i);
  }
  const ResolvedPath* containing(std::string_view path) const {
    std::optional<size_t> best;
    for_each_holder(path, [&](std::string_view holder) {
      if (auto it = first_.find(holder); it != first_.end() && (!best || it->second < *best))
        best = it->second;
    });
    return best ? &roots_[*best] : nullptr;
  }

 private:
  const std::vector<ResolvedPath>& roots_;
  std::map<std::string, size_t, std::less<>> first_;
};

// What the policy says about file operations, with its roots indexed once.
class FileIntent {
 public:
  explicit FileIntent(const ir::Resolved& r)
      : r_(r), read_(r.read), write_(r.write), protect_(r.protect), deny_(r.deny) {
    // The first protected path below (or at) each directory.
    for (size_t i = 0; i < r.protect.size(); ++i)
      for_each_holder(r.protect[i].path,
                      [&](std::string_view a) { protected_below_.emplace(std::string(a), i); });
  }
  Verdict operator()(std::string_view op, const std::string& path) const;
  Verdict exec(const std::string& path) const;  // process-exec of the file at `path`

 private:
  const ir::Resolved& r_;
  RootIndex read_, write_, protect_, deny_;
  std::map<std::string, size_t, std::less<>> protected_below_;
};

Verdict FileIntent::operator()(std::string_view op, const std::string& path) const {
  if (r_.mode == Mode::DangerFullAccess) return allow({}, "danger-full-access");
  if (const auto* d = deny_.containing(path)) return deny(d->loc, "deny root " + d->path);
  if (is_read(op)) {
    if (const auto* rd = read_.containing(path)) return allow(rd->loc, "read root " + rd->path);
    if (platform_runtime_path(path)) return unspecified("platform runtime path");
    return deny({}, "outside every read root");
  }
  if (r_.mode == Mode::ReadOnly) return deny({}, "read-only mode");
  if (const auto* p = protect_.containing(path)) return deny(p->loc, "protected path " + p->path);
  const ResolvedPath* w = write_.containing(path);
  if (!w) return deny({}, "outside every writable root");
  if (op == "file-link") return unspecified("hard link inside a writable root");
  if (auto it = protected_below_.find(path); it != protected_below_.end()) {
    const ResolvedPath& p = r_.protect[it->second];
    if (op == "file-write-unlink")
      return deny(p.loc, "directory above protected path " + p.path +
                             ": renaming or removing it would carry the protected path away");
    return unspecified("directory above a protected path");
  }
  if (path == w->path) return unspecified("the writable root itself");
  return allow(w->loc, "writable root " + w->path);
}

Verdict network_intent(const ir::Resolved& r, std::string_view target) {
  if (r.mode == Mode::DangerFullAccess) return allow({}, "danger-full-access");
  ir::Network n = r.mode == Mode::ReadOnly ? ir::Network::None : r.network;
  std::string why = std::string("network: ") + ir::to_string(n);
  switch (n) {
    case ir::Network::None:
      return deny({}, why);
    case ir::Network::Loopback:
      return target.starts_with("localhost:") ? allow({}, why) : deny({}, why);
    case ir::Network::Full:
      return allow({}, why);
  }
  return deny({}, why);
}

Verdict FileIntent::exec(const std::string& path) const {
  if (r_.mode == Mode::DangerFullAccess) return allow({}, "danger-full-access");
  if (const auto* d = deny_.containing(path)) return deny(d->loc, "deny root " + d->path);
  if (const auto* rd = read_.containing(path)) return allow(rd->loc, "read root " + rd->path);
  return unspecified("outside every read root");
}

Verdict process_intent(const ir::Resolved& r, std::string_view op, std::string_view target) {
  if (op == "process-fork") return allow({}, "the command must run");
  if (target == "same-sandbox") return allow({}, "processes of the sandbox itself");
  if (r.mode == Mode::DangerFullAccess) return allow({}, "danger-full-access");
  return deny({}, "host processes are out of reach");
}

constexpr const char* kFileOperations[] = {
    "file-read-data",    "file-read-metadata", "file-write-data", "file-write-create",
    "file-write-unlink", "file-write-mode",    "file-link",
};

std::set<std::string> probe_paths(const ir::Resolved& r) {
  std::set<std::string> paths = {"/zp-outside", "/etc/zp-outside", "/usr/local/zp-outside"};
  auto family = [&](const std::string& p) {
    paths.insert(p);
    paths.insert(p + "/zp-probe");
    paths.insert(p + "/zp-dir/zp-probe");
    paths.insert(p + "hub");  // shares the prefix: ".git" vs ".github", "/a/b" vs "/a/bhub"
    if (auto parent = parent_of(p)) {
      paths.insert(*parent);
      paths.insert(*parent == "/" ? "/zp-sibling" : *parent + "/zp-sibling");
    }
  };
  for (const auto* group : {&r.read, &r.write, &r.protect, &r.deny, &r.pin})
    for (const auto& p : *group) family(p.path);
  for (const auto& p : r.protect)
    for (auto a = parent_of(p.path); a; a = parent_of(*a)) paths.insert(*a);
  return paths;
}

using Answers = std::vector<std::pair<const SbplModel*, SbplDecision>>;

// Models that reached the same answer by the same rule share one line of the trace.
std::vector<std::string> describe(const Answers& answers) {
  std::map<std::string, std::string> by_trace;
  std::vector<std::string> order;
  for (const auto& [m, d] : answers) {
    auto [it, fresh] = by_trace.emplace(d.trace, m->str());
    if (fresh)
      order.push_back(d.trace);
    else
      it->second += ", " + m->str();
  }
  std::vector<std::string> out;
  for (const auto& t : order) out.push_back(by_trace[t] + ": " + t);
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

SbplFinding malformed(ir::SourceLoc loc, std::string what, std::string expected,
                      std::string actual) {
  return {SbplFinding::Kind::MalformedArtifact,
          std::move(loc),
          std::move(what),
          std::move(expected),
          std::move(actual),
          {}};
}

}  // namespace

const char* to_string(SbplFinding::Kind k) {
  switch (k) {
    case SbplFinding::Kind::MalformedArtifact:
      return "malformed-artifact";
    case SbplFinding::Kind::NotCanonical:
      return "not-canonical";
    case SbplFinding::Kind::DroppedDeny:
      return "dropped-deny";
    case SbplFinding::Kind::MissingAllow:
      return "missing-allow";
    case SbplFinding::Kind::Ambiguous:
      return "ambiguous-precedence";
  }
  return "malformed-artifact";
}

std::string SbplFinding::str() const {
  std::string out = loc.str() + ": error: macos: " + to_string(kind) + ": " + probe +
                    ": expected " + expected + ", artifact gives " + actual + "\n";
  for (const auto& t : trace) out += "    " + t + "\n";
  return out;
}

std::vector<SbplProbe> sbpl_probes(const ir::Resolved& r) {
  std::vector<SbplProbe> out;
  auto add = [&](std::string op, std::string target, Verdict v) {
    out.push_back({std::move(op), std::move(target), v.intent, std::move(v.loc), std::move(v.why)});
  };
  const FileIntent file_intent(r);
  for (const auto& path : probe_paths(r)) {
    for (const char* op : kFileOperations) add(op, path, file_intent(op, path));
    add("process-exec", path, file_intent.exec(path));
  }
  for (const char* op : {"network-bind", "network-inbound", "network-outbound"})
    for (const char* t : {"localhost:8080", "192.0.2.1:8080"}) add(op, t, network_intent(r, t));
  add("network-outbound", "unix:/private/var/run/docker.sock",
      network_intent(r, "unix:/private/var/run/docker.sock"));
  add("process-exec", "/bin/sh", file_intent.exec("/bin/sh"));
  add("process-fork", "", process_intent(r, "process-fork", ""));
  for (const char* op : {"signal", "process-info-pidinfo"})
    for (const char* t : {"same-sandbox", "host-process"}) add(op, t, process_intent(r, op, t));
  return out;
}

std::vector<SbplFinding> verify_sbpl(
    const ir::Resolved& policy, std::string_view profile_text,
    const std::vector<std::pair<std::string, std::string>>& params) {
  std::vector<SbplFinding> findings;
  auto parsed = parse_sbpl(profile_text);
  if (auto* err = std::get_if<SbplError>(&parsed)) {
    findings.push_back(malformed({"profile.sb", err->line, err->col}, "profile.sb",
                                 "the SBPL subset zpolicy emits", err->message));
    return findings;
  }
  const auto& unbound = std::get<SbplProfile>(parsed);

  const ir::SourceLoc params_file{"params.txt"};
  SbplParams values;
  for (const auto& [name, value] : params) {
    const std::string what = "parameter " + name;
    if (value.find_first_of(std::string("\n\0", 2)) != std::string::npos)
      findings.push_back(malformed(params_file, what, "a path", "a value with a newline or NUL"));
    else if (!normalized(value))
      findings.push_back(malformed(params_file, what, "a normalized absolute path", value));
    if (!values.emplace(name, value).second)
      findings.push_back(malformed(params_file, what, "one definition", "a second definition"));
  }
  for (const auto& name : referenced_params(unbound))
    if (!values.contains(name))
      findings.push_back(malformed(params_file, "parameter " + name,
                                   "a definition (the profile reads it)", "none"));
  if (!findings.empty()) return findings;
  if (!policy.portable) {
    for (const auto& [name, value] : params)
      for (const char* link : {"/tmp", "/var", "/etc"})
        if (ir::path_within(link, value))
          findings.push_back({SbplFinding::Kind::NotCanonical,
                              params_file,
                              "parameter " + name,
                              std::string("a canonical macOS path (") + link +
                                  " is a symlink to /private" + link +
                                  "; Seatbelt matches the resolved path)",
                              value + ", on which a rule would never apply",
                              {}});
  }
  const SbplProfile profile = bind_params(unbound, values);

  for (const auto& probe : sbpl_probes(policy)) {
    // Without traces first: they are needed only for a finding.
    auto decisions = decide_all_models(profile, probe.operation, probe.target, values, false);
    const bool agree = std::all_of(decisions.begin(), decisions.end(), [&](const SbplDecision& d) {
      return d.allowed == decisions.front().allowed;
    });
    const bool right = probe.intent == SbplIntent::Unspecified ||
                       decisions.front().allowed == (probe.intent == SbplIntent::Allow);
    if (agree && right) continue;
    decisions = decide_all_models(profile, probe.operation, probe.target, values);
    Answers answers;
    for (size_t i = 0; i < decisions.size(); ++i)
      answers.emplace_back(&all_sbpl_models()[i], std::move(decisions[i]));
    const std::string what = probe.operation + (probe.target.empty() ? "" : " " + probe.target);
    Answers wrong;
    for (const auto& a : answers) {
      if ((probe.intent == SbplIntent::Deny && a.second.allowed) ||
          (probe.intent == SbplIntent::Allow && !a.second.allowed))
        wrong.push_back(a);
    }
    if (!wrong.empty()) {
      bool dropped = probe.intent == SbplIntent::Deny;
      findings.push_back(
          {dropped ? SbplFinding::Kind::DroppedDeny : SbplFinding::Kind::MissingAllow, probe.loc,
           what, std::string(dropped ? "deny" : "allow") + " (" + probe.why + ")",
           answers_summary(wrong), describe(wrong)});
      continue;
    }
    if (probe.intent != SbplIntent::Unspecified) continue;
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
        findings.push_back({SbplFinding::Kind::Ambiguous, probe.loc, what,
                            "the same answer under every precedence (" + probe.why + ")",
                            answers_summary(group), describe(group)});
        break;
      }
    }
  }
  return findings;
}

std::optional<SbplExplanation> explain_sbpl(
    const ir::Resolved& policy, std::string_view profile_text,
    const std::vector<std::pair<std::string, std::string>>& params, std::string_view operation,
    std::string_view path, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<SbplExplanation> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  std::string op = operation == "read"     ? "file-read-data"
                   : operation == "write"  ? "file-write-data"
                   : operation == "create" ? "file-write-create"
                                           : std::string(operation);
  bool known = false;
  for (const char* o : kFileOperations) known = known || op == o;
  if (!known) return fail("unknown operation '" + std::string(operation) + "'");
  auto parsed = parse_sbpl(profile_text);
  if (auto* err = std::get_if<SbplError>(&parsed)) return fail(err->str());
  SbplParams values(params.begin(), params.end());
  for (const auto& name : referenced_params(std::get<SbplProfile>(parsed)))
    if (!values.contains(name)) return fail("parameter " + name + " is not defined");
  const SbplProfile profile = bind_params(std::get<SbplProfile>(parsed), values);

  SbplExplanation out;
  Verdict v = FileIntent(policy)(op, std::string(path));
  out.policy = {op, std::string(path), v.intent, std::move(v.loc), std::move(v.why)};
  auto decisions = decide_all_models(profile, op, path, values);
  Answers answers;
  for (size_t i = 0; i < decisions.size(); ++i)
    answers.emplace_back(&all_sbpl_models()[i], decisions[i]);
  out.allowed = decisions.front().allowed;  // all_sbpl_models() starts with last-match
  out.models_agree = true;
  for (const auto& d : decisions) out.models_agree = out.models_agree && d.allowed == out.allowed;
  out.trace = describe(answers);
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> parse_params_text(
    std::string_view text, std::string* error) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string, std::less<>> names;
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    auto eq = line.find('=');
    auto fail = [&](const std::string& why) {
      if (error) *error = "params.txt:" + std::to_string(line_no) + ": " + why;
      return std::nullopt;
    };
    if (eq == std::string_view::npos) return fail("expected NAME=VALUE");
    std::string name(line.substr(0, eq));
    if (name.empty()) return fail("empty parameter name");
    if (!names.insert(name).second) return fail("parameter " + name + " is defined twice");
    out.emplace_back(std::move(name), std::string(line.substr(eq + 1)));
  }
  return out;
}

}  // namespace zpolicy::compiler
