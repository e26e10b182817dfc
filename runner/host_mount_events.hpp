#pragma once

namespace zpolicy::runner {

// Whether the host's mount table changed since a moment of the run. The guard's private
// mount namespace (runner/private_mounts) copies the host's mounts as they are at its
// unshare, and a mount raises no inotify event: a filesystem the host mounts between the
// run's last look at a missing deny root's way and that unshare is in the sandbox unseen.
// Holding the deny root already, the setup check finds it (red team A9D-1); mounted empty
// over a watched directory, it hides that directory from the watch, and what the host
// creates in it later reaches the sandbox (A10-3). So the run looks at the host's mount
// table from before its last look to after the guard's unshare: any change refuses.
class HostMountEvents {
 public:
  // Starts looking (the calling process's mount namespace, /proc/self/mountinfo).
  HostMountEvents();
  ~HostMountEvents();
  HostMountEvents(const HostMountEvents&) = delete;
  HostMountEvents& operator=(const HostMountEvents&) = delete;

  // True when something was mounted or unmounted since, or when that cannot be told.
  bool changed() const;

 private:
  int fd_ = -1;
};

}  // namespace zpolicy::runner
