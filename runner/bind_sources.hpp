#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/run_plan.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::runner {

// The descriptors a run hands bwrap for its `--bind-fd` / `--ro-bind-fd` binds
// (docs/run.md "Binding by descriptor"). Each source of the verified bwrap.fds is opened
// O_PATH without following any symlink, and must be the very object the verified policy
// names: the identity (st_dev, st_ino) resolution recorded, or the placeholder the runner
// created; /dev/null must be the null device. Once open, a descriptor keeps naming that
// object whatever happens to the path; bwrap mounts it from where the guard's child pinned
// it (runner/bind_stage.hpp), since bwrap itself would resolve it to its path again.
class BindSources {
 public:
  BindSources() = default;
  BindSources(const BindSources&) = delete;
  BindSources& operator=(const BindSources&) = delete;
  ~BindSources();

  // Opens and checks every source; false with `error` set on the first that is missing,
  // reached through a symlink, or another object than `verified` names (fail closed).
  bool open(const std::vector<compiler::BindSource>& sources, const ir::Resolved& verified,
            std::string& error);

  // (descriptor here, descriptor number in bwrap), for SpawnSpec::fds.
  const std::vector<std::pair<int, int>>& fds() const { return fds_; }

 private:
  std::vector<std::pair<int, int>> fds_;
};

}  // namespace zpolicy::runner
