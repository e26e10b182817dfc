#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zpolicy::compiler {

// One line of /proc/self/mountinfo: which directory of which filesystem shows where.
struct MountEntry {
  std::string device;  // "major:minor"
  std::string root;    // the directory of the filesystem the mount shows
  std::string point;   // where it shows
  bool read_only = false;
  std::string id, parent;  // the mount's id and its parent's
  // After " - ": the filesystem's type, the mount's source and the superblock's options.
  // An anonymous device number (tmpfs, procfs, sysfs, ...) is given again as soon as it is
  // free, so the device says which filesystem only together with these (red team A14-2).
  std::string fs_type, source, super_options;
  friend bool operator==(const MountEntry&, const MountEntry&) = default;
};

// Whether `a` and `b` show the same directory of the same filesystem: device, root, type,
// source and superblock options agree (their points, access and ids may differ).
bool same_mount(const MountEntry& a, const MountEntry& b);

// The mount table of this process's namespace, in mount order (escapes decoded); empty
// when it cannot be read. `text` is what /proc/self/mountinfo holds.
std::vector<MountEntry> parse_mountinfo(std::string_view text);
std::vector<MountEntry> read_mountinfo();

// Whether two tables show the same filesystems' directories at the same points with the
// same access, each mounted on the same: the tables of two mount namespaces, one a copy
// of the other, differ in their mount ids and order only, until a mount changes or a
// rename moves a point.
bool same_layout(const std::vector<MountEntry>& a, const std::vector<MountEntry>& b);

// The mount that shows the canonical `path` (the deepest mount point on its way that no
// later mount covers: one mounted at or above its point that is not its ancestor, red team
// A11B-4), and `path` within that mount's filesystem; `mount` is null
// when no mount shows it.
struct MountShowing {
  const MountEntry* mount = nullptr;
  std::string in_fs;
};
MountShowing mount_showing(const std::string& path, const std::vector<MountEntry>& mounts);

// The other names the directory `path` (canonical) has through the mounts: a bind mount
// gives one directory of a filesystem a name wherever it is mounted
// (`mount --bind /usr/local /srv/ul` makes `/srv/ul/bin` also `/usr/local/bin`). Sorted,
// without `path` itself.
std::vector<std::string> other_names(const std::string& path,
                                     const std::vector<MountEntry>& mounts);

// Where the mounts show `path` (canonical) or a part of it under another name, each with
// the name that part has at `path`: every name other_names gives `path` itself, and the
// mount point of each mount of the same filesystem whose root lies strictly below it
// (`mount --bind /w/.git/hooks /w/h` shows the part `/w/.git/hooks` of `/w/.git` at
// `/w/h`); and the other names of each mount below `path`, and of its parts, each with its
// mount point (`mount --bind /w/.git/hooks /w/h` where `/w/.git/hooks` is a mount of its
// own). Whether a name still shows that part (no later mount covers it) is the caller's
// to check.
struct MountAlias {
  std::string name;      // where the mounts show it
  std::string original;  // what it is at `path`
};
std::vector<MountAlias> mount_aliases(const std::string& path,
                                      const std::vector<MountEntry>& mounts);

// The mounts strictly below `path` that are not read-only (a writable bind of `path` binds
// them too, recursively): for each, where it shows and every name its root has.
struct MountBelow {
  std::string point;
  std::vector<std::string> names;  // point and its other names
};
std::vector<MountBelow> writable_mounts_below(const std::string& path,
                                              const std::vector<MountEntry>& mounts);

}  // namespace zpolicy::compiler
