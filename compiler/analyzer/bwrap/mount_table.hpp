#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/fs_op.hpp"
#include "compiler/analyzer/path_table.hpp"
#include "compiler/analyzer/symbolic_path.hpp"

namespace zpolicy::compiler {

// What an operation at a sandbox path reaches.
enum class Outcome {
  Denied,   // the call fails (EACCES, EROFS, EBUSY, EEXIST, ENOENT)
  Host,     // it succeeds on the host's own object (persistent, original content)
  Scratch,  // it succeeds on sandbox-private storage (tmpfs, /dev, /proc): nothing of
            // the host is read or changed
};
const char* to_string(Outcome o);

struct AccessResult {
  Outcome outcome = Outcome::Denied;
  // The host object reached, for Outcome::Host, in the table's PathTable.
  std::optional<PathTable::Id> host;
  std::vector<std::string> trace;  // which operations decided, in order
};

// The mount namespace bwrap builds from its setup operations, replayed in order: each
// mount covers whatever earlier mounts lie at or below its destination, a remount
// changes only the mount at exactly that point, and every path resolves to the deepest
// visible mount that contains it. The sandbox has no capabilities, so known permission
// bits (tmpfs and --dir modes, --chmod) on a read-only mount are enforced without
// CAP_DAC_OVERRIDE; on a writable mount the owner may chmod them open, so they count
// for nothing. Host objects' own modes are unknown and assumed to allow.
class MountTable {
 public:
  enum class MountKind { Root, Bind, Tmpfs, Dev, Proc };

  struct Mount {
    MountKind kind = MountKind::Root;
    PathTable::Id dest = PathTable::kRoot;
    PathTable::Id source = PathTable::kRoot;  // for Bind
    bool read_only = false;
    bool devices = false;          // --dev-bind: device nodes may be opened
    bool device_source = false;    // the source is a device node (/dev/null ...)
    std::optional<unsigned> mode;  // known mode of the mount's root directory
    bool visible = true;           // false once a later mount covers it
    int line = 0;                  // bwrap.args line; 0 for bwrap's own root
    std::string_view text;         // in the table's texts_, or a literal
  };

  // Trace lines, built only when wanted.
  class Trace {
   public:
    explicit Trace(bool on) : on_(on) {}
    template <class F>
    void add(F&& line) {
      if (on_) lines_.push_back(line());
    }
    std::vector<std::string> take() { return std::move(lines_); }
    bool on() const { return on_; }

   private:
    bool on_;
    std::vector<std::string> lines_;
  };

  // Replays `argv`'s ops; applied(i) says whether the i-th op, a -try bind, finds its
  // source. An operation bwrap would die on (remounting what is not a mount point, chmod
  // of a missing path) yields an error at its line of bwrap.args: such an artifact never
  // runs a command. The table speaks of paths in argv.paths, which a verifier shares with
  // its Intent.
  static ir::Result<MountTable> replay(const BwrapArgv& argv,
                                       const std::function<bool(size_t)>& applied);

  // The outcome of `op` at sandbox path `p`; the trace is left empty unless asked for,
  // since a verifier evaluates many operations and explains only the few that fail.
  AccessResult access(PathTable::Id p, FsOp op, bool with_trace = true);
  AccessResult access(const SymbolicPath& p, FsOp op, bool with_trace = true) {
    return access(paths_->intern(p), op, with_trace);
  }
  // The outcome of `op` on the host object at `host`, wherever the sandbox can reach it:
  // at the same path and at every alias a bind with a different source creates.
  AccessResult host_access(PathTable::Id host, FsOp op, bool with_trace = true);
  AccessResult host_access(const SymbolicPath& host, FsOp op, bool with_trace = true) {
    return host_access(paths_->intern(host), op, with_trace);
  }

  // What one operation reaches: an AccessResult without its trace.
  struct Reach {
    Outcome outcome = Outcome::Denied;
    std::optional<PathTable::Id> host;
    // The mount that grants it (for a host object reached through an alias, the alias's
    // bind), so that a verifier reports one grant once, not at every path it shows in.
    size_t mount = 0;
  };
  // access() and host_access() at `p` for every operation, indexed by FsOp, without
  // traces: what a verifier asks of every probe. The traced calls are for explaining the
  // few that fail.
  struct Reaches {
    std::array<Reach, 4> at_path;  // access(p, op)
    std::array<Reach, 4> of_host;  // host_access(p, op)
  };
  Reaches reach_all(PathTable::Id p);

  // The visible mount whose destination is exactly `p`, if any.
  const Mount* mount_at(const SymbolicPath& p);

  PathTable& paths() const { return *paths_; }

