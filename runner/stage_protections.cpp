#include "runner/stage_protections.hpp"

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

}  // namespace zpolicy::runner
