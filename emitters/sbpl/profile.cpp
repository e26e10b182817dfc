#include "emitters/sbpl/profile.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/macos_sysctls.hpp"

namespace zpolicy::emitters::sbpl {
namespace {

// The parent of "/a/b" is "/a", of "/a" is "/"; a bare variable ("${WORKSPACE}") has no
// parent we can name portably.
std::optional<std::string> parent_of(std::string_view path) {
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos || path == "/") return std::nullopt;
  if (slash == 0) return std::string("/");
  return std::string(path.substr(0, slash));
}

// In first-seen order. Sets keep this and the look-ups below linear in the policy's size:
// a policy may list tens of thousands of protected paths (docs/benchmarks.md).
std::vector<std::string> unique_paths(const std::vector<ir::ResolvedPath>& paths) {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  for (const auto& p : paths)
    if (seen.insert(p.path).second) out.push_back(p.path);
  return out;
}

// Whether `path` is one of `roots` or lies below one (ir::path_within against each).
bool within_any(const std::unordered_set<std::string_view>& roots, std::string_view path) {
  if (roots.contains("/") || roots.contains(path)) return true;
  for (size_t i = path.find('/'); i != std::string_view::npos; i = path.find('/', i + 1))
    if (roots.contains(path.substr(0, i))) return true;
  return false;
}

// Long enough to tell paths apart in review, short enough to read.
constexpr size_t kMaxPathPart = 48;

std::string param(const std::string& name) { return "(param \"" + name + "\")"; }

// A path the profile refers to, by the parameter that carries it.
struct Named {
  std::string name;
  std::string value;
};

class Builder {
 public:
  explicit Builder(const ir::Resolved& r) : r_(r) {}

  Profile build() {
    name_paths();
    line("; zpolicy Seatbelt profile for sandbox-exec -p; every host path is a -D parameter.");
    if (r_.mode == ir::Mode::DangerFullAccess) {
      line("; danger-full-access: no confinement (zpolicy run does not start sandbox-exec).");
      line("(version 1)");
      line("(allow default)");
      return finish();
    }
    line("(version 1)");
    line("(deny default)");
    process_primitives();
    if (full_read_) {
      reads_everywhere();
    } else {
      platform_read_defaults();
      reads_in_roots();
    }
    if (r_.mode == ir::Mode::WorkspaceWrite) writes();
    network();
    denials();
    return finish();
  }

 private:
  void name_paths() {
    for (const auto& p : unique_paths(r_.read)) full_read_ = full_read_ || p == "/";
    if (!full_read_) read_ = name_each("READ_ROOT", unique_paths(r_.read));
    if (r_.mode == ir::Mode::WorkspaceWrite) {
      write_ = name_each("WRITABLE_ROOT", unique_paths(r_.write));
      protect_ = name_each("PROTECTED", unique_paths(r_.protect));
    }
    deny_ = name_each("DENY_ROOT", unique_paths(r_.deny));
    if (r_.mode != ir::Mode::WorkspaceWrite) return;
    std::unordered_set<std::string_view> writable, protected_paths;
    std::unordered_map<std::string_view, const Named*> writable_named;
    for (const auto& w : write_) {
      writable.insert(w.value);
      writable_named.try_emplace(w.value, &w);
    }
    for (const auto& p : protect_) protected_paths.insert(p.value);
    std::vector<std::string> ancestors;
    std::unordered_set<std::string> known;
    // The directories above a protected path or a deny root, inside a writable root: a
    // rename of one would carry the path away from its rule. A symbolic writable root may
    // be bound anywhere, so above a concrete path every directory but "/" may lie inside
    // one, and so may every directory under another symbolic root, that root's own
    // included (`${HOME}` inside `${TMPDIR}`; docs/verify.md, "Portable profiles" and
    // "Nested symbolic roots").
    auto variable = [](std::string_view path) {
      return path.starts_with("${") ? path.substr(0, path.find('}') + 1) : std::string_view();
    };
    std::unordered_set<std::string_view> writable_variables;
    for (const auto& w : write_)
      if (!variable(w.value).empty()) writable_variables.insert(variable(w.value));
    auto may_be_writable = [&](std::string_view a) {
      if (a == "/" || writable_variables.empty()) return false;
      const std::string_view own = variable(a);
      return own.empty() || writable_variables.size() > 1 || !writable_variables.contains(own);
    };
    std::vector<const Named*> guarded;
    for (const auto& p : protect_) guarded.push_back(&p);
    for (const auto& d : deny_) guarded.push_back(&d);
    for (const Named* g : guarded) {
      const Named& p = *g;
      for (auto a = parent_of(p.value); a; a = parent_of(*a)) {
        // A known directory's walk went on from it already: what lies above is known too
        // (many deep paths under one parent would otherwise walk it once each).
        if (known.contains(*a)) break;
        if (!within_any(writable, *a) && !may_be_writable(*a)) break;
        if (within_any(protected_paths, *a)) continue;
        known.insert(*a);
        ancestors.push_back(*a);
      }
    }
    for (const auto& a : ancestors) {
      auto root = writable_named.find(a);
      ancestor_.push_back(root != writable_named.end()
                              ? *root->second
                              : Named{unique_name("PROTECTED_ANCESTOR", a), a});
    }
  }

