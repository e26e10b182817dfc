#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve/mount_names.hpp"

namespace zpolicy::compiler {

// What a mount point at or below a writable root shows, by identity: the mount table names
// a mount by (point, device, root), and two binds of two directories are the same triple
// when the second was made at the first's name (`mv src old; mkdir src; mount --bind src
// ws/b`, red team A13D-2), as are two tmpfs mounts when the second gets the first's
// device number again. So the object itself: its device and inode, its filesystem's type
// and id (statfs: a tmpfs gets a new random id per mount), and whether the mount is
// read-only (a read-write bind stacked on a read-only one of the same directory).
struct MountObject {
  std::string point;
  bool found = false;  // false when the point could not be looked up (then nothing else)
  std::uint64_t dev = 0, ino = 0;
  std::uint64_t fs_type = 0, fs_id = 0;
  bool read_only = false;
  friend bool operator==(const MountObject&, const MountObject&) = default;
};

// The mount points of `table` at or below one of `roots` (canonical), sorted, each once:
// what a writable bind of a root takes into the sandbox besides the root's own directory.
std::vector<std::string> mount_points_within(const std::vector<std::string>& roots,
                                             const std::vector<MountEntry>& table);

// The first point (in `judged`'s order, then `now`'s) whose object differs between what
// resolution judged and what the sandbox got, including a point only one of them lists
// (a mount made, or removed, since), or one that could not be looked up on either side,
// as "'POINT' (why)"; none when they are the same.
// Both sorted by point (as mount_points_within gives them).
std::optional<std::string> first_mount_changed(const std::vector<MountObject>& judged,
                                               const std::vector<MountObject>& now);

}  // namespace zpolicy::compiler
