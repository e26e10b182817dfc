#pragma once

#include <sys/types.h>

#include <vector>

#include "compiler/resolve/mount_names.hpp"

namespace zpolicy::runner {

// The host's mount table, through one descriptor of /proc/self/mountinfo a run opens
// before it resolves anything. A descriptor of mountinfo keeps reading the namespace it was
// opened in, whatever namespace its holder enters later, and the kernel marks it
// (POLLPRI) when that namespace's mounts change. Resolution, the lints and the state
// directory checks judge the table read from it; when bwrap has set the sandbox up the run
// looks at it again:
// * the guard's private mount namespace (runner/private_mounts) copies the host's mounts
//   as they are at its unshare, and a mount raises no inotify event: a filesystem the host
//   mounts on a missing deny root's way between the run's last look at it and that unshare
//   is in the sandbox unseen (red team A9D-1, A10-3): any change since refuses such a run;
// * a bind the host makes after resolution gives an existing deny root or protected path a
//   name resolution never masked (A11-4), and a rename above a mount point moves it
//   without a mark (A13-2): when the guard's table (mount_table_of, below) differs from
//   the first one read here, it must give none, and the bound lints are judged on it.
class HostMountTable {
 public:
  HostMountTable();
  ~HostMountTable();
  HostMountTable(const HostMountTable&) = delete;
  HostMountTable& operator=(const HostMountTable&) = delete;

  // The table now: read again, from its start, when the kernel marked a change since the
  // last read (the last one read otherwise). Empty when it cannot be read.
  const std::vector<compiler::MountEntry>& now();
  // The first table now() returned: the one resolution judged, when the run resolved
  // through this table. Empty before.
  const std::vector<compiler::MountEntry>& first() const { return first_; }
  // A count of the kernel's marks seen so far: two values differ when something was
  // mounted or unmounted between the two calls, or when that cannot be told.
  unsigned long marks();

 private:
  int fd_ = -1;
  unsigned long marks_ = 0, read_at_ = 0;
  bool read_ = false;
  std::vector<compiler::MountEntry> table_, first_;
};

// The mount table of the namespace the process `pid` is in, as it shows it (its root's
// names). Read from the guard's (runner/sandbox_guard.hpp) once bwrap runs, it is the very
// table bwrap copied, since the guard's namespace propagates nothing: a bind the host made
// and removed again, or covered, before the host's table is read again is in it (red team
// A12B-1). Empty when it cannot be read.
std::vector<compiler::MountEntry> mount_table_of(pid_t pid);

}  // namespace zpolicy::runner
