#include "compiler/resolve/resolve.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/magic.h>
#include <sys/vfs.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_set>

#include "compiler/resolve/blocked_way.hpp"
#include "compiler/resolve/canonical.hpp"
#include "compiler/resolve/dir_fd.hpp"
#include "compiler/resolve/enclosing_repository.hpp"
#include "compiler/resolve/git_directories.hpp"
#include "compiler/resolve/git_pointer.hpp"
#include "compiler/resolve/gitdir.hpp"
#include "compiler/resolve/hard_links.hpp"
#include "compiler/resolve/link_free_stat.hpp"
#include "compiler/resolve/mount_names.hpp"
#include "compiler/resolve/pattern_expand.hpp"
#include "compiler/resolve/protected_index.hpp"
#include "compiler/resolve/seccomp_baseline.hpp"
#include "compiler/resolve/state_dir.hpp"
#include "compiler/resolve/workspace_spelling.hpp"

namespace zpolicy::compiler {
namespace {

using ir::HostKind;
using ir::PathRoot;
using ir::PolicyPath;
using ir::ResolvedPath;

std::optional<std::string> canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

ir::HostIdentity identity_of(const struct stat& st) {
  return ir::HostIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

std::optional<ir::HostIdentity> identity_of(const std::string& p, std::uint64_t* links = nullptr) {
  struct stat st;
  if (!stat_without_links(p, st)) return std::nullopt;
  if (links) *links = S_ISDIR(st.st_mode) ? 0 : static_cast<std::uint64_t>(st.st_nlink);
  return identity_of(st);
}

std::string join(const std::string& base, const std::vector<std::string>& comps) {
  std::string out = base == "/" ? "" : base;
  for (const auto& c : comps) out += "/" + c;
  return out.empty() ? "/" : out;
}

// The components of `p` below `root` (precondition: ir::path_within(root, p)); empty when p is the
// root. Host paths are split, not parsed as policy paths: a host directory name may hold
// characters ('$') that the policy language reserves.
std::vector<std::string> components_below(const std::string& root, const std::string& p) {
  std::vector<std::string> out;
  size_t pos = root == "/" ? 0 : root.size();
  while (pos < p.size()) {
    size_t next = p.find('/', pos + 1);
    if (next == std::string::npos) next = p.size();
    if (next > pos + 1) out.push_back(p.substr(pos + 1, next - pos - 1));
    pos = next;
  }
  return out;
}

// The number of components of a resolved path below its anchor ("/" or a variable such as
// "${WORKSPACE}"): "/" and "${HOME}" 0, "/etc" and "${HOME}/.ssh" 1. Empty components
// (a doubled or trailing slash) are not counted.
size_t depth_of(std::string_view path) {
  size_t n = 0;
  for (size_t at = 0; at < path.size();) {
    size_t next = path.find('/', at);
    if (next == std::string_view::npos) next = path.size();
    n += next > at ? 1 : 0;
    at = next + 1;
  }
  return path.starts_with('/') || n == 0 ? n : n - 1;
}

// Sorting by depth first and text second gives the bind order (a parent before its
// children, so later, deeper mounts cover earlier ones) and a deterministic artifact.
// Each depth is computed once, not per comparison.
void sort_by_depth(std::vector<ResolvedPath>& v) {
  std::vector<std::pair<size_t, ResolvedPath>> keyed;
  keyed.reserve(v.size());
  for (auto& p : v) keyed.emplace_back(depth_of(p.path), std::move(p));
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.path < b.second.path;
  });
  v.clear();
  for (auto& [depth, p] : keyed)
    if (v.empty() || v.back().path != p.path) v.push_back(std::move(p));
}

ir::Resolved common(const ir::Policy& policy, ir::Mode mode) {
  ir::Resolved r;
  r.mode = mode;
  r.network = mode == ir::Mode::ReadOnly ? ir::Network::None : policy.network.value;
  const ir::SourceLoc& decided_by =
      mode == ir::Mode::ReadOnly && policy.network.value != ir::Network::None ? policy.mode.loc
                                                                                : policy.network.loc;
  r.network_loc = decided_by.file.empty() ? ir::SourceLoc{ir::kBuiltinFile, 0, 0} : decided_by;
  if (r.network == ir::Network::Allow) r.allow = policy.allow;
  r.syscalls = effective_syscalls(policy, mode);
  r.env = policy.env;
  if (policy.timeout) r.timeout = policy.timeout->value;
  // DESIGN.md "Fail-closed": running unconfined is only ever an option for
  // workspace-write, so narrowing the mode (--mode read-only) takes it away too.
  r.unavailable =
      mode == ir::Mode::WorkspaceWrite ? policy.unavailable.value : ir::Unavailable::Deny;
  return r;
}

// One protected path (components relative to a writable root).
void add_protected(ir::Resolved& r, const std::string& root, const std::vector<std::string>& rel,
                   HostKind kind, const ir::SourceLoc& loc) {
  r.protect.push_back({join(root, rel), kind, loc});
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return stat_without_links(path, st) && S_ISREG(st.st_mode);
}

// Whether `dir` has what git's is_git_directory() tests for: a HEAD git takes, an `objects`
// and a `refs` (by access(2), following links, as git does). A directory without them is no
// repository to git, which then goes on to test the directory above it: a `.git` whose HEAD
// is there but empty (as a crash leaves it) was taken for one, the top's HEAD was left
// unprotected, and the command made the top a bare repository whose `core.fsmonitor` the
// host's `git status` ran (red team A25-3).
bool holds_git_directory_parts(const std::string& dir) {
  struct stat st;
  return stat_without_links(dir, st) && S_ISDIR(st.st_mode) &&
         git_head_at(dir + "/HEAD") == GitHead::Taken &&
         access((dir + "/objects").c_str(), X_OK) == 0 &&
         access((dir + "/refs").c_str(), X_OK) == 0;
}

// The outermost writable root strictly above `path`, found by looking its ancestors up,
// not by testing every root: with a thousand roots and their carve-outs the scan made
// resolving quadratic.
std::optional<std::string_view> outermost_writable_above(
    const std::unordered_set<std::string_view>& writable, std::string_view path) {
  if (path != "/" && writable.contains("/")) return std::string_view("/");
  for (auto at = path.find('/', 1); at != std::string_view::npos; at = path.find('/', at + 1))
    if (writable.contains(path.substr(0, at))) return path.substr(0, at);
  return std::nullopt;
}

// The paths whose way from the outermost writable root above them must stay in place:
// protected paths, deny roots, and writable roots inside another, whose bind bwrap looks
// up again on every run (a directory between two roots that the sandbox could rename
// would let one run swap it for a link, and the next run bind what the link names as a
// writable root; setup18's check refused every such policy).
std::vector<const ResolvedPath*> guarded_paths(const ir::Resolved& r) {
  std::vector<const ResolvedPath*> out;
  for (const auto* list : {&r.protect, &r.deny, &r.write})
    for (const auto& p : *list) out.push_back(&p);
  return out;
}

std::unordered_set<std::string_view> writable_roots(const ir::Resolved& r) {
  std::unordered_set<std::string_view> out;
  for (const auto& w : r.write) out.insert(w.path);
  return out;
}

// Every protected or deny path inside a writable root, and every writable root inside
// another, needs the directories between it and the root pinned, whichever rule put it
// there: without pins `mv data d2` (or `mv modules m2` for a `.git` pointer's target)
// would move it aside and let the sandbox plant a fresh one in its place (guarded_paths
// says why for a root). The root is the outermost one above the path: with
// `write: [W, W/a/b]`, `mv W/a W/x` carries the inner root, and `W/a/b/.env` with it,
// away (a mount point moves with its directory), so `W/a` is pinned too; a directory that
// is itself a writable root is a mount point already, and is not pinned again. The one
// walk over those pins, which both the budget and add_pins use, so that the pins counted
// are the pins made: `visit(guarded, end)` for each pin `guarded->path.substr(0, end)`,
// in r.protect, r.deny then r.write order, until the pins' bytes so far (counted before
// duplicates go) cross kMaxPinnedBytes; then the location of the guarded path whose pin
// crossed it. A writable root under no other is guarded by nothing and pins nothing.
std::optional<ir::SourceLoc> for_each_pin(
    const ir::Resolved& r, const std::function<void(const ResolvedPath&, size_t)>& visit) {
  const auto writable = writable_roots(r);
  size_t bytes = 0;
  for (const auto* g : guarded_paths(r)) {
    const auto root = outermost_writable_above(writable, g->path);
    if (!root) continue;
    for (auto at = g->path.find('/', root->size() + 1); at != std::string::npos;
         at = g->path.find('/', at + 1)) {
      if (writable.contains(std::string_view(g->path).substr(0, at))) continue;
      bytes += at;
      if (bytes > kMaxPinnedBytes) return g->loc;
      visit(*g, at);
    }
  }
  return std::nullopt;
}

// Over the pin budget nothing is pinned: the caller refuses the policy
// (refuse_pins_over_budget).
void add_pins(ir::Resolved& r) {
  std::vector<ResolvedPath> pins;
  const auto over = for_each_pin(r, [&](const ResolvedPath& g, size_t end) {
    pins.push_back({g.path.substr(0, end), HostKind::Unknown, g.loc});
  });
  if (over) return;
  r.pin.insert(r.pin.end(), std::make_move_iterator(pins.begin()),
               std::make_move_iterator(pins.end()));
}

// Every directory a '..' of the walks left in a writable root (Canonical::left_by_dot_dot),
// and those between it and the root, pinned: the kernel takes '..' from what is there when
// it looks, so each must stay the directory the walk left, or the sandbox could make it a
// link and choose what the name reaches (red team A26-4: with `core.hooksPath =
// WS/sub/../hooks`, `WS/hooks` was protected, the command made `sub` a link to `deep/er`
// and wrote `deep/hooks/pre-commit`, which the host's `git commit` ran). One in a protected
// path or deny root cannot be changed there already; one in a guard that is no writable root
// (another name a host mount gives one) cannot be pinned there, and refuses.
void pin_left_by_dot_dot(ir::Resolved& r, const std::set<std::string>& left,
                         ir::Diagnostics& diags) {
  const auto writable = writable_roots(r);
  std::set<std::string> pinned;
  for (const auto& p : r.pin) pinned.insert(p.path);
  for (const auto& dir : left) {
    if (writable.contains(dir) || ir::within_any(r.protect, dir) || ir::within_any(r.deny, dir))
      continue;
    const auto root = outermost_writable_above(writable, dir);
    if (!root) {
      diags.error({dir, 0, 0}, "a path git or the policy names leaves '" + dir +
                                   "' by '..', in another name a host mount gives a writable " +
                                   "root: the sandbox could make it a link, and '..' would " +
                                   "then lead elsewhere; name the path without '..'; refusing " +
                                   "to run");
      continue;
    }
    for (auto at = dir.find('/', root->size() + 1);; at = dir.find('/', at + 1)) {
      const std::string pin = dir.substr(0, at);
      if (!writable.contains(pin) && pinned.insert(pin).second)
        r.pin.push_back({pin, HostKind::Unknown, {dir, 0, 0}});
      if (at == std::string::npos) break;
    }
  }
}

// A deny root's mask (an empty tmpfs, read-only) denies everything below it, and bwrap
// cannot lay it over mounts made there before: its read-only remount looks up the
// covered mounts by name and fails, and a deny root below it would need its mount point
// made in the read-only mask. So what lies strictly inside a deny root (a writable root, a
// protected path, another deny root) is not mounted at all: the deny wins there as it
// would anyway (docs/decisions.md "Deny masks", red team N20-2). Before the pins, which
// are then not made for it either.
void drop_masked(ir::Resolved& r, std::string_view workspace) {
  std::set<std::string, std::less<>> denied;
  for (const auto& d : r.deny) denied.insert(d.path);
  auto masked = [&](const ResolvedPath& p) {
    const std::string_view path = p.path;
    for (auto at = path.find('/', 1); at != std::string_view::npos; at = path.find('/', at + 1))
      if (denied.contains(path.substr(0, at))) return true;
    return false;
  };
  std::erase_if(r.deny, masked);
  // So is a writable root that is a deny root itself (its bind would lie below the mask;
  // red team A21B-5), but for the workspace: a workspace in a deny root is ZP016's error,
  // and without its root the artifact would only fail at bwrap's chdir.
  std::erase_if(r.write, [&](const ResolvedPath& w) {
    return masked(w) || (w.path != workspace && denied.contains(w.path));
  });
  std::erase_if(r.protect, masked);
}

// A located error at the first protected or deny path (in r.protect, then r.deny order)
// whose pins cross kMaxPinnedBytes; true when it refused. Counted before any pin is made:
// a pin's path is a prefix of the guarded path, so its bytes are its separator's position.
bool refuse_pins_over_budget(const ir::Resolved& r, ir::Diagnostics& diags) {
  const auto loc = for_each_pin(r, [](const ResolvedPath&, size_t) {});
  if (loc)
    diags.error(*loc, "the directories between this path and its writable root, with those "
                      "of the paths before it, exceed the pin budget of " +
                          std::to_string(kMaxPinnedBytes >> 20) +
                          " MiB of path names (each is pinned; docs/verify.md, \"Bounded "
                          "inputs\"); use fewer or shallower protected and deny paths");
  return loc.has_value();
}

}  // namespace

