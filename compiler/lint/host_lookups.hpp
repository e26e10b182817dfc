#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/resolve/mount_names.hpp"

namespace zpolicy::compiler {

// One lint pass's view of the host: each path is looked at once (lstat, readlink),
// however many lints ask about it. The lints judge one snapshot of the host; a run then
// binds what it verified by descriptor and checks the sandbox before its command starts
// (docs/run.md), so looking at a path twice would only make two snapshots disagree.
// The ZP003 lint alone asks about some sixty paths below $HOME for every writable root.
class HostLookups {
 public:
  // `mounts`: the mount table the caller read (HostFacts::mounts), or none to read it here.
  explicit HostLookups(const std::vector<MountEntry>* mounts = nullptr) : given_(mounts) {}
  // lstat(2) of `path` as spelled, or none when it does not exist.
  const struct stat* lstat(const std::string& path);
  // The target of the symlink `path`, or none.
  std::optional<std::string> readlink(const std::string& path);
  // realpath(3): every symlink resolved, every component existing; none otherwise.
  std::optional<std::string> realpath(const std::string& path);
  // Every directory entry the kernel looks up to open `path` (absolute), each named under
  // its resolved parent, symlinks on the way included and followed; missing entries too
  // (whoever can create one decides what `path` opens once it exists).
  std::vector<std::string> entries_on_the_way(const std::string& path);
  // stat(2): the object `path` ends at, symlinks followed.
  const struct stat* stat(const std::string& path);
  // This namespace's mount table: the one given, or /proc/self/mountinfo read once.
  const std::vector<MountEntry>& mounts();
  // The writable mounts strictly below the directory `path` (writable_mounts_below of its
  // real path), found once per path: a lint asks for each of sixty paths below $HOME.
  const std::vector<MountBelow>& writable_mounts_below(const std::string& path);

 private:
  // The kernel's walk of an absolute path: ".." applies to what is resolved so far, a
  // symlink's target is walked in its place, and after 40 links it gives up (ELOOP).
  // Each entry looked up goes to `entries` when given. The resolved path; none when
  // `existing` and a component is missing, not a directory, or one link too many.
  std::optional<std::string> walk(const std::string& path, bool existing,
                                  std::vector<std::string>* entries);

  std::unordered_map<std::string, std::optional<struct stat>> lstat_;
  std::unordered_map<std::string, std::optional<std::string>> link_, real_;
  const std::vector<MountEntry>* given_;
  std::optional<std::vector<MountEntry>> mounts_;
  std::unordered_map<std::string, std::vector<MountBelow>> below_;
};

}  // namespace zpolicy::compiler
