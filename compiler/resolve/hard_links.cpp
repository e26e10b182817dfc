#include "compiler/resolve/hard_links.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace zpolicy::compiler {
namespace {

using Inode = std::pair<dev_t, ino_t>;

bool special_file(mode_t mode) {
  return S_ISCHR(mode) || S_ISBLK(mode) || S_ISSOCK(mode) || S_ISFIFO(mode);
}

// Calls `file(path, st)` for every non-directory below `top` (and for `top` itself when
// it is not a directory), never following a symlink and never entering a path in `skip`,
// until `file` returns false. Iterative: the workspace decides the depth, not the stack.
// A directory that cannot be opened for its permissions (EACCES; `top` too where it cannot
// even be looked at) is handed to `unlistable`, which says whether to go on. What vanished
// since it was listed (ENOENT), or became no directory (ENOTDIR, ELOOP: the walk follows no
// link), is passed by. Any other failure (EMFILE, ENOMEM, EIO, a listing that fails part
// way) ends the walk and is returned: what it hides cannot be checked, and the caller
// refuses.
std::optional<WalkFailure> walk(
    const std::string& top, const std::set<std::string>& skip,
    const std::function<bool(const std::string&, const struct stat&)>& file,
    const std::function<bool(const std::string&)>& unlistable) {
  struct stat st;
  if (lstat(top.c_str(), &st) != 0) {
    const int error = errno;
    if (error == EACCES) unlistable(top);
    if (error == ENOENT || error == ENOTDIR || error == EACCES) return std::nullopt;
    return WalkFailure{top, error};
  }
  if (!S_ISDIR(st.st_mode)) {
    file(top, st);
    return std::nullopt;
  }
  bool more = true;
  std::vector<std::string> pending{top};
  while (more && !pending.empty()) {
    const std::string dir = std::move(pending.back());
    pending.pop_back();
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      if (error == EACCES)
        more = unlistable(dir);
      else if (error != ENOENT && error != ENOTDIR && error != ELOOP)
        return WalkFailure{dir, error};
      continue;
    }
    DIR* d = fdopendir(fd);
    if (!d) {
      const int error = errno;
      close(fd);
      return WalkFailure{dir, error};
    }
    const std::string prefix = dir == "/" ? "" : dir;
    while (more) {
      errno = 0;
      const dirent* e = readdir(d);
      if (!e) {
        if (errno == 0) break;
        const int error = errno;
        closedir(d);
        return WalkFailure{dir, error};
      }
      const std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string path = prefix + "/" + e->d_name;
      if (skip.count(path)) continue;
      if (e->d_type == DT_DIR) {
        pending.push_back(std::move(path));
        continue;
      }
      // Never followed. Special files are looked at too (they are protected), never opened.
      if (e->d_type == DT_LNK) continue;
      if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        const int error = errno;
        // Listed but not searchable (mode 0644): what it holds cannot be looked at.
        if (error == EACCES)
          more = unlistable(dir);
        else if (error != ENOENT) {
          closedir(d);
          return WalkFailure{path, error};
        }
        continue;
      }
      if (S_ISDIR(st.st_mode))
        pending.push_back(std::move(path));
      else
        more = file(path, st);
    }
    closedir(d);
  }
  return std::nullopt;
}

}  // namespace