std::optional<ir::Mode> effective_mode(const ir::Policy& policy,
                                       const std::optional<ir::Mode>& requested,
                                       ir::Diagnostics& diags) {
  if (!requested) return policy.mode.value;
  if (!ir::narrower_or_equal(*requested, policy.mode.value)) {
    diags.error(policy.mode.loc.line ? policy.mode.loc : policy.origin,
                std::string("--mode ") + ir::to_string(*requested) +
                    " is wider than the policy's ceiling '" + ir::to_string(policy.mode.value) +
                    "'; --mode may only narrow it");
    return std::nullopt;
  }
  return requested;
}

std::optional<ir::Resolved> resolve_portable(const ir::Policy& policy, ir::Mode mode,
                                             ir::Diagnostics& diags) {
  ir::Resolved r = common(policy, mode);
  r.portable = true;
  r.cwd = "${WORKSPACE}";
  for (const auto& p : policy.read) r.read.push_back({p.value.str(), HostKind::Unknown, p.loc});
  std::vector<ir::SourceLoc> workspace_rules;  // the `${WORKSPACE}` writable roots
  if (mode == ir::Mode::WorkspaceWrite) {
    for (const auto& w : policy.write) {
      r.write.push_back({w.value.str(), HostKind::Unknown, w.loc});
      if (w.value.str() == "/tmp" || w.value.str() == "${TMPDIR}") r.private_tmp = false;
      for (const auto& pr : policy.protect) {
        if (pr.value.is_relative())
          add_protected(r, w.value.str(), pr.value.components, HostKind::Unknown, pr.loc);
        else if (w.value.contains(pr.value))
          add_protected(r, w.value.str(),
                        {pr.value.components.begin() + static_cast<long>(w.value.components.size()),
                         pr.value.components.end()},
                        HostKind::Unknown, pr.loc);
      }
    }
  }
  for (const auto& d : policy.deny) r.deny.push_back({d.value.str(), HostKind::Unknown, d.loc});
  add_portable_patterns(policy, r);
  drop_masked(r, "${WORKSPACE}");
  if (refuse_pins_over_budget(r, diags)) return std::nullopt;
  if (mode == ir::Mode::WorkspaceWrite) add_pins(r);
  sort_by_depth(r.read);
  sort_by_depth(r.write);
  sort_by_depth(r.pin);
  sort_by_depth(r.protect);
  sort_by_depth(r.deny);
  return r;
}

namespace {

// How a lookup of the absolute `path` (under PATH_MAX bytes) that follows no symlink
// ends: it finds the path; or it ends before any link, at a component missing,
// unsearchable or too long to name (the lookup fails at the first of these in its walk,
// RESOLVE_NO_SYMLINKS at a link); or it met a link (or failed otherwise).
// `mode`, when given, gets the found object's st_mode.
enum class LinkFreeLookup { Found, Ended, MetLink };
LinkFreeLookup lookup_without_links(const std::string& path, mode_t* mode = nullptr) {
  // A link as the last component is opened itself (O_NOFOLLOW) and met here, as one on the
  // way is by the lookup: the walk open_without_links falls back to would follow it.
  const int fd = open_without_links(path, O_PATH | O_NOFOLLOW);
  if (fd >= 0) {
    struct stat st;
    const bool known = fstat(fd, &st) == 0;
    close(fd);
    // Not known to be no link: the callers walk it again, or take it for a link (review
    // R24-5; as Ended, the fast path of canonicalize and host_link_on_the_way took it for
    // "no link").
    if (!known || S_ISLNK(st.st_mode)) return LinkFreeLookup::MetLink;
    if (mode) *mode = st.st_mode;
    return LinkFreeLookup::Found;
  }
  return errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ENAMETOOLONG
             ? LinkFreeLookup::Ended
             : LinkFreeLookup::MetLink;
}

bool ends_before_any_link(const std::string& path) {
  return lookup_without_links(path) != LinkFreeLookup::MetLink;
}

// The target of the symlink `name` in the directory `dir`, read from that directory (the
// object the walk looked at); none when it cannot be read or is empty.
std::optional<std::string> link_target(int dir, const std::string& name) {
  if (dir < 0) return std::nullopt;
  std::string buf(PATH_MAX, '\0');
  const ssize_t n = readlinkat(dir, name.c_str(), buf.data(), buf.size());
  if (n <= 0 || static_cast<size_t>(n) >= buf.size()) return std::nullopt;
  buf.resize(static_cast<size_t>(n));
  return buf;
}

}  // namespace

std::optional<std::string> host_link_on_the_way(const std::string& path) {
  // Looked up first in one walk that fails on the first link; an lstat per prefix walks
  // from "/" each time, so 500 bind sources 1 000 components deep cost 5 s (session 19).
  // A prefix of PATH_MAX bytes or more cannot be looked up, so neither walk goes past one.
  // Only a lookup that met a link (or failed otherwise) walks the prefixes, to name it.
  const size_t end = path.size() < PATH_MAX ? path.size() : path.rfind('/', PATH_MAX - 1);
  if (end == 0 || end == std::string::npos) return std::nullopt;
  if (ends_before_any_link(path.substr(0, end))) return std::nullopt;
  std::string at;
  for (size_t from = 1; from <= path.size();) {
    const size_t slash = std::min(path.find('/', from), path.size());
    at = path.substr(0, slash);
    struct stat st;
    // A prefix that cannot be looked at for another reason than its absence may be the
    // link the lookup met: named as one (review R24-5).
    if (lstat(at.c_str(), &st) != 0)
      return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? std::nullopt
                                                                    : std::optional(at);
    if (S_ISLNK(st.st_mode)) return at;
    from = slash + 1;
  }
  return std::nullopt;
}

std::optional<HostFacts> host_facts(const std::optional<std::string>& workspace,
                                    ir::Diagnostics& diags) {
  return host_facts(workspace, CallerEnvironment::of_this_process(), diags);
}

std::optional<HostFacts> host_facts(const std::optional<std::string>& workspace,
                                    CallerEnvironment environment, ir::Diagnostics& diags) {
  HostFacts h;
  char buf[PATH_MAX];
  if (!getcwd(buf, sizeof buf)) {
    diags.error({"<host>"}, "cannot determine the current directory");
    return std::nullopt;
  }
  auto cwd = canonical(buf);
  h.cwd = cwd ? *cwd : buf;
  auto ws = canonical(workspace.value_or(h.cwd));
  if (!ws || kind_of(*ws) != HostKind::Directory) {
    diags.error({"<host>"}, "workspace '" + workspace.value_or(h.cwd) + "' is not a directory");
    return std::nullopt;
  }
  if (workspace) {
    const auto spelling = walk_workspace_spelling(*workspace, h.cwd);
    if (spelling.link) {
      diags.error({"<host>"}, "workspace '" + *workspace + "' is spelled through the symlink '" +
                                  *spelling.link + "', which may have been planted to redirect " +
                                  "the run; if '" + *ws + "' is the directory meant, give it as " +
                                  "--workspace " + *ws);
      return std::nullopt;
    }
    if (spelling.walked != *ws) {
      diags.error({"<host>"}, "workspace '" + *workspace + "' changed while it was resolved ('" +
                                  *ws + "', then '" + spelling.walked +
                                  "'): something is swapping a directory on its way");
      return std::nullopt;
    }
  }
  h.workspace = *ws;
  h.workspace_identity = identity_of(*ws);
  h.workspace_spelled = caller_workspace_spelling(workspace, *ws, environment.get("PWD"));
  const auto home = environment.get("HOME");
  if (home && home->starts_with("/")) {
    h.home = *home;
  } else {
    const passwd* pw = getpwuid(getuid());
    h.home = pw ? pw->pw_dir : "/";
  }
  const auto tmp = environment.get("TMPDIR");
  h.tmpdir = tmp && tmp->starts_with("/") ? *tmp : "/tmp";
  h.environment = std::move(environment);
#if defined(__linux__)
  h.os = HostOs::Linux;
  h.state_dir = zpolicy_state_dir();
#elif defined(__APPLE__)
  h.os = HostOs::Macos;
#else
  h.os = HostOs::Other;
#endif
  return h;
}

namespace {

// As many symlinks as the kernel follows in one lookup before ELOOP.
constexpr int kMaxLinksFollowed = 40;

class HostResolver {
 public:
  HostResolver(const HostFacts& host, ir::Diagnostics& diags) : host_(host), diags_(diags) {}