 private:
  using Id = PathTable::Id;
  struct Node {
    enum class Kind { Dir, Symlink, ModeOverride } kind = Kind::Dir;
    Id path = PathTable::kRoot;
    size_t mount = 0;  // index of the mount the node was created in
    std::optional<unsigned> mode;
    std::string_view target;  // symlink target, in texts_
    int line = 0;
    std::optional<Id> leads_to{};  // where the symlink leads; none if it cannot be followed
  };

  MountTable(std::shared_ptr<PathTable> paths,
             std::shared_ptr<const std::deque<std::string>> texts);

  // The reason bwrap would abort on `op`, if it would.
  std::optional<ir::Diagnostic> apply(const BwrapOp& op);
  // apply() of each kind of op at `dest`, where it acts; each says why bwrap would abort.
  void mount(const BwrapOp& op, Id dest);
  std::optional<std::string> remount_ro(Id dest);
  std::optional<std::string> make_dir(const BwrapOp& op, Id dest);
  std::optional<std::string> make_symlink(const BwrapOp& op, Id dest);
  std::optional<std::string> change_mode(const BwrapOp& op, Id dest);
  void add_mount(Mount m);
  size_t covering(Id p);
  const Node* node_at(Id p, size_t mount, Node::Kind kind) const;
  bool exists_in_scratch(Id p, size_t mount) const;
  // The mode that binds the sandbox at `p`, whose covering mount is `c`.
  std::optional<unsigned> known_mode(Id p, size_t c) const;
  // Creates the missing ancestors of `dest`.
  void ensure_parents(Id dest, std::optional<unsigned> perms, int line);
  std::optional<Id> resolve_symlinks(Id p, bool follow_last, Trace& trace);
  std::optional<Id> first_link(Id cur, bool follow_last);
  // "/" down to `p` in the table as it stands (during the replay inherited() cannot
  // remember its answers): calls visit(d, c), `c` the mount covering `d`, until it returns
  // true, and returns that `d`. A loop, not a call per level: an argv may name paths
  // thousands of components deep.
  template <class Visit>
  std::optional<Id> descend(Id p, Visit&& visit) const;
  // Why the directory `a`, covered by mount `c`, cannot be searched (an empty text
  // unless `with_text`); none when it can.
  std::optional<std::string> unsearchable(Id a, size_t c, bool with_text) const;
  // What holds at a path of the replayed table because of what holds at its parent.
  struct Inherited {
    size_t mount = 0;                // the covering mount: the deepest visible one that holds it
    bool searchable = true;          // every directory from "/" down to it can be searched
    std::optional<Id> top_link;      // the shallowest path at or above it holding a link
    std::optional<Id> alias_source;  // the deepest alias source at or above it
  };
  Inherited inherited(Id p);
  std::string describe(size_t mount) const;
  // What access() finds at the resolved path `rp` before it looks at the operation; the
  // rest is left unset when an ancestor cannot be searched.
  struct Place {
    Id path = PathTable::kRoot;
    bool searchable = true;  // every strict ancestor can be searched
    size_t mount = 0;        // the covering mount
    std::optional<Id> host;  // for a bind, the host object at `path`
    std::optional<unsigned> mode;
    bool exists = false;  // for a scratch mount, whether `path` exists in it
    std::optional<Id> parent;
    std::optional<unsigned> parent_mode;
  };
  Place place(Id rp);
  // The place `op` at `p` reaches once links are followed (one at `p` itself by read and
  // write only); none when they loop or dangle.
  std::optional<Place> place_of(Id p, FsOp op, Trace& trace);
  // access() itself, its trace written to `trace`.
  Reach reach(Id p, FsOp op, Trace& trace) { return reach(place_of(p, op, trace), op, trace); }
  Reach reach(const std::optional<Place>& found, FsOp op, Trace& trace) const;
  // The part of reach() after symlinks are resolved, for a place every strict ancestor
  // of which can be searched; the trace says which rule settled it.
  Reach decide(const Place& at, FsOp op, Trace& trace) const;
  // decide() for a read or write of the device node a bind put at its mount point `m`.
  Reach open_device(const Mount& m, Trace& trace) const;
  // decide() for an operation that creates or removes the directory entry at `at`.
  Reach change_entry(const Place& at, FsOp op, Trace& trace) const;
  // What an operation `at`'s mount lets through reaches: the host object of a bind, or
  // sandbox storage.
  Reach succeeds(const Place& at, FsOp op, Trace& trace) const;
  // What an operation does to the host object `host`, given `direct`, what it does at the
  // same path: `direct` where that reaches `host`; else through the first alias of `host`
  // in replay order that reaches it (the Reach's mount is the alias's bind), which
  // `first_alias()` names, asked only then; else `direct`, with another host object
  // counted as sandbox storage.
  struct HostReach {
    Reach reach;
    std::optional<Id> alias;  // the alias path, when one reaches `host`
  };
  template <class FirstAlias>
  HostReach of_host(Id host, const Reach& direct, FirstAlias&& first_alias);
  // For each operation (indexed by FsOp), the first alias bind in replay order through
  // which it reaches the host object `host`, if any: the search of_host() needs, by the
  // class of `host` below, looked up once for the four.
  using FirstAliases = std::array<std::optional<size_t>, 4>;
  FirstAliases first_aliases(Id host);
  // The search without classes: every alias of `host`, in replay order.
  FirstAliases search_aliases(Id host);
  // Every visible alias bind whose source holds `host`, in replay order.
  std::vector<size_t> alias_binds_above(Id host);
  // For each operation, whether the alias of `host` through alias bind `bind` reaches it.
  std::array<bool, 4> reaches_through(size_t bind, Id host);
  // A class of host paths: the nearest place where an alias may change at or above them,
  // and how far below it they lie (0, 1, or 2 for two or more).
  using AliasClass = std::pair<Id, unsigned>;
  AliasClass alias_class(Id host);
  // What a class says of the aliases of its host objects: for each operation, the alias
  // binds through which it reaches them, in replay order, as far as a search needed them.
  // They are the binds listed at the class's place that reach (asked at the class's own
  // path) and, of those of the class above (its place's parent's, at its distance), the
  // ones not listed here.
  struct AliasLevel {
    AliasLevel* above = nullptr;  // none for "/"
    std::vector<size_t> listed;   // the binds listed at the class's place, in replay order
    std::array<std::vector<size_t>, 4> own;          // the listed ones that reach, by FsOp
    std::array<std::vector<size_t>, 4> order;        // the binds that reach, as far as known
    std::array<size_t, 4> own_next{}, above_next{};  // how far each list has been merged
    std::array<bool, 4> complete{};
  };
  AliasLevel& alias_level(const AliasClass& c);
  // The n-th alias bind, in replay order, through which `op` reaches the host objects of
  // the class of `level`; none when fewer reach.
  std::optional<size_t> nth_alias(AliasLevel& level, size_t op, size_t n);

