#include "runner/host_name_watch.hpp"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "compiler/lint/host_lookups.hpp"
#include "ir/path.hpp"

namespace zpolicy::runner {
namespace {

using compiler::ExpectedObject;

bool is_mount_root(ExpectedObject::Kind k) {
  return k == ExpectedObject::Kind::Bind || k == ExpectedObject::Kind::Tmpfs ||
         k == ExpectedObject::Kind::Dev || k == ExpectedObject::Kind::Proc;
}

bool strictly_below(const std::string& root, const std::string& path) {
  return path != root && ir::path_within(root, path);
}

bool replacement_widens(const ExpectedObject& around, const ExpectedObject& o) {
  if (!around.read_only) return !(o.kind == ExpectedObject::Kind::Bind && !o.read_only);
  return !(o.kind == ExpectedObject::Kind::Bind && o.source == o.dest);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// A rename away, a rename over, a removal: what detaches a mount from its name. A name
// created afresh needs one of them first (a protected name exists while a run is live:
// its placeholder), and bwrap itself creates missing mount points, which is no threat.
constexpr uint32_t kEvents = IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;

constexpr const char* kUndone =
    " was renamed or removed on the host while the sandbox ran, so the protection mounted "
    "there no longer held";

}  // namespace

std::vector<WatchedName> watched_names(const std::vector<ExpectedObject>& setup) {
  // The mount bwrap resolved setup[i] in: visible mounts at ancestors come shallow to deep
  // (a later one at an ancestor would hide the earlier), so the last one before it.
  auto around = [&](size_t i) -> std::optional<size_t> {
    for (size_t j = i; j-- > 0;)
      if (is_mount_root(setup[j].kind) && strictly_below(setup[j].dest, setup[i].dest)) return j;
    return std::nullopt;
  };
  auto host_bind = [&](size_t i) {
    return setup[i].kind == ExpectedObject::Kind::Bind && !setup[i].source.empty();
  };
  std::vector<WatchedName> out;
  // Every name from the bind at `a` down to the object at `i`, on the host.
  auto watch_way = [&](size_t a, size_t i) {
    std::string directory = setup[a].source;
    const std::string& dest = setup[i].dest;
    const std::string rest = dest.substr(setup[a].dest == "/" ? 1 : setup[a].dest.size() + 1);
    for (size_t pos = 0; pos < rest.size();) {
      size_t end = rest.find('/', pos);
      if (end == std::string::npos) end = rest.size();
      WatchedName w{directory, rest.substr(pos, end - pos), dest};
      bool seen = false;
      for (const auto& e : out) seen |= e.directory == w.directory && e.name == w.name;
      if (!seen) out.push_back(w);
      directory = join(directory, w.name);
      pos = end + 1;
    }
  };
  for (size_t i = 0; i < setup.size(); ++i) {
    if (!is_mount_root(setup[i].kind)) continue;
    auto a = around(i);
    if (!a || !host_bind(*a) || !replacement_widens(setup[*a], setup[i])) continue;
    // Replacing the name of a writable bind around it moves this protection away as well
    // and leaves a writable name (the pins of a nested repository's parents). Under a
    // read-only bind the host's new object would be read-only: nothing widens there.
    for (size_t cur = i; a && host_bind(*a) && (cur == i || !setup[*a].read_only);
         cur = *a, a = around(*a))
      watch_way(*a, cur);
  }
  return out;
}

namespace {

bool missing_outside_writable(const ir::Resolved& resolved, const ir::ResolvedPath& d) {
  if (d.kind != ir::HostKind::Missing) return false;
  // Inside a writable root, a placeholder and a mask cover it (runner/placeholders).
  return !ir::within_any(resolved.write, d.path);
}

}  // namespace

std::vector<WatchedName> missing_deny_names(const ir::Resolved& resolved, std::string& appeared,
                                            std::vector<std::string>* roots) {
  std::vector<WatchedName> out;
  auto add = [&](WatchedName w) {
    for (const auto& e : out)
      if (e.directory == w.directory && e.name == w.name && e.created == w.created) return;
    out.push_back(std::move(w));
  };
  compiler::HostLookups host;
  for (const auto& d : resolved.deny) {
    if (!missing_outside_writable(resolved, d)) continue;
    // Every entry the kernel looks up on the way, symlinks followed: a link on the way,
    // dangling (`~/.aws -> /mnt/secrets/aws`) or made since the resolution, leads where
    // the host would create the deny root (red team A17B-1). Each existing entry is
    // watched for its replacement, the first missing one for its creation; what lies
    // beyond it cannot change before it is created.
    const std::vector<std::string> way = host.entries_on_the_way(d.path);
    // Only where the sandbox sees the host: below a read root, not in its private /tmp;
    // under either name, since the host creates the deny root where its way leads (a
    // dangling `/srv/keys -> /etc/keys` with only /etc readable, red team A10-2). A link on
    // the way can be re-pointed there during the run, so a way with one is watched too.
    auto seen = [&](const std::string& path) {
      bool readable = false;
      for (const auto& r : resolved.read) readable |= ir::path_within(r.path, path);
      return readable && !(resolved.private_tmp && ir::path_within("/tmp", path));
    };
    const bool through_link = std::any_of(way.begin(), way.end(), [&](const std::string& e) {
      const struct stat* st = host.lstat(e);
      return st && S_ISLNK(st->st_mode);
    });
    if (!seen(d.path) && (way.empty() || !seen(way.back())) && !through_link) continue;
    if (roots && std::find(roots->begin(), roots->end(), d.path) == roots->end())
      roots->push_back(d.path);
    if (host.stat(d.path)) {
      // Created since it was resolved: nothing masks it, and no watch would see it.
      appeared = d.path;
      return {};
    }
    for (const auto& entry : way) {
      const size_t slash = entry.rfind('/');
      const std::string parent = slash == 0 ? "/" : entry.substr(0, slash);
      const std::string name = entry.substr(slash + 1);
      if (host.lstat(entry)) {
        add({parent, name, d.path, false});
        continue;
      }
      // Below anything but a directory nothing can be created: replacing that entry,
      // watched already, is the only way on.
      const struct stat* above = host.lstat(parent);
      if (above && S_ISDIR(above->st_mode)) add({parent, name, d.path, true});
      break;
    }
  }
  return out;
}

std::vector<std::string> missing_deny_roots(const ir::Resolved& resolved) {
  std::string appeared;
  std::vector<std::string> roots;
  missing_deny_names(resolved, appeared, &roots);
  return roots;
}

HostNameWatch::~HostNameWatch() {
  if (fd_ >= 0) close(fd_);
}

bool HostNameWatch::start(std::vector<WatchedName> names, std::string& why) {
  if (names.empty()) return true;
  fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd_ < 0) {
    why = "cannot watch the protected names on the host: " + std::string(std::strerror(errno));
    return false;
  }
  for (auto& n : names) {
    // The directories are the verified bind sources and the names below them, which the
    // setup check finds to be no symlinks: one that became one is refused here.
    // Added to what the directory is watched for already: one directory may hold names of
    // both kinds.
    const int wd = inotify_add_watch(fd_, n.directory.c_str(),
                                     kEvents | (n.created ? IN_CREATE : 0u) | IN_MASK_ADD |
                                         IN_ONLYDIR | IN_DONT_FOLLOW);
    if (wd < 0) {
      why = "cannot watch " + n.directory + " for the protection of " + n.protects + ": " +
            std::strerror(errno);
      return false;
    }
    watches_.push_back({wd, std::move(n)});
  }
  // A name created between missing_deny_names() and its watch raised no event: look once
  // more, now that any later creation would. The deny root itself too: a symlink on its
  // way re-pointed in between leads elsewhere (red team A17B-2).
  for (const auto& w : watches_) {
    struct stat st;
    if (w.name.created && (lstat(join(w.name.directory, w.name.name).c_str(), &st) == 0 ||
                           stat(w.name.protects.c_str(), &st) == 0)) {
      why = "deny root '" + w.name.protects +
            "' was created on the host after the run was verified, and nothing would mask it; "
            "refusing to run what was not verified";
      return false;
    }
  }
  return true;
}

std::optional<std::string> HostNameWatch::replaced() {
  alignas(inotify_event) char buf[16 * 1024];
  for (;;) {
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      if (e->mask & IN_Q_OVERFLOW)
        return "a protected name (the kernel dropped the events that would tell which)" +
               std::string(kUndone);
      if (e->len == 0) continue;
      const std::string name = e->name;  // NUL-padded by the kernel
      for (const auto& w : watches_) {
        if (w.wd != e->wd || w.name.name != name) continue;
        const std::string path = join(w.name.directory, name);
        const std::string named =
            path == w.name.protects ? path : path + " (on the way to " + w.name.protects + ")";
        if (w.name.created && (e->mask & (IN_CREATE | IN_MOVED_TO)))
          return named + ", a deny root that did not exist when the run started, was created "
                         "on the host while the sandbox ran, where nothing masked it";
        if (!w.name.created && (e->mask & kEvents)) return named + kUndone;
      }
    }
  }
}

}  // namespace zpolicy::runner