  // Variables are bound to the canonical form of their directory, as writable roots are,
  // so that "${HOME}/.config" still lies under a writable "${HOME}" reached via a symlink.
  std::string bind(const PolicyPath& p) const {
    switch (p.root) {
      case PathRoot::Workspace:
        return join(anchor(host_.workspace), p.components);
      case PathRoot::Home:
        return join(anchor(host_.home), p.components);
      case PathRoot::Tmpdir:
        return join(anchor(host_.tmpdir), p.components);
      case PathRoot::Absolute:
      case PathRoot::Relative:
        return join("/", p.components);
    }
    return "/";
  }

  // `p` on the host as spelled: its variable's value as the caller gave it, no link
  // resolved (the workspace is the canonical working directory already).
  std::string spelled(const PolicyPath& p) const {
    switch (p.root) {
      case PathRoot::Workspace:
        return join(host_.workspace, p.components);
      case PathRoot::Home:
        return join(host_.home, p.components);
      case PathRoot::Tmpdir:
        return join(host_.tmpdir, p.components);
      case PathRoot::Absolute:
      case PathRoot::Relative:
        return join("/", p.components);
    }
    return "/";
  }

  // The canonical form of `lexical`, walked one component at a time. A symlink outside
  // every root in `guarded` is host layout and is resolved; one inside such a root stops
  // the walk. Since `cur` is canonical whenever a '..' of the existing prefix is met,
  // dropping its last component is what the kernel would do. Each component is looked up
  // in the directory open before it, not by its path from "/": an lstat of every prefix
  // cost the square of a path's depth (700 deny roots nested in a 1 400-deep workspace
  // tree, a 1 MB policy, ran past a minute; session 19). A prefix of PATH_MAX bytes or
  // more is missing, as lstat found it.
  // `links`, when given, gets each symlink the walk resolved (none when it stopped early),
  // from the same walk that gave the result.
  // A symlink's target is walked the same way, so that every link on the way is judged
  // and reported, those its target crosses too: a host link `/srv/c -> WS/build`, with
  // `WS/build` a link an earlier run planted, made `write: [/srv/c/out]` the directory that
  // link chose, when the target was resolved by realpath() and only `/srv/c` was seen (red
  // team A21-1).
  static Canonical canonicalize(const std::string& lexical,
                                const std::vector<ResolvedPath>& guarded,
                                std::vector<std::string>* links = nullptr) {
    int followed = 0;
    return canonicalize(lexical, guarded, links, followed);
  }

