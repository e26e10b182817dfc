#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/diagnostic.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// A protected regular file can share its inode with a name inside a writable root that
// existed before the run (`git clone` of a local path hard-links objects; `cp -al`; a
// user's `ln`). A read-only bind of the protected name does not protect the inode: the
// other name stays writable. This adds every such other name to `r.protect`, so it is
// bound read-only (and, as a mount point, cannot be renamed or unlinked either).
//
// Cost: one walk of the writable roots, skipping protected and denied subtrees, with an
// lstat of each entry but directories and symlinks; the protected subtrees are walked only
// when that finds a regular file with more than one link. More than kMaxHardLinkAliases
// such names refuse the run (a located error) rather than bind thousands of mounts.
//
// The same walk finds the privileged files of the writable roots (`privileged_file`) and
// protects each one the sandbox could write: the kernel strips S_ISUID, S_ISGID and
// `security.capability` on write(2) and truncate, but not on a write through a shared
// writable mapping, so a sandbox could rewrite a setuid-root binary of a chroot or an
// extracted image (a root caller) or a binary the user gave a file capability, and keep
// its privilege on the host (red team R18-1). More than kMaxPrivilegedFiles refuse.
//
// And it protects the special files of the writable roots (docs/protected-paths.md
// "Device nodes, sockets and FIFOs anywhere in a writable root", red team R17-5): every
// character or block device, socket and FIFO, and every directory there the walk could
// not look into but the sandbox could search or open up (which could hide one; another
// user's 0711 too, dev18-A1), is added to `r.protect` too, so it is bound read-only:
// chmod, chown, utimes, ACLs and other xattrs meet EROFS. Such a node is the workspace's
// inode, but what it opens is the host's device or a host process's endpoint; a sandbox
// started by root owns a node root made and, with its mode, would open it to every local
// user. More than kMaxSpecialFiles of them in all refuse the run (a located error at the
// writable root's line).
//
// `outside`: the paths protected outside every writable root (resolution's protected_outside),
// whose other names in a writable root are protected as those of `r.protect` are.
//
// Not covered: links and nodes the host makes during the run, and names outside every
// writable root (they are read-only inside the sandbox anyway).
void protect_hard_links_and_special_files(ir::Resolved& r,
                                          const std::vector<ir::ResolvedPath>& outside,
                                          ir::Diagnostics& diags);

inline constexpr size_t kMaxHardLinkAliases = 256;
inline constexpr size_t kMaxSpecialFiles = 256;
inline constexpr size_t kMaxPrivilegedFiles = 256;

// Whether executing the regular file `path` (whose lstat is `st`) grants a privilege and
// the sandbox's uid (`euid`, this process's) could change its content or its mode:
// set-user-id or set-group-id, or executable with a file capability, and owned by `euid`
// or writable by its group or others. A file capability is read only on an executable file:
// the one call per file it would take on every file (a workspace's sources) doubles the
// walk's cost; a non-executable file given a capability is a documented limit
// (docs/seccomp.md "Setuid and setgid bits").
bool privileged_file(const std::string& path, const struct stat& st, uid_t euid);

// The regular files with other hard links below `root` (never following a symlink, never
// entering a path in `skip`, opening nothing but directories), by inode, and the first
// directory there the walk could not look into that the sandbox could open up: the
// caller's own (mode 0111 or 0644, which the sandbox may chmod back) or one it can write
// into (red team H17-7). Also the lints' reading of "a start-up file's other name lies in
// this root" (ZP003, H17-2).
// With `find_privileged`, also the privileged files there (`privileged_file`).
// A walk that failed for another reason than permissions or a name that vanished (EMFILE,
// ENOMEM, EIO, a listing that fails part way) stops there and says where (`failed`): what
// it did not look at may be any of these, and the caller refuses.
struct WalkFailure {
  std::string path;
  int error = 0;
};
struct LinkedFiles {
  std::map<std::pair<dev_t, ino_t>, std::vector<std::string>> names;
  std::optional<std::string> hidden;
  // Every such directory, and every one the walk cannot list that the sandbox can search
  // (another user's 0711), as the one to close: the directory itself, or, when it could
  // not even be looked up, the one holding it that is listed but not searchable.
  std::set<std::string> closed;
  // Character and block devices, sockets and FIFOs, in the order met.
  std::vector<std::string> special;
  // Of them, those with other hard links, by inode: one may be a denied node's other name.
  std::map<std::pair<dev_t, ino_t>, std::vector<std::string>> special_names;
  // With `find_privileged`: the files privileged_file() names.
  std::vector<std::string> privileged;
  std::optional<WalkFailure> failed;
};
LinkedFiles linked_files_below(const std::string& root, const std::set<std::string>& skip = {},
                               bool find_privileged = false);

}  // namespace zpolicy::compiler