  std::vector<Named> name_each(std::string_view role, const std::vector<std::string>& paths) {
    std::vector<Named> out;
    for (const auto& p : paths) out.push_back({unique_name(role, p), p});
    return out;
  }

  // ROLE_PATH: the path's letters and digits, upper-cased, every other run of characters
  // one `_`, a `**` component ANY and a `*` STAR, at most the whole words of its last
  // kMaxPathPart characters; `_2`, `_3`, ... after a name already taken. A name says what it stands
  // for, so adding or removing one path leaves every other path's name as it was.
  std::string unique_name(std::string_view role, std::string_view path) {
    std::string part;
    for (size_t i = 0; i < path.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(path[i]);
      if (path.substr(i, 2) == "**") {
        part += "_ANY_";
        ++i;
      } else if (c == '*') {
        part += "_STAR_";
      } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        part += static_cast<char>(c);
      } else if (c >= 'a' && c <= 'z') {
        part += static_cast<char>(c - 'a' + 'A');
      } else {
        part += '_';
      }
    }
    std::string squeezed;
    for (char c : part)
      if (c != '_' || (!squeezed.empty() && squeezed.back() != '_')) squeezed += c;
    while (!squeezed.empty() && squeezed.back() == '_') squeezed.pop_back();
    if (squeezed.size() > kMaxPathPart) {
      // Whole words only: from the first `_` within the last kMaxPathPart characters.
      const size_t cut = squeezed.find('_', squeezed.size() - kMaxPathPart - 1);
      squeezed.erase(0, cut == std::string::npos ? squeezed.size() - kMaxPathPart : cut + 1);
    }
    if (squeezed.empty()) squeezed = "ROOT";
    const std::string base = std::string(role) + "_" + squeezed;
    // The candidates are base, base_2, base_3, ...; names are never given back, so the
    // ones tried before stay taken and the search resumes after them (many deep paths
    // squeeze to one base: searching from the start would be quadratic in their number).
    size_t& tried = tried_[base];
    auto candidate = [&](size_t i) { return i == 0 ? base : base + "_" + std::to_string(i + 1); };
    std::string name = candidate(tried);
    while (!names_.insert(name).second) name = candidate(++tried);
    ++tried;
    return name;
  }

  void process_primitives() {
    blank();
    line("; Processes. Children inherit this profile, so exec and fork stay inside it. What");
    line("; lies in a deny root is not run either: running a binary discloses what it holds.");
    std::vector<std::string> not_denied;
    deny_root_exclusions(not_denied, false);
    if (not_denied.empty()) {
      line("(allow process-exec)");
    } else {
      line("(allow process-exec");
      rule_body(not_denied);
    }
    line("(allow process-fork)");
    line("; Signals and process inspection only within this sandbox, never host processes.");
    line("(allow signal (target same-sandbox))");
    line("(allow process-info* (target same-sandbox))");
    line("; dyld maps libraries and executables; opening them is what the read rules decide.");
    line("(allow file-map-executable)");
    line("; Read-only sysctls that libc, language runtimes and build tools size themselves by.");
    std::vector<std::string> sysctls;
    for (const std::string_view name : ir::kMacosPlatformSysctls)
      sysctls.push_back("(sysctl-name \"" + std::string(name) + "\")");
    for (const std::string_view prefix : ir::kMacosPlatformSysctlPrefixes)
      sysctls.push_back("(sysctl-name-prefix \"" + std::string(prefix) + "\")");
    form("(allow sysctl-read", sysctls);
    line("; getpwuid/getgrgid (the user database) are answered by this service.");
    line("(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\"))");
    line("; Reading (never writing) user defaults, through cfprefsd.");
    line("(allow user-preference-read)");
    line("(allow mach-lookup (global-name \"com.apple.cfprefsd.daemon\")");
    line("  (global-name \"com.apple.cfprefsd.agent\"))");
    line("; POSIX semaphores: Python multiprocessing locks.");
    line("(allow ipc-posix-sem)");
    line("; New pseudo-terminals (openpty) for tools that drive a child through a pty. The");
    line("; caller's terminal is not opened or ioctl'd: no input can be pushed into it.");
    line("(allow pseudo-tty)");
    line("(allow file-read* file-write-data file-ioctl (literal \"/dev/ptmx\"))");
    line("; The standard sinks and sources, and re-opening one's own descriptors (/dev/fd/N).");
    line("(allow file-read* file-write-data (literal \"/dev/null\") (literal \"/dev/zero\"))");
    line("(allow file-read* (literal \"/dev/random\") (literal \"/dev/urandom\"))");
    line("(allow file-read-data file-write-data (subpath \"/dev/fd\"))");
  }

