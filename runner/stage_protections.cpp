#include "runner/stage_protections.hpp"

#include <sys/stat.h>

#include "ir/path.hpp"

namespace zpolicy::runner {

std::vector<StagedProtection> stage_protections(const std::vector<WritableBind>& writable,
                                                const ir::Resolved& live) {
  std::vector<StagedProtection> out;
  for (const WritableBind& w : writable)
    for (const auto* paths : {&live.protect, &live.deny})
      for (const ir::ResolvedPath& p : *paths) {
        if (!p.identity || p.path == w.path || !ir::path_within(w.path, p.path)) continue;
        const size_t skip = w.path == "/" ? 1 : w.path.size() + 1;
        out.push_back({w.fd, p.path.substr(skip), p.path, p.identity->dev, p.identity->ino});
      }
  return out;
}

namespace {

bool device_filesystem(const compiler::MountEntry& m) {
  return m.fs_type == "devpts" || m.fs_type == "devtmpfs";
}

}  // namespace

std::vector<StagedProtection> stage_device_mounts(const std::vector<WritableBind>& writable,
                                                  const std::vector<compiler::MountEntry>& mounts) {
  std::vector<StagedProtection> out;
  for (const WritableBind& w : writable)
    for (size_t i = 0; i < mounts.size(); ++i) {
      const compiler::MountEntry& m = mounts[i];
      if (!device_filesystem(m) || m.point == w.path || !ir::path_within(w.path, m.point)) continue;
      bool covered = false;
      for (size_t j = i + 1; j < mounts.size() && !covered; ++j)
        covered = mounts[j].point == m.point;
      struct stat st;
      if (covered || lstat(m.point.c_str(), &st) != 0) continue;
      const size_t skip = w.path == "/" ? 1 : w.path.size() + 1;
      out.push_back({w.fd, m.point.substr(skip), m.point, static_cast<std::uint64_t>(st.st_dev),
                     static_cast<std::uint64_t>(st.st_ino)});
    }
  return out;
}

std::optional<std::string> on_device_filesystem(const WritableBind& writable,
                                                const std::vector<compiler::MountEntry>& mounts) {
  // The last mount whose point is the longest at or above the root: the one it lies on.
  const compiler::MountEntry* holder = nullptr;
  for (const compiler::MountEntry& m : mounts)
    if (ir::path_within(m.point, writable.path) &&
        (!holder || m.point.size() >= holder->point.size()))
      holder = &m;
  if (holder && device_filesystem(*holder)) return holder->fs_type;
  return std::nullopt;
}

}  // namespace zpolicy::runner
