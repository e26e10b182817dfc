#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analyzer/path_table.hpp"
#include "compiler/analyzer/symbolic_path.hpp"
#include "ir/result.hpp"

namespace zpolicy::compiler {

// One filesystem setup operation, in the order bwrap executes them (the model of
// bubblewrap.c's SetupOp list).
enum class BwrapOpKind { Bind, RoBind, DevBind, RemountRo, Tmpfs, Dev, Proc, Dir, Symlink, Chmod };
// Whether an operation of this kind mounts a filesystem at its destination.
constexpr bool is_mount(BwrapOpKind k) {
  return k == BwrapOpKind::Bind || k == BwrapOpKind::RoBind || k == BwrapOpKind::DevBind ||
         k == BwrapOpKind::Tmpfs || k == BwrapOpKind::Dev || k == BwrapOpKind::Proc;
}

struct BwrapOp {
  BwrapOpKind kind = BwrapOpKind::Bind;
  bool try_source = false;             // --*-bind-try: skipped when the source is missing
  std::optional<PathTable::Id> source;  // bind source on the host, in BwrapArgv::paths
  // For --bind-fd/--ro-bind-fd: the descriptor, whose host path (`source`) the bwrap.fds
  // table gives. Empty for a bind by path, which bwrap resolves again when it mounts.
  std::optional<int> source_fd;
  std::string_view link_target;         // --symlink target, verbatim, in BwrapArgv::texts
  PathTable::Id dest = PathTable::kRoot;  // in BwrapArgv::paths
  std::optional<unsigned> perms;  // --perms for --tmpfs/--dir, the mode of --chmod
  int line = 0;                   // 1-based line of the option in bwrap.args
  std::string_view text;          // the option and its arguments, in BwrapArgv::texts
};

// Namespace and lockdown options, with bwrap's own precedence already applied
// (--share-net after --unshare-net wins, and the reverse).
struct BwrapFlags {
  bool unshare_user = false;
  bool unshare_user_try = false;
  bool unshare_ipc = false;
  bool unshare_pid = false;
  bool unshare_net = false;
  bool unshare_uts = false;
  bool unshare_cgroup = false;
  bool unshare_cgroup_try = false;
  bool new_session = false;
  bool die_with_parent = false;
  bool cap_drop_all = false;
  bool disable_userns = false;
  std::optional<int> seccomp_fd;
  std::optional<SymbolicPath> chdir;
};

struct BwrapArgv {
  std::vector<BwrapOp> ops;
  BwrapFlags flags;
  // Where the ops' paths are interned: a verifier passes the table its Intent uses, so
  // that the replay and the probes speak of the same ids without interning again.
  std::shared_ptr<PathTable> paths;
  // Where the ops' texts are kept (a deque never moves its strings); a mount table
  // replayed from the ops shares it, so that its traces outlive the argv.
  std::shared_ptr<std::deque<std::string>> texts = std::make_shared<std::deque<std::string>>();
};

// Parses a `bwrap.args` artifact: one argument per line, up to and excluding `--`.
// Only the subset zpolicy emits is accepted; any other option, a missing or relative
// path argument, or an argument combination bwrap itself rejects is an error, so that
// nothing the evaluator does not understand is ever waved through. The error is located
// at its line of bwrap.args, or of bwrap.fds for an error in the descriptor table.
//
// `fds` is the `bwrap.fds` table of a run's argv ("FD PATH" per line): what host path
// each `--bind-fd FD` / `--ro-bind-fd FD` binds. Without it a descriptor bind is an error
// (nothing says what it mounts). With it, a descriptor must be named by the table and
// used by exactly one bind (bwrap closes it after the mount), may not be 0-2 or the
// --seccomp descriptor, and every table entry must be used.
ir::Result<BwrapArgv> parse_bwrap_args(
    std::string_view text, std::shared_ptr<PathTable> paths = std::make_shared<PathTable>(),
    std::optional<std::string_view> fds = std::nullopt);

}  // namespace zpolicy::compiler