  void platform_read_defaults() {
    blank();
    line("; Platform files every process needs to start when the policy does not read \"/\":");
    line("; the loader, libc, frameworks, the base tools, and the /etc, /var, /tmp symlinks.");
    std::vector<std::string> filters;
    for (const char* p : {"/", "/etc", "/tmp", "/var"})
      filters.push_back("(literal \"" + std::string(p) + "\")");
    for (const char* p : {"/System", "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/lib",
                          "/usr/libexec", "/usr/share", "/private/etc", "/Library/Apple",
                          "/Library/Preferences", "/private/var/db/timezone"})
      filters.push_back("(subpath \"" + std::string(p) + "\")");
    form("(allow file-read*", filters);
  }

  // The filters that keep deny roots out of an allow rule. `subpath` covers the path and
  // everything below; a write rule also needs the `literal` twin, which covers creating
  // the path while it is missing (nothing is created by a read).
  void deny_root_exclusions(std::vector<std::string>& out, bool for_writes) const {
    for (const auto& d : deny_) {
      if (for_writes) out.push_back("(require-not (literal " + param(d.name) + "))");
      out.push_back("(require-not (subpath " + param(d.name) + "))");
    }
  }

  void reads_everywhere() {
    blank();
    line("; Reads: the whole file system except the deny roots.");
    std::vector<std::string> parts;
    deny_root_exclusions(parts, false);
    if (parts.empty()) {
      line("(allow file-read*)");
      return;
    }
    line("(allow file-read*");
    rule_body(parts);
  }

  void reads_in_roots() {
    // A writable root is readable too, as it is under bwrap, which binds it: the policy
    // means one thing on every target.
    std::unordered_set<std::string_view> read_paths;
    for (const auto& r : read_) read_paths.insert(r.value);
    std::vector<Named> roots = read_;
    for (const auto& w : write_)
      if (!within_any(read_paths, w.value)) roots.push_back(w);
    if (roots.empty()) return;
    blank();
    line(roots.size() == read_.size() ? "; Reads: the read roots except the deny roots."
                                      : "; Reads: the read and writable roots except the deny roots.");
    std::vector<std::string> parts;
    parts.push_back(any_subpath(roots));
    deny_root_exclusions(parts, false);
    line("(allow file-read*");
    rule_body(parts);
  }

  void writes() {
    if (write_.empty()) return;
    blank();
    line("; Writes: inside the writable roots, except");
    line(";  - each protected path, and (literal twin) its creation while it is missing;");
    line(";  - each directory between a writable root and a protected path or deny root, so");
    line(";    none can be renamed or removed to carry the path out from under its rule;");
    line(";  - the deny roots.");
    line("; Hard links (file-link) are granted nowhere, so a protected file cannot gain a");
    line("; second, writable name.");
    std::vector<std::string> parts;
    parts.push_back(any_subpath(write_));
    for (const auto& a : ancestor_)
      parts.push_back("(require-not (literal " + param(a.name) + "))");
    for (const auto& p : protect_) {
      parts.push_back("(require-not (literal " + param(p.name) + "))");
      parts.push_back("(require-not (subpath " + param(p.name) + "))");
    }
    deny_root_exclusions(parts, true);
    line("(allow file-write*");
    rule_body(parts);
  }

