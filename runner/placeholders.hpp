#pragma once

#include <string>
#include <vector>

#include "ir/resolved.hpp"

namespace zpolicy::runner {

// Empty directories zpolicy creates on the host so that a protected or deny path that
// does not exist yet can be mounted read-only (and so cannot be created by the sandbox).
//
// Every placeholder is written to a run record in a private state directory before
// bwrap starts, and the record stays locked (flock) for the whole run. After the run a
// placeholder is removed only if it is still the empty directory zpolicy made (same
// device and inode) and no other live run uses it. A record whose lock nobody holds
// belongs to a run that died (even by SIGKILL): the next run reconciles it. User data
// is never deleted: only empty directories with the recorded identity are removed.
class Placeholders {
 public:
  Placeholders() = default;
  Placeholders(const Placeholders&) = delete;
  Placeholders& operator=(const Placeholders&) = delete;
  ~Placeholders();

  // Reconciles dead runs, then creates the placeholders `r` needs (missing pins,
  // protected paths and deny paths inside writable roots) and marks them as existing
  // directories in `r`. Returns false with `error` set on any failure (fail closed).
  bool prepare(ir::Resolved& r, std::string& error);

  // Removes this run's placeholders (see above) and its record.
  void cleanup();

  // The state directory used for run records (for tests and doctor).
  static std::string state_dir();

 private:
  struct Entry {
    std::string path;
    unsigned long long dev = 0, ino = 0;
  };
  std::string record_path_;
  int record_fd_ = -1;
  int host_lock_ = -1;  // shared while this run lives (kHostRunLock)
  std::vector<Entry> entries_;
};

// The host-wide run lock taken exclusively, which succeeds only while no run of any user
// is live on this host (every run holds it shared for its life): its descriptor, which
// keeps every run from starting until it is closed, or -1.
int lock_quiet_host();

}  // namespace zpolicy::runner