  void add_node(Node n);
  // Every visible bind whose source is not its destination, by source: the aliases
  // host_access() must try; and the host paths where what they reach may change. Built
  // once the replay is done.
  void index_aliases();
  // Notes the host path that `mount` shows at the mark `p` as one where an alias may change.
  void note_mark(Id p, size_t mount);
  // Notes `x` as a place where the alias of every bind that maps `q` to `x` may change.
  void note_alias_change(Id q, Id x);

  std::shared_ptr<PathTable> paths_;
  std::shared_ptr<const std::deque<std::string>>
      texts_;  // the argv's, which the mounts' texts are in
  std::vector<Mount> mounts_;
  // The one visible mount at each destination (a new mount hides every mount at or
  // under its destination), so that covering() looks up the path's ancestors instead of
  // scanning every mount: verification probes each root, and a scan made it quadratic.
  // Index 0, bwrap's own root, is never at a destination.
  PathMap<size_t> visible_at_;
  // The mounts added at or below each path since the last mount at the path itself (some
  // since hidden): the ones a new mount there may hide.
  PathMap<std::vector<size_t>> mounts_below_;
  // The nodes at each path; at most one of each kind per mount.
  PathMap<std::vector<Node>> nodes_at_;
  bool has_symlinks_ = false;
  PathMap<std::vector<size_t>> aliases_by_source_;
  // The places where an alias may begin or stop reaching its host object, each with the
  // alias binds whose alias may change there (not sorted): the source of every alias
  // bind, and the host object each bind shows at each mark in its part of the sandbox (a
  // mount's destination, a --chmod). Why they suffice: the comment above first_aliases().
  PathMap<std::vector<size_t>> alias_changes_;
  std::vector<std::pair<Id, size_t>> mode_overrides_;  // each --chmod's path and mount
  std::vector<Id> link_nodes_;                         // each --symlink's path
  // Whether a link lies at, above or below the destination of an alias bind, where it may
  // lead an alias anywhere: then every host path is searched.
  bool aliases_meet_links_ = false;
  PathMap<AliasClass> alias_class_;
  std::map<AliasClass, AliasLevel> alias_levels_;
  // Set once the replay is done: from then on the mounts do not change, and inherited()
  // remembers its answer for every path it passes (fold_down), so that the probes of a
  // deep path cost its depth once. The questions that reach it are therefore not const.
  bool frozen_ = false;
  PathMap<Inherited> inherited_;
};

}  // namespace zpolicy::compiler