  void network() {
    switch (r_.mode == ir::Mode::ReadOnly ? ir::Network::None : r_.network) {
      case ir::Network::None:
        return;  // deny default covers every socket operation, unix-domain ones included
      case ir::Network::Loopback:
        blank();
        line("; Network: loopback only (bind, accept and connect on localhost).");
        line("(allow network-bind (local ip \"localhost:*\"))");
        line("(allow network-inbound (local ip \"localhost:*\"))");
        line("(allow network-outbound (remote ip \"localhost:*\"))");
        return;
      case ir::Network::Allow:
        // The macOS runner does not serve the proxy yet (issue 15): only the policy's
        // `localhost:PORT` forwards, which on macOS are the host's loopback itself.
        blank();
        line("; Network: allow list; the proxy is not served on macOS, so only the");
        line("; localhost:PORT entries are reachable.");
        for (const auto& d : r_.allow)
          if (d.value.kind == ir::DestinationKind::Localhost)
            line("(allow network-outbound (remote ip \"localhost:" + std::to_string(d.value.port) +
                 "\"))");
        return;
      case ir::Network::Full:
        blank();
        line("; Network: everything, plus the services that name resolution and TLS");
        line("; certificate checks talk to.");
        line("(allow network*)");
        line("(allow system-socket)");
        line("(allow mach-lookup (global-name \"com.apple.dnssd.service\")");
        line("  (global-name \"com.apple.SystemConfiguration.DNSConfiguration\")");
        line("  (global-name \"com.apple.SystemConfiguration.configd\")");
        line("  (global-name \"com.apple.networkd\")");
        line("  (global-name \"com.apple.trustd.agent\")");
        line("  (global-name \"com.apple.ocspd\"))");
        return;
    }
  }

  void denials() {
    std::vector<std::string> write_denied;
    for (const auto& a : ancestor_) write_denied.push_back("(literal " + param(a.name) + ")");
    for (const auto& p : protect_) {
      write_denied.push_back("(literal " + param(p.name) + ")");
      write_denied.push_back("(subpath " + param(p.name) + ")");
    }
    std::vector<std::string> denied;
    for (const auto& d : deny_) {
      denied.push_back("(literal " + param(d.name) + ")");
      denied.push_back("(subpath " + param(d.name) + ")");
    }
    if (write_denied.empty() && denied.empty()) return;
    blank();
    line("; Denials, last. The allow rules above already leave these paths out; stating them");
    line("; again as the final rules keeps them denied whether Seatbelt lets the last");
    line("; matching rule or any matching deny decide.");
    if (!write_denied.empty()) form("(deny file-write*", write_denied);
    if (!denied.empty()) form("(deny file-read* file-write* process-exec", denied);
  }

  static std::string any_subpath(const std::vector<Named>& roots) {
    if (roots.size() == 1) return "(subpath " + param(roots[0].name) + ")";
    std::string out = "(require-any";
    for (const auto& r : roots) out += " (subpath " + param(r.name) + ")";
    return out + ")";
  }

  // `head` (an unclosed "(allow OP"), then one item per line, closing on the last.
  void form(const std::string& head, const std::vector<std::string>& items,
            const std::string& indent = "  ", const std::string& close = ")") {
    line(head);
    for (size_t i = 0; i < items.size(); ++i)
      line(indent + items[i] + (i + 1 == items.size() ? close : ""));
  }

  // Closes the `(allow OP` opened by the caller: one filter, or a require-all of several.
  void rule_body(const std::vector<std::string>& parts) {
    if (parts.size() == 1) {
      line("  " + parts[0] + ")");
      return;
    }
    form("  (require-all", parts, "    ", "))");
  }

  Profile finish() {
    Profile out;
    out.text = std::move(text_);
    // An ancestor that is itself a writable root reuses that root's parameter.
    std::unordered_set<std::string> named;
    for (const auto* group : {&read_, &write_, &ancestor_, &protect_, &deny_})
      for (const auto& n : *group)
        if (named.insert(n.name).second) out.params.emplace_back(n.name, n.value);
    return out;
  }

  void line(const std::string& s) { text_ += s + "\n"; }
  void blank() { text_ += "\n"; }

  const ir::Resolved& r_;
  bool full_read_ = false;
  std::vector<Named> read_, write_, protect_, deny_, ancestor_;
  std::unordered_set<std::string> names_;  // every parameter name given so far
  std::unordered_map<std::string, size_t> tried_;  // base -> how many of its candidates are taken
  std::string text_;
};

}  // namespace

Profile emit(const ir::Resolved& policy) { return Builder(policy).build(); }

std::string params_text(const Profile& profile) {
  std::string out;
  for (const auto& [name, value] : profile.params) out += name + "=" + value + "\n";
  return out;
}

}  // namespace zpolicy::emitters::sbpl
