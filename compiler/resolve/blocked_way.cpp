#include "compiler/resolve/blocked_way.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "compiler/resolve/dir_fd.hpp"

namespace zpolicy::compiler {
namespace {

// Whether the caller cannot create a name, whose lstat failed with `error` (0: it exists),
// in a directory it may change or not, as given (mode 0555: a dataset or a tree made
// read-only; 0644: not searchable): no placeholder can be made there, and every run failed
// with exit 125, yet the sandbox, with the caller's uid, could chmod the directory and
// create the path (red team H17-12).
bool cannot_create(int error, bool dir_can_change) {
  return (error == EACCES || error == ENOENT) && !dir_can_change;
}

}  // namespace

// The walk down one protected path: the node it stands at, that node's path ("" for "/"),
// and the directory opened for it once a name below must be asked of the host. Only the
// names no earlier walk asked about cost system calls.
class BlockedWays::Walk {
 public:
  Walk(BlockedWays& ways, const std::string& root) : ways_(ways), path_(root == "/" ? "" : root) {
    const auto [at, added] = ways.roots_.try_emplace(root, ways.facts_.size());
    if (added) ways.facts_.emplace_back();
    node_ = at->second;
  }

  // access(root, W_OK | X_OK) == 0, for the walk's root.
  bool root_can_change() {
    std::optional<Facts>& f = ways_.facts_[node_];
    if (!f) f = Facts{0, S_IFDIR, access(path_.empty() ? "/" : path_.c_str(), W_OK | X_OK) == 0};
    return *f->can_change;
  }

  // lstat of `name` in the walk's directory; a path of PATH_MAX bytes or more fails, as
  // lstat fails on it.
  const Facts& below(const std::string& name) {
    std::optional<Facts>& f = ways_.facts_[ways_.child(node_, name)];
    if (!f) {
      f = Facts{};
      struct stat st;
      if (too_long(name))
        f->error = ENAMETOOLONG;
      else if (fd() >= 0 ? fstatat(fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0
                         : lstat((path_ + "/" + name).c_str(), &st) == 0)
        f->type = st.st_mode & S_IFMT;
      else
        f->error = errno;
    }
    return *f;
  }

  // access(path/name, W_OK | X_OK) == 0, for a directory `name` met without a link.
  bool can_change_below(const std::string& name) {
    std::optional<Facts>& f = ways_.facts_[ways_.child(node_, name)];
    if (!f->can_change)
      f->can_change =
          !too_long(name) && (fd() >= 0 ? faccessat(fd(), name.c_str(), W_OK | X_OK, 0)
                                        : access((path_ + "/" + name).c_str(), W_OK | X_OK)) == 0;
    return *f->can_change;
  }

  void enter(const std::string& name) {
    node_ = ways_.child(node_, name);
    path_ += "/" + name;
    dir_.reset();
  }

 private:
  bool too_long(const std::string& name) const {
    return path_.size() + 1 + name.size() >= PATH_MAX;
  }
  int fd() {
    if (!dir_) dir_.emplace(path_.empty() ? "/" : path_, DirFd::Link::Refuse);
    return dir_->get();
  }

  BlockedWays& ways_;
  size_t node_ = 0;
  std::string path_;
  std::optional<DirFd> dir_;
};

size_t BlockedWays::child(size_t node, const std::string& name) {
  const auto [at, added] = children_.try_emplace({node, name}, facts_.size());
  if (added) facts_.emplace_back();
  return at->second;
}

std::optional<size_t> BlockedWays::length(const std::string& root,
                                          const std::vector<std::string>& rel) {
  Walk walk(*this, root);
  const bool root_can_change = walk.root_can_change();
  if (!rel.empty() && cannot_create(walk.below(rel[0]).error, root_can_change)) return 0;
  for (size_t i = 0; i + 1 < rel.size(); ++i) {
    const Facts& f = walk.below(rel[i]);
    if (f.error) return std::nullopt;  // missing: a placeholder follows
    if (S_ISLNK(f.type)) return std::nullopt;
    if (!S_ISDIR(f.type)) return i + 1;
    const bool can_change = walk.can_change_below(rel[i]);
    walk.enter(rel[i]);
    if (cannot_create(walk.below(rel[i + 1]).error, can_change)) return i + 1;
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
