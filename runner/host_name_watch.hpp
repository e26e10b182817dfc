#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/analyzer/bwrap/expected_setup.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::runner {

// A protection is a mount in the sandbox's namespace on a dentry of a host directory
// (a read-only bind over `.git`, a tmpfs over `~/.ssh`). The host's own tools may rename or
// remove that dentry while the run is live: the kernel lets another namespace do it, the
// mount then follows the old object or is detached, and the name shows whatever the host
// puts there next, with the access of the mount around it (red team R7-C1: `npm ci`, an
// editor's atomic save, `mv .git .git.old`). Nothing in the plan can prevent it, so the
// run watches those names on the host and stops the sandbox when one changes
// (docs/run.md "Protected names replaced on the host").

// One name to watch: `name` in the host directory `directory`, on the way to the sandbox
// path `protects`.
struct WatchedName {
  std::string directory;
  std::string name;
  std::string protects;
  // Watched for its creation (or a rename onto it) instead: the first missing name on the
  // way to a deny root that did not exist when the run started (missing_deny_names).
  bool created = false;
  bool operator==(const WatchedName&) const = default;
};

// The names whose replacement on the host would give the sandbox more than the setup
// did. An object of `setup` is resolved by bwrap in the mount around it (the last mount
// root before it at an ancestor of its destination). When that mount is a bind of a host
// directory, every name from the bind's root down to the object is a host dentry, and
// replacing one shows the host's new object with the bind's access. That widens access
// when the bind is writable and the object is not a writable bind (a protection), or
// when the bind is read-only and the object is not the same host path bound again (a
// mask: a tmpfs, or /dev/null over a file). The names of the writable binds around such
// an object are watched too: replacing one moves the object away with it. Pure: `setup`
// alone decides.
std::vector<WatchedName> watched_names(const std::vector<compiler::ExpectedObject>& setup);

// A deny root outside every writable root that does not exist when the run starts is not
// masked (there is nothing to mask, and the sandbox cannot create it), but the host can:
// `aws configure` in another terminal makes `~/.aws/credentials`, which the read-only view
// of the home then shows the sandbox (red team R8-H1). So, for each such deny root, the
// first missing name on its way is watched for its creation in the nearest existing
// directory, and each name from `/` down to that directory for a rename or removal (which
// could bring the whole way back at once). Looks at the host (lstat). A deny root that
// exists by now (created since resolution) is set in `appeared`: the run must not start.
// `roots`, when given, gets each deny root whose way is watched, once.
std::vector<WatchedName> missing_deny_names(const ir::Resolved& resolved, std::string& appeared,
                                            std::vector<std::string>* roots = nullptr);

// The deny roots missing_deny_names() watches the ways of, each once (none when one exists
// by now). A watch names one deny root, and a deny root below a file has no "created"
// watch, so the watches alone do not list them all. Looks at the host.
std::vector<std::string> missing_deny_roots(const ir::Resolved& resolved);

// The names above, watched with inotify from before bwrap starts until the run ends.
class HostNameWatch {
 public:
  HostNameWatch() = default;
  HostNameWatch(const HostNameWatch&) = delete;
  HostNameWatch& operator=(const HostNameWatch&) = delete;
  ~HostNameWatch();

  // Starts watching; false, with `why`, when a directory cannot be watched, or when a name
  // watched for its creation exists once its watch is in place: the run must then not
  // start, since a replacement would go unseen.
  bool start(std::vector<WatchedName> names, std::string& why);
  // Readable when something happened in a watched directory (-1 before start()).
  int fd() const { return fd_; }
  // Reads what happened: what the host did that undid a protection ("WS/.env was renamed
  // or removed on the host while the sandbox ran, so ..."), if anything (also when the
  // kernel dropped events, which might have been one).
  std::optional<std::string> replaced();

 private:
  struct Watch {
    int wd;
    WatchedName name;
  };
  int fd_ = -1;
  std::vector<Watch> watches_;
};

}  // namespace zpolicy::runner