  // `looked_in`, when given, gets every directory the walk looks a name up in (or reads a
  // link of), its links' targets' walks included.
  static Canonical canonicalize(const std::string& lexical,
                                const std::vector<ResolvedPath>& guarded,
                                std::vector<std::string>* links, int& followed,
                                std::set<std::string>* looked_in = nullptr) {
    const std::vector<std::string> comps = components_below("/", lexical);
    if (!looked_in)
      if (auto c = without_links(comps)) return std::move(*c);
    std::string cur = "/";
    // `cur`, or none when it is no directory the walk can open. `cur` holds no link, and is
    // opened again only by a lookup that follows none.
    DirFd dir(cur, DirFd::Link::NoneOnTheWay);
    mode_t mode = S_IFDIR;  // of `cur`
    std::vector<std::string> left;  // Canonical::left_by_dot_dot
    for (size_t i = 0; i < comps.size(); ++i) {
      if (comps[i] == ".") continue;
      if (comps[i] == "..") {
        // Taken away as the kernel takes it now; in a writable root the sandbox could make
        // `cur` a link, and the kernel's '..' would then leave the link's target: with
        // `core.hooksPath = WS/sub/../hooks`, the command made `sub` a link to `deep/er`
        // and the host's `git commit` ran `deep/hooks/pre-commit` (red team A26-4).
        if (std::any_of(guarded.begin(), guarded.end(), [&](const ResolvedPath& g) {
              return g.path != cur && ir::path_within(g.path, cur);
            }))
          left.push_back(cur);
        cur = cur == "/" ? "/" : cur.substr(0, std::max<size_t>(cur.rfind('/'), 1));
        dir = DirFd(cur, DirFd::Link::NoneOnTheWay);
        mode = S_IFDIR;
        continue;
      }
      std::string next = join(cur, {comps[i]});
      if (looked_in) looked_in->insert(cur);
      struct stat st;
      bool exists = next.size() < PATH_MAX && dir.get() >= 0 &&
                    fstatat(dir.get(), comps[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
      const bool link = exists && S_ISLNK(st.st_mode);
      if (link) {
        Canonical t = follow_link(cur, dir.get(), comps[i], guarded, links, followed, looked_in);
        if (t.stop == Canonical::Stop::SymlinkInWritableRoot ||
            t.stop == Canonical::Stop::TooManyLinks)
          return {lexical, t.stop, t.at};
        left.insert(left.end(), t.left_by_dot_dot.begin(), t.left_by_dot_dot.end());
        exists = t.stop == Canonical::Stop::None && t.complete;
        if (exists) {
          next = std::move(t.path);
          st.st_mode = t.mode;
        }
      }
      if (!exists) {
        Canonical c = spelled_below_missing(lexical, next, comps, i + 1);
        c.left_by_dot_dot = std::move(left);
        return c;
      }
      // After a link, `next` is its target's canonical path, link-free as the walk found it.
      dir = link ? DirFd(next, DirFd::Link::NoneOnTheWay) : DirFd(dir, comps[i]);
      mode = st.st_mode;
      cur = std::move(next);
    }
    return {cur, Canonical::Stop::None, {}, true, mode, std::move(left)};
  }

  // Most paths hold no link, '.' or '..': then the walk ends with the path as spelled,
  // whether it stops at a missing component or not, and one lookup says so. None where the
  // walk is needed.
  static std::optional<Canonical> without_links(const std::vector<std::string>& comps) {
    const std::string spelled = join("/", comps);
    if (spelled.size() >= PATH_MAX ||
        std::any_of(comps.begin(), comps.end(),
                    [](const std::string& c) { return c == "." || c == ".."; }))
      return std::nullopt;
    mode_t mode = 0;
    const LinkFreeLookup l = lookup_without_links(spelled, &mode);
    if (l == LinkFreeLookup::MetLink) return std::nullopt;
    return Canonical{spelled, Canonical::Stop::None, {}, l == LinkFreeLookup::Found, mode};
  }

  // What the symlink `name` in the directory `dir_fd` (open at the canonical `cur`) leads to:
  // its target walked as canonicalize() walks any path. The walk stops at the link itself
  // when it lies inside a root in `guarded`, or when it is one more than the kernel follows
  // (ELOOP): the rest is not judged, so nothing is named (a loop ends here too). A dangling
  // link names nothing yet, and neither does one whose target cannot be read: incomplete.
  static Canonical follow_link(const std::string& cur, int dir_fd, const std::string& name,
                               const std::vector<ResolvedPath>& guarded,
                               std::vector<std::string>* links, int& followed,
                               std::set<std::string>* looked_in) {
    const std::string link = join(cur, {name});
    for (const auto& g : guarded)
      if (ir::path_within(g.path, cur)) return {link, Canonical::Stop::SymlinkInWritableRoot, link};
    if (links) links->push_back(link);
    if (++followed > kMaxLinksFollowed) return {link, Canonical::Stop::TooManyLinks, link};
    const std::optional<std::string> target = link_target(dir_fd, name);
    if (!target) return {link, Canonical::Stop::None, {}, false};
    return canonicalize(target->front() == '/' ? *target : cur + "/" + *target, guarded, links,
                        followed, looked_in);
  }

  // The walk's end at `missing`, a component that does not exist (or a link that names
  // nothing): the components from `comps[from]` on follow as spelled, and a '..' among them
  // is refused (nothing on disk says what it would mean).
  static Canonical spelled_below_missing(const std::string& lexical, const std::string& missing,
                                         const std::vector<std::string>& comps, size_t from) {
    std::vector<std::string> rest;
    for (size_t j = from; j < comps.size(); ++j) {
      if (comps[j] == "..") return {lexical, Canonical::Stop::DotDotBelowMissing, missing};
      if (comps[j] != ".") rest.push_back(comps[j]);
    }
    return {join(missing, rest), Canonical::Stop::None, {}, false};
  }

  // Whether the lookup of `lexical` fails for its count of links (ELOOP: a loop, or a chain
  // of more than the kernel follows) whatever the sandbox does (red team A24-5): every name
  // the lookup meets up to the count, in the link's own walk and its targets' alike, lies in
  // a directory outside every root in `guarded`, where the sandbox can add, remove or
  // re-point nothing, and outside every procfs, whose links (`/proc/self`, `cwd`, `fd/N`)
  // name the looking process's own files: another process, the sandbox or the host's next
  // command, may meet other links there. A name the lookup passes in a writable root, even a
  // directory's (`/srv/l -> /WS/d/../../srv/l`: the sandbox can make `d` a link elsewhere and
  // `srv/l` a directory there), can end the loop: false. The trees bwrap gives the sandbox
  // of its own (`/tmp`, `/dev`) change what the sandbox alone meets there, never the host:
  // what it reads through them is its own, or a host file it may read by that file's name.
  static bool loops_for_good(const std::string& lexical, const std::vector<ResolvedPath>& guarded) {
    int followed = 0;
    std::set<std::string> looked_in;
    if (canonicalize(lexical, guarded, nullptr, followed, &looked_in).stop !=
        Canonical::Stop::TooManyLinks)
      return false;
    return std::none_of(looked_in.begin(), looked_in.end(), [&](const std::string& dir) {
      return ir::within_any(guarded, dir) || on_procfs(dir);
    });
  }

  // Whether `dir` lies on a procfs (or cannot be asked: taken for one).
  static bool on_procfs(const std::string& dir) {
#if defined(__linux__)
    struct statfs fs {};
    return statfs(dir.c_str(), &fs) != 0 || fs.f_type == PROC_SUPER_MAGIC;
#else
    return ir::path_within("/proc", dir);
#endif
  }

  // canonicalize() with its stop reported at `loc`; nullopt when it stopped.
  std::optional<std::string> canonical_or_refuse(const std::string& lexical,
                                                 const std::vector<ResolvedPath>& guarded,
                                                 const ir::SourceLoc& loc,
                                                 const std::string& what,
                                                 std::vector<std::string>* links = nullptr) {
    auto c = walked_or_refuse(lexical, guarded, loc, what, links);
    return c ? std::optional<std::string>(std::move(c->path)) : std::nullopt;
  }

  // The same, with what the walk found there (Canonical::kind).
  std::optional<Canonical> walked_or_refuse(const std::string& lexical,
                                            const std::vector<ResolvedPath>& guarded,
                                            const ir::SourceLoc& loc, const std::string& what,
                                            std::vector<std::string>* links = nullptr) {
    Canonical c = canonicalize(lexical, guarded, links);
    switch (c.stop) {
      case Canonical::Stop::None:
        note_left_by_dot_dot(c);
        return c;
      case Canonical::Stop::TooManyLinks:
        diags_.error(loc, what + " '" + lexical + "' crosses more than " +
                              std::to_string(kMaxLinksFollowed) +
                              " symlinks, more than the kernel follows in one lookup (ELOOP; "
                              "the last one counted is '" +
                              c.at + "'); name the directory it leads to; refusing to run");
        return std::nullopt;
      case Canonical::Stop::SymlinkInWritableRoot:
        diags_.error(loc, what + " '" + lexical + "' crosses a symlink inside a writable root ('" +
                              c.at + "'); refusing to run");
        return std::nullopt;
      case Canonical::Stop::DotDotBelowMissing:
        diags_.error(loc, what + " '" + lexical + "' has '..' below '" + c.at +
                              "', which does not exist; refusing to guess what it names");
        return std::nullopt;
    }
    return std::nullopt;
  }

  // Where the kernel would create the canonical `path` when what exists deepest on its way,
  // `path` itself included, is a symlink (dangling: canonicalize() spells the rest from the
  // link): the link's target with the rest, walked as any path (a link in a writable root
  // on the way refuses, reported with `what` at `loc`); none when no link is there or it
  // refused.
  std::optional<std::string> created_through_link(const std::string& path,
                                                  const std::vector<ResolvedPath>& guarded,
                                                  const ir::SourceLoc& loc,
                                                  const std::string& what) {
    std::string at = path;
    struct stat st;
    while (at != "/" && !stat_without_links(at, st))
      at = at.substr(0, std::max<size_t>(at.rfind('/'), 1));
    if (at == "/" || !S_ISLNK(st.st_mode)) return std::nullopt;
    std::string target(PATH_MAX, '\0');
    const ssize_t n = readlink(at.c_str(), target.data(), target.size());
    if (n <= 0 || static_cast<size_t>(n) >= target.size()) return std::nullopt;
    target.resize(static_cast<size_t>(n));
    const std::string from =
        target.front() == '/' ? target : at.substr(0, at.rfind('/')) + "/" + target;
    return canonical_or_refuse(from + path.substr(at.size()), guarded, loc, what);
  }

  // Every name created_through_link() gives in turn, as the kernel follows a dangling link
  // whose target is spelled from another (`h -> h2`, `h2 -> WS/l`; `h -> g/l`, `g -> WS`):
  // one hop judged the first target's spelling, outside every writable root (red team
  // A22E-1). At most as many as the kernel follows; a walk that refused gives none more.
  std::vector<std::string> created_through_links(const std::string& path,
                                                 const std::vector<ResolvedPath>& guarded,
                                                 const ir::SourceLoc& loc,
                                                 const std::string& what) {
    std::vector<std::string> made;
    for (auto at = created_through_link(path, guarded, loc, what);
         at && made.size() <= static_cast<size_t>(kMaxLinksFollowed);
         at = created_through_link(*at, guarded, loc, what))
      made.push_back(*at);
    return made;
  }

  // The first name created_through_links() gives in `guarded`: where the sandbox could make
  // what `path` names.
  std::optional<std::string> created_in_guard(const std::string& path,
                                              const std::vector<ResolvedPath>& guarded,
                                              const ir::SourceLoc& loc, const std::string& what) {
    for (auto& made : created_through_links(path, guarded, loc, what))
      if (ir::within_any(guarded, made)) return std::move(made);
    return std::nullopt;
  }

  // The worktree top whose `.git` pointer named `gitdir`, for pointer_worktrees().
  void record_pointer_worktree(const std::string& gitdir, const std::string& top) {
    worktree_tops_[gitdir].push_back(top);
  }

  // The worktrees whose `.git` pointer named `gitdir`.
  std::vector<std::string> pointer_worktrees(const std::string& gitdir) const {
    const auto it = worktree_tops_.find(gitdir);
    return it == worktree_tops_.end() ? std::vector<std::string>{} : it->second;
  }

  // The directories a '..' left in the walks of this resolution (Canonical::left_by_dot_dot),
  // for pin_left_by_dot_dot.
  void note_left_by_dot_dot(const Canonical& c) {
    left_by_dot_dot_.insert(c.left_by_dot_dot.begin(), c.left_by_dot_dot.end());
  }
  const std::set<std::string>& left_by_dot_dot() const { return left_by_dot_dot_; }

 private:
  // A '..' the walk cannot resolve stays in the anchor, so that the bound path is
  // refused where the policy uses it.
  static std::string anchor(const std::string& dir) {
    Canonical c = canonicalize(dir, {});
    return c.stop == Canonical::Stop::None ? c.path : dir;
  }

  const HostFacts& host_;
  ir::Diagnostics& diags_;
  std::map<std::string, std::vector<std::string>> worktree_tops_;
  std::set<std::string> left_by_dot_dot_;
};

}  // namespace

namespace {

// A root (`what`: writable or readable) whose way crosses a symlink inside a writable
// root of the policy, or inside the workspace, is refused: the sandbox may have re-pointed
// that link and so chose which host directory a run binds (red team N20-1). The workspace
// counts whatever this policy says of it: a run under another policy (the built-in
// default's) may have planted the link (N20-3). `links` are those of the walk that gave
// the root: a second walk would judge another state of a link swapped in between (a race
// that bound the link's target while the second walk found the directory back).
// A link's directory is judged under every name the host's mounts give it: with the
// host's `mount --bind /srv/data WS/mnt`, a run under the default policy planted
// `WS/mnt/l`, and `write: [/srv/data/l/out]` bound the directory it chose (red team A21B-1).
void refuse_planted_link(const ir::Resolved& r, const HostFacts& host, ir::Diagnostics& diags,
                         const std::string& what, const std::string& spelled,
                         const ir::SourceLoc& loc, const std::vector<std::string>& links,
                         const std::function<const std::vector<MountEntry>&()>& mounts) {
  for (const auto& link : links) {
    const size_t slash = std::max<size_t>(link.rfind('/'), 1);
    const std::string dir = link.substr(0, slash);
    std::vector<std::string> names{dir};
    if (host.os == HostOs::Linux)
      if (const auto identity = identity_of(dir))
        for (auto& name : other_names(dir, mounts()))
          if (identity_of(name) == identity) names.push_back(std::move(name));
    for (const auto& name : names) {
      const bool in_root = ir::within_any(r.write, name);
      if (!in_root && !ir::path_within(host.workspace, name)) continue;
      const std::string shown =
          name == dir ? link : link + "', which the host's mounts also show as '" + name +
                                   link.substr(dir == "/" ? 0 : slash);
      diags.error(loc, what + " '" + spelled + "' crosses a symlink inside " +
                           (in_root ? "a writable root" : "the workspace") + " ('" + shown +
                           "')" +
                           (in_root ? "" : ", which a run under another policy may have "
                                           "planted; name the directory it leads to") +
                           "; refusing to run");
      return;
    }
  }
}

// Whether the mount table's `name` for `original` (mount_aliases) still shows that object:
// the same identity, or `original` one the caller cannot look at (EACCES: in a directory it
// may stat but not search), whose identity cannot be compared, so that only the table says.
bool same_object_or_unseen(const std::string& original, const std::string& name) {
  struct stat st;
  if (!stat_without_links(original, st)) return errno == EACCES;
  return identity_of(name) == identity_of(st);
}

// The names a missing path would be created at through the other names the host's mounts
// give its deepest existing directory (the same object), each with the path's rest. What
// exists deepest on the way may be no directory (a file, a FIFO, a dangling link: the
// path cannot be made while it is there): then its directory's names are taken, with the
// blocking name in the rest, since the sandbox could replace it through any of them; with
// the host's `mount --bind /srv/data WS/mnt`, `protect: [/srv/data/cfg/key]` over a file
// `cfg` got no name at all, and the command removed `mnt/cfg` and wrote the host's
// `/srv/data/cfg/key` (red team A22-2). The caller protects the blocker (blocked_way.hpp).
std::vector<std::string> missing_path_other_names(const std::string& path,
                                                  const std::vector<MountEntry>& mounts) {
  std::string dir = path;
  do dir = dir.substr(0, std::max<size_t>(dir.rfind('/'), 1));
  while (dir != "/" && kind_of(dir) == HostKind::Missing);
  if (kind_of(dir) != HostKind::Directory)
    dir = dir.substr(0, std::max<size_t>(dir.rfind('/'), 1));
  const auto identity = identity_of(dir);
  if (!identity || kind_of(dir) != HostKind::Directory) return {};
  const std::string rest = path.substr(dir == "/" ? 0 : dir.size());
  std::vector<std::string> out;
  for (const auto& name : other_names(dir, mounts))
    if (identity_of(name) == identity) out.push_back(name + rest);
  return out;
}

// read_enclosing_repositories' walk: what it was given, and what it has read so far.
struct EnclosingReading {
  HostResolver& h;
  ir::Diagnostics& diags;
  const std::vector<ResolvedPath>& guards;
  ProtectedIndex& protected_paths;
  const std::function<void(const std::string&, const ir::SourceLoc&, bool)>& protect_absolute;
  std::vector<std::string>& gitdirs;
  // The tops each git directory was found at, the result.
  std::map<std::string, std::vector<std::string>> tops{};
  EnclosingRepositories enclosing{};
  // The writable roots refused for lying inside a git directory, each once.
  std::set<std::string> refused{};
  // The repositories read so far, by top and git directory.
  std::set<std::pair<std::string, std::string>> seen{};