bool privileged_file(const std::string& path, const struct stat& st, uid_t euid) {
  if (!S_ISREG(st.st_mode)) return false;
  if (st.st_uid != euid && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0) return false;
  if (st.st_mode & (S_ISUID | S_ISGID)) return true;
  if ((st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0) return false;
  // Any answer but "no such attribute" counts (an unreadable one fails closed).
  return lgetxattr(path.c_str(), "security.capability", nullptr, 0) >= 0 ||
         (errno != ENODATA && errno != ENOTSUP);
}

LinkedFiles linked_files_below(const std::string& root, const std::set<std::string>& skip,
                               bool find_privileged) {
  LinkedFiles out;
  const uid_t euid = geteuid();
  out.failed = walk(
      root, skip,
      [&](const std::string& path, const struct stat& st) {
        if (S_ISREG(st.st_mode) && st.st_nlink > 1)
          out.names[{st.st_dev, st.st_ino}].push_back(path);
        else if (special_file(st.st_mode)) {
          out.special.push_back(path);
          if (st.st_nlink > 1) out.special_names[{st.st_dev, st.st_ino}].push_back(path);
        }
        if (find_privileged && privileged_file(path, st, euid)) out.privileged.push_back(path);
        return true;
      },
      [&](const std::string& dir) {
        // `dir` could not be listed (0111), or could not be looked at since the directory
        // holding it is listed but not searchable (0644): that one is the one to close.
        // One the sandbox can search but not list (another user's 0711) is closed too:
        // what it holds is reached by name, and a node the caller owns there changed.
        struct stat d;
        const std::string parent = dir.substr(0, std::max<size_t>(dir.rfind('/'), 1));
        std::optional<std::string> closed;
        bool hides = false;  // the sandbox could write into it, or open it up
        if (access(dir.c_str(), W_OK | X_OK) == 0) {
          closed = dir;
          hides = true;
        } else if (lstat(dir.c_str(), &d) == 0) {
          hides = d.st_uid == geteuid();
          if (hides || access(dir.c_str(), X_OK) == 0) closed = dir;
        } else if (errno == EACCES && lstat(parent.c_str(), &d) == 0 && d.st_uid == geteuid()) {
          hides = true;
          // Only when that is why: a FUSE mount of another user's refuses its own lookup
          // in a searchable directory, and the sandbox cannot reach into it either.
          if (access(parent.c_str(), X_OK) != 0) closed = parent;
        }
        if (hides && !out.hidden) out.hidden = dir;
        if (closed) out.closed.insert(*closed);
        return true;
      });
  return out;
}

namespace {

// Special files and closed directories (LinkedFiles), each with the writable root that
// holds it, become protected paths: bound read-only like any protected path.
void protect_special_files(
    ir::Resolved& r, const std::vector<std::pair<const ir::ResolvedPath*, LinkedFiles>>& walked,
    ir::Diagnostics& diags) {
  std::set<std::string> denied;  // a denied node's other names (deny_shared_names)
  for (const auto& d : r.deny) denied.insert(d.path);
  std::vector<ir::ResolvedPath> found;
  for (const auto& [root, files] : walked) {
    for (const auto& path : files.special)
      if (!denied.count(path)) found.push_back({path, ir::HostKind::File, root->loc});
    for (const auto& dir : files.closed) found.push_back({dir, ir::HostKind::Directory, root->loc});
  }
  if (found.size() > kMaxSpecialFiles) {
    diags.error(found.front().loc,
                "more than " + std::to_string(kMaxSpecialFiles) +
                    " device nodes, sockets, FIFOs and directories zpolicy cannot list lie in "
                    "writable roots (e.g. '" +
                    found.front().path +
                    "'); each would be bound read-only, so that the sandbox cannot chmod or "
                    "chown them; refusing to run (move them out of the writable root, e.g. a "
                    "chroot's dev/ or a directory of sockets)");
    return;
  }
  r.protect.insert(r.protect.end(), std::make_move_iterator(found.begin()),
                   std::make_move_iterator(found.end()));
}

// A walk below `tree` (a writable root, or a protected tree searched for the other names
// of its files) that failed for another reason than permissions: refused, since what it
// did not look at may be another name of a protected file, a device node or a privileged
// program.
void refuse_failed_walk(const WalkFailure& failed, const ir::ResolvedPath& tree,
                        ir::Diagnostics& diags) {
  diags.error(tree.loc, "cannot look into '" + failed.path + "' below '" + tree.path + "' (" +
                            std::strerror(failed.error) +
                            "): whether what it holds is another name of a protected file, "
                            "a device node or a privileged program cannot be checked; "
                            "refusing to run");
}

// The protected trees searched for other names of their files: those of the writable
// roots, and those protected outside every writable root (a repository above's `.git`
// file, git directory, config files and hooks; a policy's absolute path), whose other names in a
// writable root are as much a way to them: with the repository above's `.git/hooks/pre-commit`
// hard-linked at `app/scripts/pre-commit`, the command rewrote the script and the host's next `git
// commit` ran it (red team A24-7). Not one that holds a writable root: the roots are
// walked already, and what lies around them is not protected.
std::vector<const ir::ResolvedPath*> searched_trees(const ir::Resolved& r,
                                                    const std::vector<ir::ResolvedPath>& outside) {
  std::vector<const ir::ResolvedPath*> trees;
  for (const auto& p : r.protect) trees.push_back(&p);
  for (const auto& p : outside)
    if (p.kind != ir::HostKind::Missing &&
        std::none_of(r.write.begin(), r.write.end(),
                     [&](const ir::ResolvedPath& w) { return ir::path_within(p.path, w.path); }))
      trees.push_back(&p);
  return trees;
}

// Whether the directory `hidden` (in a writable root, which the walk could not list) may be
// passed by: false, refused, when a protected file in `trees` has other names, one of which
// could be hidden there.
bool hidden_directory_harmless(const std::string& hidden,
                               const std::vector<const ir::ResolvedPath*>& trees,
                               ir::Diagnostics& diags) {
  // Only a protected file with other names can have one hidden there.
  const ir::ResolvedPath* shared = nullptr;
  for (const auto* p : trees)
    if (!shared) {
      const auto failed = walk(
          p->path, {},
          [&](const std::string&, const struct stat& st) {
            if (S_ISREG(st.st_mode) && st.st_nlink > 1) shared = p;
            return !shared;
          },
          [](const std::string&) { return true; });
      if (failed) {
        refuse_failed_walk(*failed, *p, diags);
        return false;
      }
    }
  if (shared) {
    diags.error(shared->loc,
                "cannot list '" + hidden +
                    "', which the sandbox could write into, and files under protected path '" +
                    shared->path +
                    "' have other hard links: one hidden there cannot be checked; refusing "
                    "to run (make it readable, or move it out of the writable root)");
    return false;
  }
  return true;
}

// The names in writable roots (`linked`, by inode) that a file of a protected tree shares,
// each protected as a file of its own; privileged names are bound already. False when it
// refused the run.
// `in_writable`: filled with the regular files with other links that the walk meets in the
// protected trees lying in writable roots, by inode (deny_shared_names looks for denied files
// there too).
bool protect_shared_names(ir::Resolved& r, const std::vector<const ir::ResolvedPath*>& trees,
                          const std::map<Inode, std::vector<std::string>>& linked,
                          const std::map<std::string, ir::SourceLoc>& privileged,
                          std::map<Inode, std::vector<std::string>>& in_writable,
                          ir::Diagnostics& diags) {
  // Protected paths are walked whole (a nested protected path is walked with its parent;
  // the set below removes duplicates).
  std::map<std::string, const ir::ResolvedPath*> aliases;  // writable name -> its rule
  // Past the limit the run is refused, so the walk stops there.
  // A protected directory the walk cannot list may hold what a writable name shares.
  std::optional<std::pair<std::string, const ir::ResolvedPath*>> unlisted;
  for (const auto* p : trees) {
    const bool writable = std::any_of(r.write.begin(), r.write.end(), [&](const auto& w) {
      return ir::path_within(w.path, p->path);
    });
    const auto failed = walk(
        p->path, {},
        [&](const std::string& path, const struct stat& st) {
          if (writable && S_ISREG(st.st_mode) && st.st_nlink > 1)
            in_writable[{st.st_dev, st.st_ino}].push_back(path);
          auto it = linked.find({st.st_dev, st.st_ino});
          // A privileged name is bound already: counted here, it refused a run for
          // mounts it does not need (red team A18-5).
          if (it != linked.end())
            for (const auto& name : it->second)
              if (!privileged.count(name)) aliases.emplace(name, p);
          return aliases.size() <= kMaxHardLinkAliases;
        },
        [&](const std::string& dir) {
          unlisted = {dir, p};
          return false;
        });
    if (failed) {
      refuse_failed_walk(*failed, *p, diags);
      return false;
    }
  }
  if (unlisted) {
    diags.error(unlisted->second->loc,
                "cannot list '" + unlisted->first + "' below protected path '" +
                    unlisted->second->path +
                    "', and files in writable roots have other hard "
                    "links: whether one is a name of a protected file cannot be checked; "
                    "refusing to run");
    return false;
  }
  if (aliases.size() > kMaxHardLinkAliases) {
    const auto& [name, rule] = *aliases.begin();
    diags.error(rule->loc,
                "more than " + std::to_string(kMaxHardLinkAliases) +
                    " names inside writable roots share their inode with protected "
                    "files (e.g. '" +
                    name + "' and a file under '" + rule->path +
                    "'); no more are bound read-only; refusing to run (copy them apart, e.g. "
                    "`git repack -a -d` or `cp --remove-destination`)");
    return false;
  }
  // Gathered apart first: each rule points into r.protect, which a push_back may move
  // (reading a moved rule's location crashed the next run, red team A18-2).
  std::vector<ir::ResolvedPath> found;
  for (const auto& [name, rule] : aliases) found.push_back({name, ir::HostKind::File, rule->loc});
  r.protect.insert(r.protect.end(), std::make_move_iterator(found.begin()),
                   std::make_move_iterator(found.end()));
  return true;
}

// The names in writable roots (`linked`, by inode) that a file of a deny root shares, each
// denied as a file of its own (masked as a denied file is): the deny root hides a name, not
// the inode, and through its other name the command read and rewrote it (red team A29C-3:
// `deny: ["${WORKSPACE}/secrets"]` with the host's `ln secrets/key docs-key`, or E4c's
// `~/.aws/credentials` linked into the workspace). Every deny root that exists is walked,
// the writable roots skipped (their names are the ones matched); a directory in it the caller
// cannot list is passed by, as the caller reaches nothing there by that name either. A name
// at a protected path (`.env` linked to a denied key: read-only, but readable) is denied
// instead of protected. `closed`: a directory of a writable root the walk could not list
// but the sandbox can search (another user's 0711, dev18-A1), which is bound read-only but
// whose files the sandbox reads by name: with a denied file that has other links, one may lie
// there, and the run is refused. False when it refused the run.
bool deny_shared_names(ir::Resolved& r, const std::map<Inode, std::vector<std::string>>& linked,
                       const std::optional<std::string>& closed, ir::Diagnostics& diags) {
  std::set<std::string> writable;
  for (const auto& w : r.write) writable.insert(w.path);
  std::map<std::string, ir::SourceLoc> aliases;  // writable name -> the deny root's rule
  for (const auto& d : r.deny) {
    if (d.kind == ir::HostKind::Missing) continue;
    bool shared = false;
    const auto failed = walk(
        d.path, writable,
        [&](const std::string&, const struct stat& st) {
          shared |= closed && (S_ISREG(st.st_mode) || special_file(st.st_mode)) && st.st_nlink > 1;
          if (const auto it = linked.find({st.st_dev, st.st_ino}); it != linked.end())
            for (const auto& name : it->second) aliases.emplace(name, d.loc);
          return !shared && aliases.size() <= kMaxHardLinkAliases;
        },
        [](const std::string&) { return true; });
    if (failed) {
      refuse_failed_walk(*failed, d, diags);
      return false;
    }
    if (shared) {
      diags.error(d.loc, "cannot list '" + *closed +
                             "', which the sandbox can search, and files under deny root '" +
                             d.path +
                             "' have other hard links: one there would be read by its name; "
                             "refusing to run (make it listable, or move it out of the "
                             "writable root)");
      return false;
    }
  }
  if (aliases.size() > kMaxHardLinkAliases) {
    const auto& [name, loc] = *aliases.begin();
    diags.error(loc, "more than " + std::to_string(kMaxHardLinkAliases) +
                         " names inside writable roots share their inode with denied files "
                         "(e.g. '" +
                         name +
                         "'); no more are masked; refusing to run (remove those links, or "
                         "copy the files apart)");
    return false;
  }
  std::erase_if(r.protect, [&](const ir::ResolvedPath& p) { return aliases.count(p.path) > 0; });
  for (const auto& [name, loc] : aliases) r.deny.push_back({name, ir::HostKind::File, loc});
  return true;
}

// False when it refused the run.
bool protect_hard_link_aliases(
    ir::Resolved& r, const std::vector<ir::ResolvedPath>& outside,
    const std::vector<std::pair<const ir::ResolvedPath*, LinkedFiles>>& walked,
    ir::Diagnostics& diags) {
  // Regular files with other names, in the writable part of every writable root.
  std::map<Inode, std::vector<std::string>> linked;
  std::optional<std::string> hidden_from_walk;
  std::map<std::string, ir::SourceLoc> privileged;  // name -> the writable root's rule
  for (const auto& [root, found] : walked) {
    for (const auto& [inode, names] : found.names)
      linked[inode].insert(linked[inode].end(), names.begin(), names.end());
    if (!hidden_from_walk) hidden_from_walk = found.hidden;
    for (const auto& name : found.privileged) privileged.emplace(name, root->loc);
  }
  if (privileged.size() > kMaxPrivilegedFiles) {
    const auto& [name, loc] = *privileged.begin();
    diags.error(loc, "more than " + std::to_string(kMaxPrivilegedFiles) +
                         " set-user-id, set-group-id or file-capability programs lie in "
                         "writable roots (e.g. '" +
                         name +
                         "'), each of which would be bound read-only; refusing to run (move "
                         "them out of the writable root, or clear their privileges)");
    return false;
  }
  // Protected whatever else is found below: a privileged program is a file like any other
  // protected one, and a hidden directory or a hard link changes nothing about it.
  for (const auto& [name, loc] : privileged) r.protect.push_back({name, ir::HostKind::File, loc});
  const std::vector<const ir::ResolvedPath*> trees = searched_trees(r, outside);
  if (hidden_from_walk && !hidden_directory_harmless(*hidden_from_walk, trees, diags)) return false;
  // The names a denied file may have in writable roots: those of the writable part, and
  // those of the protected paths there, read-only but readable: the protected files among
  // them looked at one by one, the protected trees as their walk for the writable part's
  // names passes (made only when the writable part holds a linked file; a denied file's
  // name elsewhere in a protected directory is the limit, docs/protected-paths.md).
  std::map<Inode, std::vector<std::string>> deniable = linked;
  // And the writable roots' device nodes, sockets and FIFOs with other links: bound
  // read-only as special files, a FIFO is still opened for writing and reading there, and
  // a denied FIFO's other name in the workspace took the command's writes to the host
  // process reading the denied one (red team A29D-1).
  for (const auto& [root, found] : walked)
    for (const auto& [inode, names] : found.special_names)
      deniable[inode].insert(deniable[inode].end(), names.begin(), names.end());
  for (const auto& p : r.protect) {
    struct stat st;
    if (std::any_of(r.write.begin(), r.write.end(),
                    [&](const auto& w) { return ir::path_within(w.path, p.path); }) &&
        lstat(p.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
      auto& all = deniable[{st.st_dev, st.st_ino}];
      if (std::find(all.begin(), all.end(), p.path) == all.end()) all.push_back(p.path);
    }
  }
  std::map<Inode, std::vector<std::string>> protected_linked;
  if (!linked.empty() &&
      !protect_shared_names(r, trees, linked, privileged, protected_linked, diags))
    return false;
  for (auto& [inode, names] : protected_linked) {
    auto& all = deniable[inode];
    for (auto& name : names)
      if (std::find(all.begin(), all.end(), name) == all.end()) all.push_back(std::move(name));
  }
  std::optional<std::string> closed = hidden_from_walk;
  for (const auto& [root, found] : walked)
    if (!closed && !found.closed.empty()) closed = *found.closed.begin();
  return (deniable.empty() && !closed) || deny_shared_names(r, deniable, closed, diags);
}

}  // namespace

void protect_hard_links_and_special_files(ir::Resolved& r,
                                          const std::vector<ir::ResolvedPath>& outside,
                                          ir::Diagnostics& diags) {
  if (r.mode != ir::Mode::WorkspaceWrite || r.write.empty()) return;
  std::set<std::string> guarded;
  for (const auto& p : r.protect) guarded.insert(p.path);
  for (const auto& d : r.deny) guarded.insert(d.path);
  // One walk of each writable root, skipping what is protected or denied already. A nested
  // writable root is walked as part of its parent (and skipped on its own).
  std::vector<std::pair<const ir::ResolvedPath*, LinkedFiles>> walked;
  for (const auto& w : r.write) {
    bool nested = false;
    for (const auto& o : r.write) nested |= o.path != w.path && ir::path_within(o.path, w.path);
    if (nested) continue;
    walked.emplace_back(&w, linked_files_below(w.path, guarded, true));
    if (const auto& failed = walked.back().second.failed) {
      refuse_failed_walk(*failed, w, diags);
      return;
    }
  }
  // The aliases first: their search walks every protected path, and a closed directory
  // cannot be walked.
  if (protect_hard_link_aliases(r, outside, walked, diags)) protect_special_files(r, walked, diags);
}

}  // namespace zpolicy::compiler
