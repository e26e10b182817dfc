#pragma once

#include <future>
#include <string>
#include <vector>

#include "compiler/resolve/mount_names.hpp"
#include "ir/resolved.hpp"
#include "runner/host_run_lock.hpp"
#include "runner/run_records.hpp"

namespace zpolicy::runner {

// Empty directories zpolicy creates on the host so that a protected or deny path that
// does not exist yet can be mounted read-only (and so cannot be created by the sandbox).
//
// Every placeholder is written to a run record in a private state directory before
// bwrap starts, and the record stays locked (flock) for the whole run. After the run a
// placeholder is removed only if it is still the empty directory zpolicy made and no
// other live run uses it: the run holds each open until then, so the same device and
// inode is that directory. A record whose lock nobody holds belongs to a run that died
// (even by SIGKILL): the next run reconciles it, by device, inode and birth time
// (runner/placeholder_removal.hpp). User data is never deleted: only empty directories
// with the recorded identity are removed.
class Placeholders {
 public:
  Placeholders() = default;
  Placeholders(const Placeholders&) = delete;
  Placeholders& operator=(const Placeholders&) = delete;
  ~Placeholders();

  // Reconciles dead runs, then creates the placeholders `r` needs (missing pins,
  // protected paths and deny paths inside writable roots) and marks them as existing
  // directories in `r`. Returns false with `error` set on any failure (fail closed).
  // `host_mounts` is the host's mount table, for the checks of the state directory's
  // other names (runner/state_dir_exposure.hpp).
  bool prepare(ir::Resolved& r, std::string& error,
               const std::vector<compiler::MountEntry>& host_mounts);

  // Whether this run's record has reached the disk (fsync; true without placeholders).
  // prepare() starts the fsync on a thread of its own, so that it overlaps bwrap's setup
  // instead of delaying its start (3-13 ms on a loaded disk, docs/benchmarks.md); the
  // runner waits for it before it releases the command, so that a machine crash while
  // the command runs finds every placeholder recorded. Called again, the same answer.
  bool records_durable();

  // Removes this run's placeholders (see above) and its record; removes nothing when
  // another run is live or the host run lock cannot be trusted (runner/host_run_lock).
  void cleanup();

  // Set by prepare() when this run will leave its placeholders whatever happens (no host
  // run lock it can trust); for the caller to tell the user.
  const std::string& note() const { return note_; }

  // This run's record while it lives (locked), or -1.
  int record_fd() const { return record_fd_; }

  // The descriptors this run holds on its placeholders until cleanup().
  std::vector<int> held() const;

  // The state directory used for run records (for tests and doctor).
  static std::string state_dir();

 private:
  struct Entry {
    RecordedPlaceholder placeholder;
    int held = -1;  // open from its creation (or first use) until cleanup()
  };
  std::string record_path_;
  int record_fd_ = -1;
  HostRunLock host_lock_;  // shared while this run lives
  std::string note_;
  std::vector<Entry> entries_;
  std::future<bool> synced_;  // the record's fsync, while it runs
  bool durable_ = true;
  // The state directory is this process's own (compiler/resolve/state_dir.hpp) and this
  // run counts among its users until cleanup().
  bool in_own_state_dir_ = false;
  void leave_state_dir();
};

}  // namespace zpolicy::runner