  void read_above(const ResolvedPath& w);
  void read_above_spelling(const ResolvedPath& s);
  void read_repository(const ResolvedPath& w, const EnclosingRepository& repo);
};

// The repositories above the writable root (or guard) `w`, and `w` itself where it is a git
// directory.
void EnclosingReading::read_above(const ResolvedPath& w) {
  // A name a protected path covers is none the sandbox can write: a host bind that shows
  // `.git/hooks` at `WS/hooks` gives the writable root the name `WS/.git/hooks`, which
  // lies inside a git directory and is protected there, as its bound name is (A11-6).
  if (protected_paths.covers(w.path)) return;
  // A writable root that is itself a git directory (a bare repository, or `repo/.git`
  // given as the workspace) is read-only whole where the policy protects its `.git`, as
  // the default's `**/.git` makes it (red team R9-G1): with `protect: [.git]` the command
  // wrote its `hooks/pre-receive`. A policy that protects no `.git` keeps it writable.
  const std::string own_git = w.path + "/.git";
  if (is_git_directory(w.path) && protected_paths.contains(own_git)) {
    if (!protected_paths.covers(w.path)) protect_absolute(w.path, w.loc, true);
    if (tops.try_emplace(w.path).second) gitdirs.push_back(w.path);
  }
  for (const auto& repo : enclosing.above(w.path)) read_repository(w, repo);
}

// A writable root spelled through host links (`mono/app -> /data/app`, the caller's `cd
// mono/app`) has the repositories above each directory the spelling names (red team
// A23C-4): the host's `git commit` in `mono` runs `core.hooksPath = app/hooks`, which
// reaches the root through the link. Each such directory is taken by its canonical
// form, walked with the guards. One the walk cannot vouch for (the spelling's whole walk
// reached the root through it a moment ago: the host changed it since) refuses, rather
// than end the spelling unread (review R24-3).
void EnclosingReading::read_above_spelling(const ResolvedPath& s) {
  for (std::string at = s.path; at != "/";) {
    at = at.substr(0, std::max<size_t>(at.rfind('/'), 1));
    const Canonical c = HostResolver::canonicalize(at, guards);
    if (c.stop != Canonical::Stop::None || !c.complete) {
      diags.error(s.loc, "the writable root spelled '" + s.path + "' passes '" + at +
                             "', which zpolicy cannot resolve now (" +
                             (c.stop == Canonical::Stop::None ? std::string("missing")
                                                              : "stopped at '" + c.at + "'") +
                             "): the repositories above it, whose hooks the host's git "
                             "runs, cannot be read; refusing to run");
      break;
    }
    for (const auto& repo : enclosing.at_and_above(c.path))
      if (!seen.contains({repo.top, repo.gitdir})) read_repository(s, repo);
    // A directory spelled without links has only canonical directories above it, which
    // at_and_above walked.
    if (c.path == at) break;
  }
}

// One repository found above the writable root `w` (by a name of it, or as spelled).
void EnclosingReading::read_repository(const ResolvedPath& w, const EnclosingRepository& repo) {
  seen.insert({repo.top, repo.gitdir});
  if (repo.shape == EnclosingRepository::Shape::Unreadable) {
    diags.error(w.loc, "git's discovery above the writable root '" + w.path + "' looks at '" +
                           repo.gitdir + "', and zpolicy cannot (" +
                           (repo.refusal.empty() ? std::strerror(repo.error) : repo.refusal) +
                           "): a repository there, whose " +
                           "config may name a path in the writable root, cannot be read; " +
                           "refusing to run");
    return;
  }
  if (repo.shape == EnclosingRepository::Shape::Inside) {
    if (refused.insert(w.path).second)
      diags.error(w.loc, "the writable root '" + w.path + "' lies inside the git " + "directory '" +
                             repo.gitdir + "', whose config the host's " +
                             "git reads and whose hooks it runs: the sandbox could write " +
                             "what git runs; choose a writable root outside every git " +
                             "directory; refusing to run");
    return;
  }
  // A `.git` symlink that leads to no git directory yet: protected where the kernel
  // would follow it (A22-1), so that the sandbox makes none there; a symlink in a
  // writable root on the way refuses the run (review A23R-2).
  if (repo.shape == EnclosingRepository::Shape::Link) {
    protect_absolute(repo.top + "/.git", w.loc, false);
    return;
  }
  // The `.git` file git reads the git directory's name from, each time it runs there:
  // one the host links into a writable root (`repo/.git -> app/gitfile`) is the
  // sandbox's to re-point; the command wrote `gitdir:` naming a git directory of its
  // own there, whose hooks the host's next `git commit` in `repo` ran (red team A23C-1).
  const auto protect_gitdir = [&](const std::string& path) {
    if (!protected_paths.covers(path)) protect_absolute(path, w.loc, true);
  };
  std::optional<std::string> gitdir;
  if (repo.shape == EnclosingRepository::Shape::Pointer) {
    const auto pointer = h.canonical_or_refuse(
        repo.top + "/.git", guards, w.loc,
        "the '.git' file of the repository '" + repo.top + "' above a writable root");
    if (!pointer) return;
    // Outside every writable root too: its other names there (a host bind mount, a hard
    // link at `app/gitfile`) are as much the sandbox's to write (red team A24-7).
    protect_gitdir(*pointer);
    // Followed as every `.git` pointer is (follow_git_pointer, review R25-2).
    const GitPointerWalk walk{[&](const std::string& lexical, const std::string& what) {
                                return h.canonical_or_refuse(lexical, guards, w.loc, what);
                              },
                              protect_gitdir,
                              [&](const std::string& path, const std::string& what) {
                                return h.created_in_guard(path, guards, w.loc, what);
                              }};
    gitdir = follow_git_pointer(*pointer, repo.top,
                                "the repository '" + repo.top + "' above a writable root", walk,
                                [&](const std::string& why) { diags.error(w.loc, why); })
                 .gitdir;
  } else {
    gitdir = h.canonical_or_refuse(
        repo.gitdir, guards, w.loc,
        "the git directory of the repository '" + repo.top + "' above a writable root");
    if (gitdir) protect_gitdir(*gitdir);
  }
  if (!gitdir) return;
  auto& at = tops[*gitdir];
  if (at.empty()) gitdirs.push_back(*gitdir);
  if (std::find(at.begin(), at.end(), repo.top) == at.end()) at.push_back(repo.top);
}

// The repositories that hold a writable root from above (red team A23-4;
// enclosing_repository.hpp). In a monorepo run with the workspace `repo/app`, the
// repository's `core.hooksPath = app/hooks` (husky's documented monorepo setup) named a
// directory the sandbox wrote, and the host's next `git commit` ran the hook it put there;
// `core.fsmonitor`, an alias, an include or a remote naming a path below `app` are the
// same. Their git directories join `gitdirs`, read as a protected git directory is (what
// their configs name in a writable root is protected, or refuses the run), with the top
// the walk found each at, where git resolves their relative values. A git directory one
// of them names in a writable root (a `.git` file's target) is the sandbox's to write
// whole: protected, unless a protected path (`protected_paths`) covers it already; one
// outside is protected as every git target is, so that another name the host's mounts
// give it in a writable root, or a dangling link on its way into one, is protected too.
// A writable root inside a git directory is refused: the host's git reads that directory's
// config and runs its hooks wherever they lie in it. Every name the host's mounts give a
// writable root (`guards`) is walked from, each directory once, and so is each writable
// root as the caller spelled it through host links (`spellings`, red team A23C-4).
std::map<std::string, std::vector<std::string>> read_enclosing_repositories(
    HostResolver& h, ir::Diagnostics& diags, const std::vector<ResolvedPath>& guards,
    ProtectedIndex& protected_paths,
    const std::function<void(const std::string&, const ir::SourceLoc&, bool)>& protect_absolute,
    const std::vector<ResolvedPath>& spellings, std::vector<std::string>& gitdirs) {
  EnclosingReading reading{h, diags, guards, protected_paths, protect_absolute, gitdirs};
  for (const auto& w : guards) reading.read_above(w);
  for (const auto& s : spellings) reading.read_above_spelling(s);
  return reading.tops;
}

// The state the passes of resolve_for_host share: the result they build (`r`), the host's
// walks (`h`), and what one pass leaves for a later one. Each pass runs once, in the order
// resolve_for_host lists them; a pass relies on the ones before it, never on a later one.
struct HostResolution {
  HostResolution(const ir::Policy& policy, ir::Mode mode, const HostFacts& host,
                 ir::Diagnostics& diags);
  HostResolution(const HostResolution&) = delete;
  HostResolution& operator=(const HostResolution&) = delete;

  void bind_readable_roots();
  void bind_writable_roots();
  void gather_guards();
  void protect_policy_paths();
  void refuse_links_planted_on_readable_roots();
  void deny_policy_roots();
  void deny_state_dir();
  void expand_patterns();
  void protect_common_directories();
  void protect_git_directories();
  std::vector<ResolvedPath> spelled_writable_roots() const;
  void protect_mount_aliases();
  void record_identities();
  void refuse_swapped_workspace();
  void refuse_line_breaks();
  void sort_in_bind_order();

  void protect(const std::string& root, std::vector<std::string> rel, const ir::SourceLoc& loc);
  void protect_git_pointer(const std::string& pointer, const ir::SourceLoc& loc);
  void protect_absolute(const std::string& lexical, const ir::SourceLoc& loc, bool canonical);
  void mask_other_names(const std::string& path, const ir::SourceLoc& loc);
  void deny(const std::string& lexical, const ir::SourceLoc& loc);
  bool refused_deny_made_in_writable_root(const std::string& path, const ir::SourceLoc& loc);

