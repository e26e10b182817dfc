#include "runner/status_file_location.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <vector>

#include "compiler/lint/host_lookups.hpp"
#include "ir/path.hpp"

namespace zpolicy::runner {
namespace {

using compiler::MountEntry;

// Every directory the kernel looks a name up in to open the absolute `path`, as it walks
// it (".." applies to what is resolved so far, a symlink's target is walked in its place).
// A symlink on the way lives in its own directory, which may lie in a writable root
// although the file does not: the command could point it elsewhere, and a caller reading
// the status by its name would read that (red team R7-S1).
std::vector<std::string> directories_on_the_way(compiler::HostLookups& host,
                                                const std::string& path) {
  std::vector<std::string> out;
  for (const auto& entry : host.entries_on_the_way(path)) {
    const std::string dir = entry.substr(0, std::max<size_t>(entry.rfind('/'), 1));
    if (std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(dir);
  }
  return out;
}

// A writable bind of the plan: its host source, the identity resolution recorded for it,
// and where the sandbox sees it.
struct PlannedWritableBind {
  std::string source;
  std::optional<ir::HostIdentity> identity;
  std::string inside;
};

std::vector<PlannedWritableBind> writable_binds(const compiler::RunPlan& plan) {
  std::vector<PlannedWritableBind> out;
  if (!plan.verified) return out;
  for (const auto& e : plan.expected_setup) {
    if (e.kind != compiler::ExpectedObject::Kind::Bind || e.read_only || !e.source_fd) continue;
    for (const auto& bind : plan.bind_sources)
      if (bind.fd == *e.source_fd)
        out.push_back({bind.path, compiler::recorded_identity(*plan.verified, bind.path), e.dest});
  }
  return out;
}

// The writable bind (its path inside the sandbox) through which the command reaches the
// canonical directory `real`, or empty.
std::string writable_root_showing(compiler::HostLookups& host,
                                  const std::vector<PlannedWritableBind>& writable,
                                  const std::string& real) {
  for (std::string cur = real;; cur = cur.substr(0, std::max<size_t>(cur.rfind('/'), 1))) {
    struct stat st {};
    if (stat(cur.c_str(), &st) == 0)
      for (const auto& w : writable)
        if (w.identity && w.identity->dev == st.st_dev && w.identity->ino == st.st_ino)
          return w.inside;
    if (cur == "/") break;
  }
  const auto& table = host.mounts();
  const auto [home, in_fs] = compiler::mount_showing(real, table);
  if (!home) return "";
  for (const auto& [bind_path, identity, inside] : writable) {
    const auto source = host.realpath(bind_path);
    if (!source) continue;
    // The bind's own region of its filesystem, and every mount below it.
    const auto [bind_mount, bind_in_fs] = compiler::mount_showing(*source, table);
    if (bind_mount && bind_mount->device == home->device && ir::path_within(bind_in_fs, in_fs))
      return inside;
    for (const MountEntry& m : table)
      if (m.point != *source && ir::path_within(*source, m.point) && m.device == home->device &&
          ir::path_within(m.root, in_fs))
        return inside;
  }
  return "";
}

}  // namespace

std::string writable_root_holding(const compiler::RunPlan& plan, const std::string& path) {
  const auto writable = writable_binds(plan);
  std::string absolute = path;
  if (!path.starts_with("/")) {
    std::error_code ec;
    const auto cwd = std::filesystem::current_path(ec);
    // Unnamed, the directory cannot be checked: refuse rather than trust it.
    if (ec) return "the working directory, which cannot be named (" + ec.message() + ")";
    absolute = cwd.string() + "/" + path;
  }
  compiler::HostLookups host;
  // A name of PATH_MAX bytes or more is no name to the lookups, which then see nothing
  // there, while the kernel still opens the relative name: through a symlink in a deep
  // working directory, it reached the workspace unchecked (red team A17B-3).
  for (const auto& entry : host.entries_on_the_way(absolute))
    if (entry.size() >= PATH_MAX)
      return "a directory on the way, whose name from / is too long to check (" +
             std::to_string(entry.size()) + " bytes)";
  // A directory that does not resolve (missing, too many links) holds nothing yet: the
  // status file cannot be opened there either, which refuses the run.
  for (const auto& dir : directories_on_the_way(host, absolute)) {
    const auto real = host.realpath(dir);
    if (!real) continue;
    if (auto inside = writable_root_showing(host, writable, *real); !inside.empty()) return inside;
  }
  return "";
}

}  // namespace zpolicy::runner