  const ir::Policy& policy;
  const ir::Mode mode;
  const HostFacts& host;
  ir::Diagnostics& diags;
  ir::Resolved r;
  HostResolver h;
  BlockedWays ways;
  // The host's, as the caller read it, or read once a link or a deny root needs it.
  std::optional<std::vector<MountEntry>> own_mounts;
  const std::function<const std::vector<MountEntry>&()> host_mounts;
  // The paths protect_absolute was given that no writable root holds by name: the host's
  // mounts may still show them in one (their other names are protected below).
  std::vector<ResolvedPath> protected_outside;
  // The existing directories among them, asked whether they hold a path.
  std::vector<ResolvedPath> outside_directories;
  ProtectedIndex outside_directories_index{outside_directories};
  // The writable roots as bind_writable_roots found them (protect_absolute's roots).
  std::vector<ResolvedPath> roots;
  // The writable roots and every other name the host's mounts give them or a part of them:
  // a symlink there is as much the sandbox's as one inside a root by name. With the host's
  // `mount --bind /srv/data WS/mnt` and `WS/mnt/cfg` planted, `protect:
  // [/srv/data/cfg/secret.env]` protected what the link chose, and the command replaced
  // the link and wrote the host's file (red team A21B-3).
  std::vector<ResolvedPath> guards;
  // The links each readable root's walk resolved, judged once the writable roots are known.
  std::vector<std::pair<const ir::Located<PolicyPath>*, std::vector<std::string>>> read_crossed;
  std::vector<ir::SourceLoc> workspace_rules;  // the `${WORKSPACE}` writable roots
  // The protected paths so far, as protect_common_directories and the git directories'
  // walk ask it.
  ProtectedIndex protected_index{r.protect};
  // The protected paths whose `commondir` protect_common_directories judged.
  std::set<std::string> commondir_judged;
  // The writable roots whose HEAD protect() judged: `.git` and `**/.git` both name a root's
  // `.git`, and its refusal was said once for each.
  std::set<std::string> head_judged;
};

HostResolution::HostResolution(const ir::Policy& policy, ir::Mode mode, const HostFacts& host,
                               ir::Diagnostics& diags)
    : policy(policy),
      mode(mode),
      host(host),
      diags(diags),
      r(common(policy, mode)),
      h(host, diags),
      host_mounts([this]() -> const std::vector<MountEntry>& {
        if (this->host.mounts) return *this->host.mounts;
        if (!own_mounts) own_mounts = read_mountinfo();
        return *own_mounts;
      }) {
  r.portable = false;
  r.cwd = ir::path_within(host.workspace, host.cwd) ? host.cwd : host.workspace;
}

// Each readable root as the host has it, and the names the sandbox sees through the host's
// own symlinks; the links each walk crossed are judged once the writable roots are known
// (refuse_links_planted_on_readable_roots).
void HostResolution::bind_readable_roots() {
  for (const auto& p : policy.read) {
    // Walked as the caller spelled its variable, so that a link on the way to `$HOME` is
    // judged too (a `HOME` kept in the workspace); `named` is only the name the sandbox
    // sees it at.
    const std::string named = h.bind(p.value);
    std::vector<std::string> links;
    auto c = h.walked_or_refuse(h.spelled(p.value), {}, p.loc, "readable root", &links);
    if (!c) continue;
    if (!links.empty()) read_crossed.emplace_back(&p, std::move(links));
    const HostKind k = c->kind();
    if (k == HostKind::Missing) continue;
    r.read.push_back({c->path, k, p.loc});
    if (named != c->path) r.read_links.push_back({named, c->path, p.loc});
  }
  // A name another readable root already shows (as the host's own symlink) needs nothing.
  std::erase_if(r.read_links,
                [&](const ir::ReadLink& l) { return ir::within_any(r.read, l.link); });
  std::sort(r.read_links.begin(), r.read_links.end(),
            [](const ir::ReadLink& a, const ir::ReadLink& b) { return a.link < b.link; });
  r.read_links.erase(std::unique(r.read_links.begin(), r.read_links.end(),
                                 [](const ir::ReadLink& a, const ir::ReadLink& b) {
                                   return a.link == b.link;
                                 }),
                     r.read_links.end());
}

// Each writable root, an existing directory, held to the rule of every path the policy
// names. Workspace-write only.
void HostResolution::bind_writable_roots() {
  // The links each root's walk resolved (the root spelled as the caller gave it, its
  // variable's value included), for the check after the loop.
  std::vector<std::pair<const ir::Located<PolicyPath>*, std::vector<std::string>>> crossed;
  for (const auto& w : policy.write) {
    const std::string spelled = h.spelled(w.value);
    std::vector<std::string> links;
    auto c = h.walked_or_refuse(spelled, {}, w.loc, "writable root", &links);
    if (!c) continue;
    const std::string* root = &c->path;
    if (!links.empty()) crossed.emplace_back(&w, std::move(links));
    const HostKind k = c->kind();
    if (k != HostKind::Directory) {
      diags.error(w.loc, "writable root '" + *root + "' is not an existing directory" +
                             (k == HostKind::Missing
                                  ? "; create it (`mkdir -p '" + *root +
                                        "'`) or remove it from filesystem.write"
                                  : std::string()));
      continue;
    }
    r.write.push_back({*root, k, w.loc});
    if (w.value.root == PathRoot::Workspace && w.value.components.empty())
      workspace_rules.push_back(w.loc);
    if (*root == "/tmp") r.private_tmp = false;
  }
  // A writable root is held to the rule of every other path the policy names (N20-1):
  // `write: [W, W/build/out]` with `W/build` a link, or `write: ["${WORKSPACE}/build/out"]`
  // alone after a run under the default policy made it one (N20-3), bound the host
  // directory the link chose.
  for (const auto& [w, links] : crossed)
    refuse_planted_link(r, host, diags, "writable root", h.spelled(w->value), w->loc, links,
                        host_mounts);
}

// The guards: the writable roots, and every other name the host's mounts give them or a
// part of them (the same object). Every later walk that may not follow a link the sandbox
// could have planted is walked with them. Workspace-write only.
void HostResolution::gather_guards() {
  roots = r.write;
  guards = roots;
  if (host.os == HostOs::Linux)
    for (const auto& w : roots)
      for (auto& [name, original] : mount_aliases(w.path, host_mounts()))
        if (const auto id = identity_of(original); id && identity_of(name) == id)
          guards.push_back({std::move(name), HostKind::Directory, w.loc});
}

// One protected path in the writable root `root`, and what makes it whole: a `.git`
// pointer's git directory, a root's HEAD where git would take the root for a repository.
void HostResolution::protect(const std::string& root, std::vector<std::string> rel,
                             const ir::SourceLoc& loc) {
  // A file where the path needs a directory: protect the file, which is all that
  // stands between the sandbox and creating the path (blocked_way.hpp).
  if (auto keep = ways.length(root, rel)) rel.resize(*keep);
  std::string path = join(root, rel);
  HostKind pk = kind_of(path);
  add_protected(r, root, rel, pk, loc);
  // The pointer's target is walked with the guards, every name the host's mounts give
  // a writable root: with the host's `mount --bind /srv/data WS/mnt`, a pointer naming
  // `/srv/data/x/gd` followed `WS/mnt/x`, a link an earlier run planted, and the command
  // replaced it by a git directory with hooks of its own (red team A22-4).
  if (!rel.empty() && rel.back() == ".git" && pk == HostKind::File) protect_git_pointer(path, loc);
  // Where a writable root's `.git` is neither a regular file (a pointer, which git
  // follows or dies on) nor a git directory (missing: a plain directory, or a package
  // of a repository above; a FIFO), git's discovery takes the root itself for a bare
  // repository once it holds a HEAD, `objects` and `refs`, and obeys its `config`: the
  // sandbox made them and the host's next `git status` there ran its `core.fsmonitor`
  // (red team R18-2). Its HEAD is protected too, so that it cannot be made. One that is
  // there already and git would take (a file saying `ref: refs/heads/main`) only waits for
  // the rest: the command made `objects`, `refs` and a `config` with `core.worktree` and
  // `core.fsmonitor` beside it, and the host's `git status` in the root ran it (red team
  // A25-2). No placeholder can keep `objects` and `refs` from git (both would be
  // directories), so that is refused.
  if (rel.size() == 1 && rel[0] == ".git" && !is_regular_file(path) &&
      !holds_git_directory_parts(path) && head_judged.insert(root).second) {
    const std::vector<std::string> head{"HEAD"};
    if (git_head_at(join(root, head)) != GitHead::None) {
      diags.error(loc, "'" + join(root, head) + "' is a HEAD git would take, and '" + path +
                           "' is no git directory: once the sandbox made 'objects' and " +
                           "'refs' beside it, git's discovery would take '" + root +
                           "' for a bare repository and obey the 'config' the sandbox " +
                           "wrote there; rename or remove that HEAD; refusing to run");
      return;
    }
    if (h.canonical_or_refuse(join(root, head), guards, loc, "protected path"))
      add_protected(r, root, head, kind_of(join(root, head)), loc);
  }
}

// A `.git` that is a file (worktree, submodule) points at the real git directory, which
// needs the same protection as the pointer, and is canonicalized by the same rules: a
// symlink inside a writable root on the way would let the sandbox re-point the host's next
// git command at a directory it wrote. Followed as every `.git` pointer is
// (follow_git_pointer): one that exists is protected as it is, one that is missing gets a
// placeholder where the kernel would create it; it was refused here while the other
// followers protected it, and one passed it by (review R25-2: one rule for all four).
void HostResolution::protect_git_pointer(const std::string& pointer, const ir::SourceLoc& loc) {
  const GitPointerWalk walk{[&](const std::string& lexical, const std::string& what) {
                              return h.canonical_or_refuse(lexical, guards, loc, what);
                            },
                            [&](const std::string& path) {
                              const HostKind k = kind_of(path);
                              if (k == HostKind::Missing)
                                protect_absolute(path, loc, true);
                              else
                                r.protect.push_back({path, k, loc});
                            },
                            [&](const std::string& path, const std::string& what) {
                              return h.created_in_guard(path, guards, loc, what);
                            }};
  const std::string top = pointer.substr(0, pointer.rfind('/'));
  const auto followed = follow_git_pointer(pointer, top, "the protected '.git' file", walk,
                                           [&](const std::string& why) { diags.error(loc, why); });
  if (followed.gitdir) h.record_pointer_worktree(*followed.gitdir, top);
}

// What a protect entry or pattern names on the host, protected in each writable root
// that holds it (for workspace-write only: no root holds anything otherwise).
void HostResolution::protect_absolute(const std::string& lexical, const ir::SourceLoc& loc,
                                      bool canonical) {
  if (mode != ir::Mode::WorkspaceWrite) return;
  auto walked =
      canonical ? std::nullopt : h.walked_or_refuse(lexical, guards, loc, "protected path");
  if (!canonical && !walked) return;
  std::optional<std::string> abs = canonical ? lexical : walked->path;
  // What the walk found; where it ended short (a missing component, a dangling link) or
  // for a canonical one (a mount's name, a git target: no link but perhaps its last), a
  // look that follows no link, which takes a link at the end for a file.
  HostKind kind = walked && walked->complete ? walked->kind() : kind_of(*abs);
  // A missing one outside every writable root spelled from a dangling link is created
  // where the link leads, which may be a writable root: with the host's `/srv/dl ->
  // WS/new`, `protect: [/srv/dl/key]` protected nothing, and the command made
  // `WS/new/key`, which the host then read as `/srv/dl/key` (red team A22-1). That
  // name is protected too, as the kernel would follow the link (and a link after it).
  for (int followed = 0; abs && followed <= kMaxLinksFollowed; ++followed) {
    bool held = false;
    for (const auto& w : roots)
      if (ir::path_within(w.path, *abs)) {
        protect(w.path, components_below(w.path, *abs), loc);
        held = true;
      }
    if (held) return;
    // One an existing directory recorded already holds needs no walk of its own: the
    // searches of other names walk that directory whole (a git directory recorded whole,
    // then its hooks and config files, review R24-1). Not one that holds a writable root,
    // which the search of hard links skips (`protect: [/home/u]` around the workspace).
    if (!outside_directories_index.covers(*abs)) {
      protected_outside.push_back({*abs, kind, loc});
      if (kind == HostKind::Directory &&
          std::none_of(roots.begin(), roots.end(),
                       [&](const ResolvedPath& w) { return ir::path_within(*abs, w.path); }))
        outside_directories.push_back({*abs, kind, loc});
    }
    // A canonical path that is a symlink is one that could not be followed (dangling).
    if (struct stat st; kind != HostKind::Missing &&
                        !(stat_without_links(*abs, st) && S_ISLNK(st.st_mode)))
      return;
    abs = h.created_through_link(*abs, guards, loc, "protected path");
    if (abs) kind = kind_of(*abs);
  }
}

// The policy's protect entries: a relative one in every writable root, an absolute one in
// each root that holds it. Workspace-write only.
void HostResolution::protect_policy_paths() {
  for (const auto& pr : policy.protect) {
    if (pr.value.is_relative()) {
      for (const auto& w : roots)
        if (h.canonical_or_refuse(join(w.path, pr.value.components), guards, pr.loc,
                                  "protected path"))
          protect(w.path, pr.value.components, pr.loc);
      continue;
    }
    // As the caller spelled its variable: a link on the way to a `HOME` kept in a
    // writable root is judged as any other (the anchor would have followed it).
    protect_absolute(h.spelled(pr.value), pr.loc, false);
  }
}

void HostResolution::refuse_links_planted_on_readable_roots() {
  // A readable root is held to the same rule (red team A21-3): `read: [/usr, …,
  // "${WORKSPACE}/docs"]`, after a run under the default policy made `docs` a link to
  // `/root`, bound `/root` readable, a directory no readable root names; the verifier
  // refused only a link that was the root itself in a workspace this policy writes.
  for (const auto& [p, links] : read_crossed)
    refuse_planted_link(r, host, diags, "readable root", h.spelled(p->value), p->loc, links,
                        host_mounts);
}

// The other names the host's own mounts give an existing deny root or a part of it (a
// directory bind-mounted elsewhere, a filesystem mounted twice) show it again under a
// read root: each is masked too (red team A11-3). Only a name that shows that very
// object now: one another mount covers shows something else, and needs nothing.
void HostResolution::mask_other_names(const std::string& path, const ir::SourceLoc& loc) {
  if (host.os != HostOs::Linux) return;
  for (const auto& [name, original] : mount_aliases(path, host_mounts())) {
    // The same object as the deny root, which the walk found link-free; or a part the
    // caller cannot look at (below a deny root it may stat but not search: uid 65534's
    // 0700 `/priv/secret` in a 0711 `/priv`, with the host's `mount --bind
    // /priv/secret/sub WS/mnt`, read `mnt/k`; red team A22C-5), masked by the table alone.
    if (!same_object_or_unseen(original, name)) continue;
    r.deny.push_back({name, kind_of(name), loc});
  }
}

// One deny root: masked under its name and every other name the host's mounts give it;
// one missing is refused where the sandbox could make it.
void HostResolution::deny(const std::string& lexical, const ir::SourceLoc& loc) {
  auto c = h.walked_or_refuse(lexical, guards, loc, "deny path");
  if (!c) return;
  const std::string* path = &c->path;
  bool inside = ir::within_any(r.write, *path);
  r.deny.push_back({*path, c->kind(), loc});
  if (r.deny.back().kind != HostKind::Missing) {
    mask_other_names(*path, loc);
    return;
  }
  // One the caller cannot look at (in a directory it may not search) may still be shown
  // by a mount elsewhere: uid 65534's `deny: [/priv/secret]` with the host's `mount
  // --bind /priv/secret WS/mnt` was read through `mnt` under narrowed read roots (with
  // `/` readable the watch of `/priv` fails closed; red team A22-3). Its identity cannot
  // be compared: masked by the table alone, as A21C-2 protects.
  // Every name the table gives it or a part of it: with the host's `mount --bind
  // /priv/secret/sub WS/mnt`, a name kept only where it showed the deny root itself left
  // `mnt`, a part of it, readable (red team A22C-1).
  struct stat st;
  const bool unseen = !stat_without_links(*path, st) && errno == EACCES;
  if (unseen && host.os == HostOs::Linux)
    for (const auto& alias : mount_aliases(*path, host_mounts()))
      r.deny.push_back({alias.name, kind_of(alias.name), loc});
  // One outside every writable root by name is left missing (a placeholder would create
  // it on the host) and only watched, which stops the sandbox once it made the deny root,
  // not before it wrote there: with the host's `mount --bind /srv/data WS/mnt` and `deny:
  // [/srv/data/secret]`, or the host's dangling `/srv/dl -> WS/new` and `deny: [/srv/dl]`
  // (A22-1's way for a deny root), the command made `secret` (`new`) and wrote
  // `authorized_keys` there, which the host read as the deny root's (red team A22C-2,
  // A22C-3). Where the kernel would create it, the name itself or where a dangling link
  // leads, lies in a writable root or another name the host's mounts give one: refused.
  // Not one the caller cannot look at: its sandbox, the caller's uid, cannot make it.
  if (!inside && !unseen && refused_deny_made_in_writable_root(*path, loc)) return;
  // A missing one in a writable root gets a placeholder at its name, which another name
  // of its directory there leaves writable: with the host's `mount --bind WS WS/up`, the
  // command wrote into `up/ddir`, the placeholder of `deny: [WS/ddir]`, and what it
  // wrote was left on the host at `WS/ddir` (red team A21C-5). Each such name is a deny
  // root too, so it gets a placeholder of its own. Not for one outside every writable
  // root: its placeholder would create it on the host, where the runner watches that it
  // stays missing, and every run would be refused.
  if (!inside || host.os != HostOs::Linux) return;
  for (auto& name : missing_path_other_names(*path, host_mounts()))
    if (ir::within_any(r.write, name)) r.deny.push_back({std::move(name), HostKind::Missing, loc});
}

// Whether the missing deny root `path`, outside every writable root by name, is refused
// because the kernel would create it in a writable root or another name the host's mounts
// give one: the name itself, or where a dangling link leads, link after link (deny()).
bool HostResolution::refused_deny_made_in_writable_root(const std::string& path,
                                                        const ir::SourceLoc& loc) {
  std::optional<std::string> at = path;
  for (int followed = 0; at && followed <= kMaxLinksFollowed; ++followed) {
    for (const auto& w : guards)
      if (ir::path_within(w.path, *at)) {
        const bool by_name = std::any_of(r.write.begin(), r.write.end(),
                                         [&](const ResolvedPath& v) { return v.path == w.path; });
        diags.error(loc, "deny root '" + path + "' does not exist, and the kernel would " +
                             "create it at '" + *at + "', in " +
                             (by_name ? "the writable root '" + w.path + "'"
                                      : "'" + w.path + "', which the host's mounts show " +
                                            "in a writable root") +
                             ": the sandbox could make it and write what the host then " +
                             "reads as the deny root; create it outside every writable " +
                             "root, or remove it from filesystem.deny; refusing to run");
        return true;
      }
    struct stat st;
    if (kind_of(*at) != HostKind::Missing && !(stat_without_links(*at, st) && S_ISLNK(st.st_mode)))
      break;
    at = h.created_through_link(*at, guards, loc, "deny path");
  }
  return false;
}

// The policy's deny entries, walked with the guards.
void HostResolution::deny_policy_roots() {
  for (const auto& d : policy.deny) deny(h.spelled(d.value), d.loc);
}

void HostResolution::deny_state_dir() {
  // zpolicy's own state is never reachable from a sandbox. The runner creates the
  // directory before bwrap starts, so it is masked as a directory whether or not it
  // exists yet.
  if (!host.state_dir.empty() && host.os == HostOs::Linux) {
    const ir::SourceLoc state_rule{kStateDirRule, 0, 0};
    if (auto c =
            h.walked_or_refuse(host.state_dir, r.write, state_rule, "zpolicy's state directory")) {
      r.deny.push_back({c->path, HostKind::Directory, state_rule});
      // Under another name a read root shows, the sandbox could flock the lock and stall
      // every other run (red team A11B-3); the runner refuses a name that stays unmasked.
      if (c->kind() == HostKind::Directory) mask_other_names(c->path, state_rule);
    }
  }
}

void HostResolution::expand_patterns() {
  // Patterns after the literal rules, whose walks skip what those protect or deny.
  // A pattern's walk that meets a host link leading nowhere yet asks where the kernel would
  // create what it leads to, as a literal deny root or protected path spelled through it is
  // judged above (A22-1, A22C-2): the first name in a guard, link after link.
  const HostBinding binding{
      [&](const PolicyPath& p) { return h.bind(p); },
      [&](const std::string& lexical, const ir::SourceLoc& loc) {
        return h.canonical_or_refuse(lexical, guards, loc, "pattern");
      },
      [&](const std::string& path, const ir::SourceLoc& loc) {
        return h.created_in_guard(path, guards, loc, "path a pattern names");
      },
      // Judged link by link as a literal path spelled through it is
      // (A21-1): a symlink in a writable root on the way refuses.
      [&](const std::string& link, std::string& refusal) -> std::optional<FollowedLink> {
        const Canonical c = HostResolver::canonicalize(link, guards);
        h.note_left_by_dot_dot(c);
        if (c.stop == Canonical::Stop::SymlinkInWritableRoot) {
          refusal = "the host's symlink '" + link + "' leads through the symlink '" + c.at +
                    "' inside a writable root, which the sandbox could "
                    "re-point; name the directory it leads to";
          return std::nullopt;
        }
        // A loop the sandbox cannot open names nothing, now or later: the kernel's lookup
        // fails there for the host and the sandbox alike. Taken for a dangling link, it asked
        // where the kernel would create what it names, and refused every run (red team
        // A24-5).
        if (c.stop == Canonical::Stop::TooManyLinks && HostResolver::loops_for_good(link, guards))
          return FollowedLink{{}, false, true};
        if (c.stop != Canonical::Stop::None) return FollowedLink{};
        return FollowedLink{c.path, c.complete};
      }};
  // A match that is such a loop itself names nothing either; a literal path through one
  // still refuses (the user named it).
  const auto names_nothing = [&](const PatternHit& hit) {
    return !hit.canonical && HostResolver::loops_for_good(hit.path, guards);
  };
  if (auto hits = expand_deny_patterns(policy, r, binding, diags))
    for (const auto& hit : *hits)
      if (!names_nothing(hit)) deny(hit.path, hit.loc);
  if (auto hits = expand_protect_patterns(policy, r, guards, binding, diags))
    for (const auto& hit : *hits)
      if (!names_nothing(hit)) protect_absolute(hit.path, hit.loc, hit.canonical);
}

// A linked worktree's git directory names, in `commondir`, the directory whose config
// and hooks git reads for it: protected too, wherever it lies, also when it is no
// repository by itself (no HEAD; red team A12-4). By index: protecting one appends to
// the list, and a common directory may name another; one already protected is skipped,
// so a cycle ends.
void HostResolution::protect_common_directories() {
  for (size_t i = 0; i < r.protect.size(); ++i) {
    if (r.protect[i].kind != HostKind::Directory) continue;
    commondir_judged.insert(r.protect[i].path);
    const auto [common, link, refusal] = commondir_named_by(r.protect[i].path);
    const ir::SourceLoc loc = r.protect[i].loc;
    if (link)
      diags.error(loc, "'" + r.protect[i].path +
                           "/commondir' is a symlink: git reads the "
                           "common directory's name through it, from a file that may lie in a "
                           "writable root; refusing to run");
    if (refusal)
      diags.error(loc, "git reads the common directory's name from '" + r.protect[i].path +
                           "/commondir', and " + *refusal + "; refusing to run");
    if (!common) continue;
    // Walked with the guards before the index is asked: a common directory named through a
    // link the sandbox planted (the host's `mount --bind /srv WS/mnt`, `mnt/x -> WS/real`,
    // `commondir` naming `/srv/x/.git`) was found protected already, as `WS/real/.git`, and
    // skipped unjudged; the command re-pointed `mnt/x` at a repository of its own, whose
    // `core.fsmonitor` the host's next `git status` in the worktree ran (red team A22C-7).
    const auto c = h.walked_or_refuse(*common, guards, loc,
                                      "common git directory named by '" + r.protect[i].path +
                                          "/commondir'");
    if (c && !protected_index.contains(c->path)) protect_absolute(*common, loc, false);
  }
}

// Every git directory among the protected paths, and each one it leads to, read for what
// git would run or read from a writable root (git_directories.hpp). After the common
// directories: a git directory's `commondir` that pass judged is not refused again.
void HostResolution::protect_git_directories() {
  const HostWalks walks{
      [this](const std::string& lexical) {
        Canonical c = HostResolver::canonicalize(lexical, guards);
        h.note_left_by_dot_dot(c);
        return c;
      },
      [this](const std::string& lexical, const ir::SourceLoc& loc, const std::string& what) {
        return h.walked_or_refuse(lexical, guards, loc, what);
      },
      [this](const std::string& lexical, const ir::SourceLoc& loc, const std::string& what) {
        return h.canonical_or_refuse(lexical, guards, loc, what);
      },
      [this](const std::string& path, const ir::SourceLoc& loc, const std::string& what) {
        return h.created_through_links(path, guards, loc, what);
      },
      [this](const std::string& path, const ir::SourceLoc& loc, const std::string& what) {
        return h.created_in_guard(path, guards, loc, what);
      },
      [this](const std::string& gitdir) { return h.pointer_worktrees(gitdir); },
      [this](const std::string& lexical) { return HostResolver::loops_for_good(lexical, guards); },
  };
  const std::function<void(const std::string&, const ir::SourceLoc&, bool)> protect_path =
      [this](const std::string& path, const ir::SourceLoc& loc, bool canonical) {
        protect_absolute(path, loc, canonical);
      };
  std::vector<std::string> enclosing_gitdirs;
  const auto enclosing_tops = read_enclosing_repositories(
      h, diags, guards, protected_index, protect_path, spelled_writable_roots(), enclosing_gitdirs);
  compiler::protect_git_directories(
      r.protect, {walks, guards, protect_path, protected_index, commondir_judged, host.home,
                  host.cwd, host.environment, diags, enclosing_gitdirs, enclosing_tops});
}

// The writable roots as the caller spelled them where that is another name of the same
// root through host links: `${WORKSPACE}` as the caller named the workspace
// (HostFacts::workspace_spelled: `cd mono/app` with the host's `mono/app -> /data/app`),
// an absolute or `~` root as the policy spells it. Only a spelling the guarded walk takes
// to the root itself (no link in a writable root on the way) counts (red team A23C-4).
// A spelling with an empty component, '.' or '..' (a `HOME` of `/x/mono/app/` made
// `~/proj` `/x/mono/app//proj`) was skipped, and with it the repository `mono` whose
// `core.hooksPath = app/proj/hooks` the host's `git commit` ran (review R24-3). It is taken
// as the shell's logical `cd` reads it (each '..' taking the name before it away), and,
// where it has a '..', also as the kernel does (the directory each prefix names).
std::vector<ResolvedPath> HostResolution::spelled_writable_roots() const {
  std::vector<ResolvedPath> out;
  for (const auto& w : policy.write) {
    const bool in_workspace = w.value.root == PathRoot::Workspace;
    if (in_workspace && host.workspace_spelled.empty()) continue;
    const std::string spelled =
        in_workspace ? join(host.workspace_spelled, w.value.components) : h.spelled(w.value);
    if (spelled.empty() || spelled[0] != '/') continue;
    std::vector<std::string> readings{lexically_normal(spelled)};
    std::vector<std::string> comps;
    bool dot_dot = false;
    for (const auto& part : components_below("/", spelled))
      if (part != ".") {
        dot_dot |= part == "..";
        comps.push_back(part);
      }
    if (dot_dot) readings.push_back(join("/", comps));
    for (const auto& reading : readings) {
      const Canonical c = HostResolver::canonicalize(reading, guards);
      if (c.stop != Canonical::Stop::None || c.path == reading ||
          std::none_of(r.write.begin(), r.write.end(),
                       [&](const ResolvedPath& root) { return root.path == c.path; }) ||
          std::any_of(out.begin(), out.end(),
                      [&](const ResolvedPath& o) { return o.path == reading; }))
        continue;
      out.push_back({reading, HostKind::Directory, w.loc});
    }
  }
  return out;
}

void HostResolution::protect_mount_aliases() {
  // The other names the host's own mounts give an existing protected path or a part of it
  // (`mount --bind .git/hooks hooks`) are ways to it: each one in a writable root is protected too,
  // as the deny roots' are masked (red team A11-6). So are those of a protected path no
  // writable root holds by name: `protect: [/srv/data/secret.env]` with the host's `mount
  // --bind /srv/data WS/mnt` left `WS/mnt/secret.env` writable (red team A21B-2).
  // A missing one's placeholder is made at the name the policy gave it, and another name
  // of its directory in a writable root is a way to it too: with the host's `mount --bind
  // WS WS/up`, the placeholder of a missing `.git` left `WS/up/.git` writable and the
  // command planted `.git/hooks/pre-commit` and `.git/config` (red team A21C-3).
  if (host.os == HostOs::Linux) {
    std::vector<ResolvedPath> protected_paths = r.protect;
    std::vector<ResolvedPath> looked_up = protected_outside;
    for (const auto& p : r.protect)
      if (p.kind == HostKind::Missing) looked_up.push_back(p);
    auto unprotected = [this](const std::string& name) {
      return std::none_of(r.protect.begin(), r.protect.end(),
                          [&](const ResolvedPath& q) { return q.path == name; });
    };
    for (const auto& p : looked_up) {
      if (p.kind != HostKind::Missing) {
        protected_paths.push_back(p);
        continue;
      }
      // One the caller cannot look at (in a directory it may not search) may still be a
      // mount's root, shown in a writable root: uid 65534's `protect: [/priv/secret.env]`
      // with the host's `mount --bind /priv/secret.env WS/secret.env` left it writable
      // (red team A21C-2). Its identity cannot be compared: protected by the table alone,
      // under every name of it or a part of it (the host's `mount --bind /priv/prot/sub
      // WS/mnt` left `mnt` writable; red team A22C-4).
      if (struct stat st; !stat_without_links(p.path, st) && errno == EACCES)
        for (const auto& alias : mount_aliases(p.path, host_mounts()))
          if (unprotected(alias.name)) protect_absolute(alias.name, p.loc, true);
      // A missing one would be created through the names of its deepest existing
      // directory (a placeholder there keeps it from being made).
      // Walked with the guards: the name may pass a link in a writable root (A22-2's
      // blocker a dangling link shown there), which the sandbox may re-point.
      for (const auto& name : missing_path_other_names(p.path, host_mounts()))
        if (unprotected(name)) protect_absolute(name, p.loc, false);
    }
    for (const auto& p : protected_paths) {
      if (p.kind == HostKind::Missing) continue;
      for (const auto& [name, original] : mount_aliases(p.path, host_mounts()))
        if (same_object_or_unseen(original, name)) protect_absolute(name, p.loc, true);
    }
  }
}

void HostResolution::record_identities() {
  // Last, so that every check above looked at these objects or earlier ones; the runner
  // binds nothing but them.
  for (auto* list : {&r.read, &r.write, &r.pin, &r.protect, &r.deny})
    for (auto& p : *list)
      if (p.kind != HostKind::Missing) p.identity = identity_of(p.path, &p.links);
}

// A `${WORKSPACE}` writable root still names the workspace the caller resolved.
void HostResolution::refuse_swapped_workspace() {
  for (const auto& loc : workspace_rules) {
    auto w = std::find_if(r.write.begin(), r.write.end(),
                          [&](const ResolvedPath& p) { return p.path == host.workspace; });
    if (host.workspace_identity && (w == r.write.end() || w->identity != host.workspace_identity))
      diags.error(loc, "the workspace '" + host.workspace +
                           "' changed while the policy was resolved (replaced or swapped for a "
                           "symlink); refusing to run");
  }
}

void HostResolution::refuse_line_breaks() {
  // The artifacts hold one path per line (bwrap.args, bwrap.fds): a host name with a line
  // break in it, a workspace's or one the host's mount table gives a deny root, cannot be
  // written down faithfully. Refused here, naming the name once with the first rule that
  // reaches it, rather than as the malformed artifact the verifier would find.
  std::set<std::string> broken;
  auto refuse_line_break = [&](const std::string& path, const ir::SourceLoc& loc) {
    const size_t at = path.find_first_of("\n\r");
    if (at == std::string::npos) return;
    const std::string name = path.substr(0, path.find('/', at));
    if (broken.insert(name).second)
      diags.error(loc, "the host path '" + name +
                           "' holds a line break, which the artifacts (one path per line) "
                           "cannot carry; rename it; refusing to run");
  };
  for (const auto* list : {&r.write, &r.read, &r.deny, &r.protect, &r.pin})
    for (const auto& p : *list) refuse_line_break(p.path, p.loc);
  for (const auto& l : r.read_links) refuse_line_break(l.link, l.loc);
  refuse_line_break(r.cwd, {"<working directory>"});
}

void HostResolution::sort_in_bind_order() {
  sort_by_depth(r.read);
  sort_by_depth(r.write);
  sort_by_depth(r.pin);
  sort_by_depth(r.protect);
  sort_by_depth(r.deny);
}

}  // namespace

std::optional<ir::Resolved> resolve_for_host(const ir::Policy& policy, ir::Mode mode,
                                             const HostFacts& host, ir::Diagnostics& diags) {
  HostResolution s(policy, mode, host, diags);
  s.bind_readable_roots();
  if (mode == ir::Mode::WorkspaceWrite) {
    s.bind_writable_roots();
    s.gather_guards();
    s.protect_policy_paths();
  }
  s.refuse_links_planted_on_readable_roots();
  s.deny_policy_roots();
  s.deny_state_dir();
  s.expand_patterns();
  s.protect_common_directories();
  s.protect_git_directories();
  s.protect_mount_aliases();
  // After every protected path is known, patterns' matches and mount aliases included.
  protect_hard_links_and_special_files(s.r, s.protected_outside, diags);
  drop_masked(s.r, host.workspace);
  refuse_pins_over_budget(s.r, diags);
  add_pins(s.r);
  pin_left_by_dot_dot(s.r, s.h.left_by_dot_dot(), diags);
  for (auto& p : s.r.pin) p.kind = kind_of(p.path);
  s.record_identities();
  s.refuse_swapped_workspace();
  s.refuse_line_breaks();
  s.sort_in_bind_order();
  if (diags.has_errors()) return std::nullopt;
  return std::move(s.r);
}

std::vector<ir::ResolvedPath*> placeholder_candidates(ir::Resolved& r) {
  std::vector<ir::ResolvedPath*> out;
  if (r.mode != ir::Mode::WorkspaceWrite) return out;
  for (auto& p : r.pin) out.push_back(&p);
  for (auto& p : r.protect) out.push_back(&p);
  for (auto& d : r.deny)
    for (const auto& w : r.write)
      if (ir::path_within(w.path, d.path) && d.path != w.path) {
        out.push_back(&d);
        break;
      }
  std::vector<std::pair<size_t, ir::ResolvedPath*>> keyed;
  keyed.reserve(out.size());
  for (auto* p : out) keyed.emplace_back(depth_of(p->path), p);
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < out.size(); ++i) out[i] = keyed[i].second;
  return out;
}

void assume_placeholders(ir::Resolved& r) {
  for (auto* p : placeholder_candidates(r))
    if (p->kind == HostKind::Missing) p->kind = HostKind::Directory;
}

}  // namespace zpolicy::compiler
