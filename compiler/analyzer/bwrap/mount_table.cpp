#include "compiler/analyzer/bwrap/mount_table.hpp"

#include <algorithm>
#include <utility>

namespace zpolicy::compiler {

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::Denied:
      return "denied";
    case Outcome::Host:
      return "allowed on the host object";
    case Outcome::Scratch:
      return "allowed on sandbox-private storage";
  }
  return "?";
}

namespace {

std::string octal(unsigned mode) {
  std::string out;
  for (int shift = 9; shift >= 0; shift -= 3)
    out += static_cast<char>('0' + ((mode >> shift) & 7u));
  return out;
}

// Device nodes a bind may put over a file to mask it. A bind without --dev-bind is
// mounted nodev, so such a node cannot even be opened.
bool is_char_device(const PathTable& paths, PathTable::Id p) {
  static const char* const kDevices[] = {"null", "zero", "full", "random", "urandom", "tty"};
  const auto dir = paths.parent(p);
  if (!dir || paths.name(*dir) != "dev" || paths.parent(*dir) != PathTable::kRoot) return false;
  return std::any_of(std::begin(kDevices), std::end(kDevices),
                     [&](const char* d) { return paths.name(p) == d; });
}

bool is_scratch(MountTable::MountKind k) {
  return k == MountTable::MountKind::Root || k == MountTable::MountKind::Tmpfs ||
         k == MountTable::MountKind::Dev;
}

// A rule's outcome, its text added to the trace.
template <class F>
MountTable::Reach finish(Outcome o, MountTable::Trace& t, F&& why,
                         std::optional<PathTable::Id> host = std::nullopt) {
  t.add(why);
  return MountTable::Reach{o, host};
}

}  // namespace

MountTable::MountTable(std::shared_ptr<PathTable> paths,
                       std::shared_ptr<const std::deque<std::string>> texts)
    : paths_(std::move(paths)),
      texts_(std::move(texts)),
      visible_at_(*paths_),
      mounts_below_(*paths_),
      nodes_at_(*paths_),
      aliases_by_source_(*paths_),
      alias_changes_(*paths_),
      alias_class_(*paths_),
      inherited_(*paths_) {}

ir::Result<MountTable> MountTable::replay(const BwrapArgv& argv,
                                          const std::function<bool(size_t)>& applied) {
  const std::vector<BwrapOp>& ops = argv.ops;
  MountTable t(argv.paths, argv.texts);
  t.mounts_.reserve(ops.size() + 1);
  Mount root;
  root.kind = MountKind::Root;
  root.mode = 0755;
  root.text = "bwrap's empty root tmpfs";
  t.mounts_.push_back(root);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].try_source && !applied(i)) continue;
    if (auto err = t.apply(ops[i])) return *err;
  }
  t.frozen_ = true;
  t.index_aliases();
  return t;
}

template <class Visit>
std::optional<PathTable::Id> MountTable::descend(Id p, Visit&& visit) const {
  std::vector<Id> lineage{p};
  while (lineage.back() != PathTable::kRoot) lineage.push_back(paths_->up(lineage.back()));
  size_t c = 0;
  for (auto d = lineage.rbegin(); d != lineage.rend(); ++d) {
    if (const size_t* v = visible_at_.find(*d)) c = *v;
    if (visit(*d, c)) return *d;
  }
  return std::nullopt;
}

void MountTable::add_mount(Mount m) {
  const size_t index = mounts_.size();
  // Each mount is listed at its destination and every ancestor, so that a new mount
  // finds the ones it hides without a scan of every mount: an argv may repeat a mount
  // tens of thousands of times. A list is emptied when a mount lands on its path (all it
  // holds are hidden then), so each entry is looked at once.
  for (size_t i : std::exchange(mounts_below_[m.dest], {})) {
    Mount& old = mounts_[i];
    if (!old.visible) continue;
    old.visible = false;
    visible_at_.erase(old.dest);
  }
  // bwrap's own root, never added here, is covered by the first mount at "/".
  if (m.dest == PathTable::kRoot) mounts_[0].visible = false;
  visible_at_[m.dest] = index;
  for (Id a = m.dest;; a = paths_->up(a)) {
    mounts_below_[a].push_back(index);
    if (a == PathTable::kRoot) break;
  }
  mounts_.push_back(std::move(m));
}

void MountTable::add_node(Node n) {
  has_symlinks_ |= n.kind == Node::Kind::Symlink;
  if (n.kind == Node::Kind::ModeOverride) mode_overrides_.emplace_back(n.path, n.mount);
  if (n.kind == Node::Kind::Symlink) link_nodes_.push_back(n.path);
  std::vector<Node>& here = nodes_at_[n.path];
  // A mode set again in the same mount replaces the last one: a chain of thousands of
  // --chmod of one path would make every look-up there walk them all.
  for (Node& old : here)
    if (old.kind == Node::Kind::ModeOverride && n.kind == old.kind && old.mount == n.mount) {
      old.mode = n.mode;
      old.line = n.line;
      return;
    }
  here.push_back(std::move(n));
}

void MountTable::index_aliases() {
  PathMap<bool> alias_dests(*paths_), above_alias_dests(*paths_);
  for (size_t i = 0; i < mounts_.size(); ++i) {
    const Mount& m = mounts_[i];
    if (m.visible && m.kind == MountKind::Bind && m.source != m.dest) {
      aliases_by_source_[m.source].push_back(i);
      note_alias_change(m.dest, m.source);
      alias_dests.insert(m.dest, true);
      // Each directory once: one above a listed one is listed.
      for (Id a = m.dest; !above_alias_dests.find(a); a = paths_->up(a)) {
        above_alias_dests.insert(a, true);
        if (a == PathTable::kRoot) break;
      }
    }
  }
  for (Id link : link_nodes_)
    aliases_meet_links_ =
        aliases_meet_links_ || above_alias_dests.find(link) || alias_dests.deepest_containing(link);
  // After the aliases are listed: covering() remembers what it finds, alias sources
  // included.
  for (size_t i = 1; i < mounts_.size(); ++i)
    if (mounts_[i].visible && mounts_[i].dest != PathTable::kRoot)
      note_mark(mounts_[i].dest, covering(paths_->up(mounts_[i].dest)));
  for (const auto& [path, mount] : mode_overrides_) note_mark(path, mount);
}

void MountTable::note_mark(Id p, size_t mount) {
  // A bind of a path onto itself is no alias: no alias leaves it or meets a mark in it.
  const Mount& m = mounts_[mount];
  if (m.kind == MountKind::Bind && m.source != m.dest)
    note_alias_change(p, paths_->rebase(m.source, m.dest, p));
}

void MountTable::note_alias_change(Id q, Id x) {
  // A bind maps q to x when its destination and source lie the same names above them.
  for (Id a = q, b = x;; a = paths_->up(a), b = paths_->up(b)) {
    if (const size_t* v = visible_at_.find(a)) {
      const Mount& m = mounts_[*v];
      if (m.kind == MountKind::Bind && m.source == b && m.source != m.dest)
        alias_changes_[x].push_back(*v);
    }
    if (a == PathTable::kRoot || b == PathTable::kRoot || paths_->name(a) != paths_->name(b)) break;
  }
}

// The deepest visible mount whose destination holds `p`.
size_t MountTable::covering(Id p) {
  if (frozen_) return inherited(p).mount;
  const size_t* v = visible_at_.deepest_containing(p);
  return v ? *v : 0;
}

MountTable::Inherited MountTable::inherited(Id p) {
  return fold_down(*paths_, inherited_, p, Inherited{}, [&](Id a, const Inherited& above) {
    Inherited here = above;
    if (const size_t* v = visible_at_.find(a)) here.mount = *v;
    // An unsearchable ancestor decides for everything below it.
    here.searchable = above.searchable && !unsearchable(a, here.mount, false);
    if (!here.top_link && node_at(a, here.mount, Node::Kind::Symlink)) here.top_link = a;
    if (aliases_by_source_.find(a)) here.alias_source = a;
    return here;
  });
}

const MountTable::Mount* MountTable::mount_at(const SymbolicPath& p) {
  const Id id = paths_->intern(p);
  size_t c = covering(id);
  return mounts_[c].dest == id ? &mounts_[c] : nullptr;
}

const MountTable::Node* MountTable::node_at(Id p, size_t mount, Node::Kind kind) const {
  if (const std::vector<Node>* here = nodes_at_.find(p))
    for (const Node& n : *here)
      if (n.mount == mount && n.kind == kind) return &n;
  return nullptr;
}

bool MountTable::exists_in_scratch(Id p, size_t mount) const {
  const Mount& m = mounts_[mount];
  // What bwrap's --dev populates: device nodes bound from the host, and directories.
  static const char* const kDevEntries[] = {"null", "zero", "full", "random", "urandom",
                                            "tty",  "ptmx", "pts",  "shm",    "console"};
  if (m.kind == MountKind::Dev && paths_->parent(p) == m.dest &&
      std::any_of(std::begin(kDevEntries), std::end(kDevEntries),
                  [&](const char* e) { return paths_->name(p) == e; }))
    return true;
  return m.dest == p || node_at(p, mount, Node::Kind::Dir) ||
         node_at(p, mount, Node::Kind::Symlink);
}

std::optional<unsigned> MountTable::known_mode(Id p, size_t c) const {
  // The sandbox owns what bwrap creates for it (and may own host files), and chmod
  // needs ownership, not a capability: a mode binds it only where chmod fails, on a
  // read-only mount.
  if (!mounts_[c].read_only) return std::nullopt;
  if (const Node* n = node_at(p, c, Node::Kind::ModeOverride)) return n->mode;
  if (const Node* n = node_at(p, c, Node::Kind::Dir)) return n->mode;
  if (mounts_[c].dest == p) return mounts_[c].mode;
  return std::nullopt;
}

std::optional<std::string> MountTable::unsearchable(Id a, size_t c, bool with_text) const {
  const Mount& m = mounts_[c];
  auto text = [&](auto&& why) { return with_text ? why() : std::string(); };
  auto a_str = [&] { return paths_->path(a).str(); };
  if (m.device_source && m.dest == a)
    return text([&] {
      return a_str() + " is the device " + paths_->path(m.source).str() + " (" + describe(c) +
             "): ENOTDIR";
    });
  if (is_scratch(m.kind) && !exists_in_scratch(a, c))
    return text([&] { return a_str() + " does not exist in " + describe(c) + ": ENOENT"; });
  auto mode = known_mode(a, c);
  if (mode && (*mode & 0111) == 0)
    return text([&] {
      return a_str() + " has mode " + octal(*mode) + " in " + describe(c) +
             ": no search permission without CAP_DAC_OVERRIDE: EACCES";
    });
  return std::nullopt;
}

std::string MountTable::describe(size_t mount) const {
  const Mount& m = mounts_[mount];
  if (m.line == 0) return std::string(m.text);
  return ("bwrap.args:" + std::to_string(m.line) + ": ").append(m.text);
}

// bwrap creates missing parents of every destination with mode 0755, minus the group
// and other bits that the operation's --perms clears.
void MountTable::ensure_parents(Id dest, std::optional<unsigned> perms, int line) {
  unsigned mode = 0755;
  if (perms && (*perms & 0070) == 0) mode &= ~0050u;
  if (perms && (*perms & 0007) == 0) mode &= ~0005u;
  if (dest == PathTable::kRoot) return;
  // "/" first: a directory is created after its parent, as bwrap's mkdir -p does.
  descend(paths_->up(dest), [&](Id d, size_t c) {
    if (is_scratch(mounts_[c].kind) && !exists_in_scratch(d, c))
      add_node(Node{Node::Kind::Dir, d, c, mode, {}, line});
    return false;
  });
}

std::optional<ir::Diagnostic> MountTable::apply(const BwrapOp& op) {
  // A mount, a remount and a chmod act where their path leads: bwrap opens it and acts
  // on what it opened, following links made earlier (`--symlink /etc /tmp/l --bind /etc
  // /tmp/l` binds /etc over /etc). --dir and --symlink make the path itself.
  const bool follows = op.kind != BwrapOpKind::Dir && op.kind != BwrapOpKind::Symlink;
  Trace ignored(false);
  const std::optional<Id> dest = follows ? resolve_symlinks(op.dest, true, ignored) : op.dest;
  std::optional<std::string> why;
  if (!dest)
    why = is_mount(op.kind) ? "the destination does not resolve" : "the path does not resolve";
  else if (is_mount(op.kind))
    mount(op, *dest);
  else if (op.kind == BwrapOpKind::RemountRo)
    why = remount_ro(*dest);
  else if (op.kind == BwrapOpKind::Dir)
    why = make_dir(op, *dest);
  else if (op.kind == BwrapOpKind::Symlink)
    why = make_symlink(op, *dest);
  else
    why = change_mode(op, *dest);
  if (!why) return std::nullopt;
  return ir::error_at({"bwrap.args", op.line, 1},
                      std::string(op.text) + ": " + *why + "; bwrap would abort");
}

void MountTable::mount(const BwrapOp& op, Id dest) {
  ensure_parents(dest, op.perms, op.line);
  Mount m;
  m.dest = dest;
  m.line = op.line;
  m.text = op.text;
  if (op.source) {
    m.kind = MountKind::Bind;
    m.source = *op.source;
    m.read_only = op.kind == BwrapOpKind::RoBind;
    m.devices = op.kind == BwrapOpKind::DevBind;
    m.device_source = is_char_device(*paths_, *op.source);
  } else if (op.kind == BwrapOpKind::Proc) {
    m.kind = MountKind::Proc;
    m.mode = 0555;
  } else {
    m.kind = op.kind == BwrapOpKind::Tmpfs ? MountKind::Tmpfs : MountKind::Dev;
    m.mode = op.perms.value_or(0755u);
  }
  add_mount(std::move(m));
}

std::optional<std::string> MountTable::remount_ro(Id dest) {
  Mount& m = mounts_[covering(dest)];
  // The kernel remounts only a mount's root; bwrap dies on anything else.
  if (m.dest != dest) return paths_->path(dest).str() + " is not a mount point at this step";
  m.read_only = true;
  return std::nullopt;
}

std::optional<std::string> MountTable::make_dir(const BwrapOp& op, Id dest) {
  ensure_parents(dest, op.perms, op.line);
  const size_t c = covering(dest);
  const Mount& m = mounts_[c];
  if (m.kind == MountKind::Proc) return "cannot create a directory in procfs";
  if (!is_scratch(m.kind) || exists_in_scratch(dest, c)) return std::nullopt;
  if (m.read_only) return "mkdir on a read-only mount";
  add_node(Node{Node::Kind::Dir, dest, c, op.perms.value_or(0755u), {}, op.line});
  return std::nullopt;
}

std::optional<std::string> MountTable::make_symlink(const BwrapOp& op, Id dest) {
  ensure_parents(dest, std::nullopt, op.line);
  const size_t c = covering(dest);
  const Mount& m = mounts_[c];
  if (m.kind == MountKind::Proc) return "cannot create a symlink in procfs";
  if (is_scratch(m.kind) && m.read_only) return "symlink on a read-only mount";
  // bwrap accepts a link that is already there with the same target and dies on
  // anything else at the destination.
  if (const Node* old = node_at(dest, c, Node::Kind::Symlink)) {
    if (old->target == op.link_target) return std::nullopt;
    return "the destination is already a link to " + std::string(old->target);
  }
  if (is_scratch(m.kind) && exists_in_scratch(dest, c))
    return "the destination exists and is not a link";
  add_node(Node{Node::Kind::Symlink, dest, c, std::nullopt, op.link_target, op.line,
                paths_->link_destination(dest, op.link_target)});
  return std::nullopt;
}

std::optional<std::string> MountTable::change_mode(const BwrapOp& op, Id dest) {
  const size_t c = covering(dest);
  Mount& m = mounts_[c];
  if (m.read_only || m.kind == MountKind::Proc) return "chmod on a read-only mount";
  if (m.dest == dest && is_scratch(m.kind)) {
    m.mode = op.perms;
    return std::nullopt;
  }
  if (is_scratch(m.kind) && !exists_in_scratch(dest, c))
    return paths_->path(dest).str() + " does not exist";
  add_node(Node{Node::Kind::ModeOverride, dest, c, op.perms, {}, op.line});
  return std::nullopt;
}

// The link that decides where `cur` leads, the one nearest "/": a strict ancestor of
// `cur`, or `cur` itself when the last component is followed.
std::optional<PathTable::Id> MountTable::first_link(Id cur, bool follow_last) {
  if (frozen_) {
    std::optional<Id> above =
        cur == PathTable::kRoot ? std::nullopt : inherited(paths_->up(cur)).top_link;
    if (above || !follow_last) return above;
    return node_at(cur, covering(cur), Node::Kind::Symlink) ? std::optional<Id>(cur) : std::nullopt;
  }
  return descend(cur, [&](Id d, size_t c) {
    return (d != cur || follow_last) && node_at(d, c, Node::Kind::Symlink);
  });
}

std::optional<PathTable::Id> MountTable::resolve_symlinks(Id p, bool follow_last, Trace& trace) {
  if (!has_symlinks_) return p;
  Id cur = p;
  // The kernel's limit on nested links (MAXSYMLINKS); beyond it the lookup fails ELOOP.
  for (int hops = 0; hops < 40; ++hops) {
    const std::optional<Id> prefix = first_link(cur, follow_last);
    if (!prefix) return cur;
    const Node* link = node_at(*prefix, covering(*prefix), Node::Kind::Symlink);
    const std::optional<Id> dest = link->leads_to;
    if (!dest) return std::nullopt;
    trace.add([&] {
      return "bwrap.args:" + std::to_string(link->line) + ": symlink " +
             paths_->path(*prefix).str() + " -> " + std::string(link->target);
    });
    cur = paths_->rebase(*dest, *prefix, cur);
  }
  return std::nullopt;
}

MountTable::Place MountTable::place(Id rp) {
  Place at;
  at.path = rp;
  at.searchable = rp == PathTable::kRoot || inherited(paths_->up(rp)).searchable;
  if (at.searchable) {
    at.mount = covering(rp);
    const Mount& m = mounts_[at.mount];
    if (m.kind == MountKind::Bind)
      at.host = m.source == m.dest ? rp : paths_->rebase(m.source, m.dest, rp);
    at.mode = known_mode(rp, at.mount);
    if (is_scratch(m.kind)) at.exists = exists_in_scratch(rp, at.mount);
    at.parent = paths_->parent(rp);
    // A mount that covers `rp` without being mounted at it covers the parent too.
    if (at.parent)
      at.parent_mode = known_mode(*at.parent, m.dest == rp ? covering(*at.parent) : at.mount);
  }
  return at;
}

AccessResult MountTable::access(Id p, FsOp op, bool with_trace) {
  Trace tr(with_trace);
  const Reach r = reach(p, op, tr);
  return AccessResult{r.outcome, r.host, tr.take()};
}

std::optional<MountTable::Place> MountTable::place_of(Id p, FsOp op, Trace& tr) {
  const auto rp = resolve_symlinks(p, op == FsOp::Read || op == FsOp::Write, tr);
  if (!rp) return std::nullopt;
  return place(*rp);
}

MountTable::Reach MountTable::reach(const std::optional<Place>& found, FsOp op, Trace& tr) const {
  if (!found)
    return finish(Outcome::Denied, tr,
                  [&] { return std::string("symlink loop or dangling target: ENOENT/ELOOP"); });
  const Place& at = *found;
  const Id rp = at.path;

  // Search permission on every strict ancestor. Which one refuses matters only to a
  // trace: the first from "/" that cannot be searched.
  if (!at.searchable) {
    if (!tr.on()) return Reach{Outcome::Denied, std::nullopt};
    std::optional<std::string> why;
    descend(rp, [&](Id a, size_t c) { return (why = unsearchable(a, c, true)).has_value(); });
    return finish(Outcome::Denied, tr, [&] { return *why; });
  }

  tr.add([&] {
    return describe(at.mount) + " covers " + paths_->path(rp).str() +
           (mounts_[at.mount].read_only ? " (read-only)" : "");
  });
  Reach out = decide(at, op, tr);
  out.mount = at.mount;
  return out;
}

MountTable::Reach MountTable::decide(const Place& at, FsOp op, Trace& tr) const {
  const Mount& m = mounts_[at.mount];
  if ((op == FsOp::Read || op == FsOp::Write) && m.kind == MountKind::Bind && m.dest == at.path &&
      m.device_source)
    return open_device(m, tr);
  auto denied = [&](auto&& why) { return finish(Outcome::Denied, tr, why); };
  auto rp_str = [&] { return paths_->path(at.path).str(); };
  auto mode = [&] {
    return denied([&] { return rp_str() + " has mode " + octal(*at.mode) + ": EACCES"; });
  };
  const bool absent = is_scratch(m.kind) && !at.exists;
  switch (op) {
    case FsOp::Read:
      if (m.kind == MountKind::Proc)
        return finish(Outcome::Scratch, tr, [] { return std::string("the sandbox's own procfs"); });
      if (absent) return denied([&] { return rp_str() + " does not exist: ENOENT"; });
      if (at.mode && (*at.mode & 0444) == 0) return mode();
      return succeeds(at, op, tr);
    case FsOp::Write:
      if (m.kind == MountKind::Proc)
        return denied([] { return std::string("procfs: writes out of scope, treated as denied"); });
      // Writing a path that does not exist creates it.
      if (absent) return change_entry(at, op, tr);
      if (m.read_only) return denied([] { return std::string("read-only mount: EROFS"); });
      if (at.mode && (*at.mode & 0222) == 0) return mode();
      return succeeds(at, op, tr);
    case FsOp::Create:
    case FsOp::Delete:
      return change_entry(at, op, tr);
    default:  // Seatbelt's finer operations: no mount table is asked about them
      break;
  }
  return denied([] { return std::string("unknown operation"); });
}

MountTable::Reach MountTable::open_device(const Mount& m, Trace& tr) const {
  if (!m.devices)
    return finish(Outcome::Denied, tr, [&] {
      return paths_->path(m.source).str() + " is a device node on a nodev bind: open fails EACCES";
    });
  return finish(Outcome::Scratch, tr, [&] {
    return "the device " + paths_->path(m.source).str() + " holds no host data";
  });
}

// Creating or removing a directory entry needs a writable mount and write and search
// permission on the parent; a mount point itself can be neither (EEXIST, EBUSY).
MountTable::Reach MountTable::change_entry(const Place& at, FsOp op, Trace& tr) const {
  const Mount& m = mounts_[at.mount];
  const bool scratch = is_scratch(m.kind);
  auto denied = [&](auto&& why) { return finish(Outcome::Denied, tr, why); };
  auto rp_str = [&] { return paths_->path(at.path).str(); };
  if (m.dest == at.path)
    return denied([&] {
      return rp_str() + " is a mount point: " + (op == FsOp::Delete ? "EBUSY" : "EEXIST");
    });
  if (!at.parent) return denied([&] { return rp_str() + " has no parent to change"; });
  if (m.kind == MountKind::Proc)
    return denied([] { return std::string("procfs: no new entries"); });
  if (op == FsOp::Delete && scratch && !at.exists)
    return denied([&] { return rp_str() + " does not exist: ENOENT"; });
  if (op != FsOp::Delete && scratch && at.exists)
    return denied([&] { return rp_str() + " already exists: EEXIST"; });
  if (m.read_only) return denied([] { return std::string("read-only mount: EROFS"); });
  if (at.parent_mode && (*at.parent_mode & 0222) == 0)
    return denied([&] {
      return paths_->path(*at.parent).str() + " has mode " + octal(*at.parent_mode) + ": EACCES";
    });
  return succeeds(at, op, tr);
}

MountTable::Reach MountTable::succeeds(const Place& at, FsOp op, Trace& tr) const {
  const Outcome o = mounts_[at.mount].kind == MountKind::Bind ? Outcome::Host : Outcome::Scratch;
  return finish(
      o, tr, [&] { return std::string(to_string(op)) + " succeeds"; }, at.host);
}

template <class FirstAlias>
MountTable::HostReach MountTable::of_host(Id host, const Reach& direct, FirstAlias&& first_alias) {
  if (direct.outcome == Outcome::Host && direct.host == host) return {direct, std::nullopt};
  if (const std::optional<size_t> i = first_alias()) {
    const Mount& m = mounts_[*i];
    return {Reach{Outcome::Host, host, *i}, paths_->rebase(m.dest, m.source, host)};
  }
  // Another host object is, for this one, storage it does not share.
  if (direct.outcome == Outcome::Host) return {Reach{Outcome::Scratch, std::nullopt}, std::nullopt};
  return {direct, std::nullopt};
}

// Why one search serves a class (docs/verify.md "Bounded inputs"). An alias of `host`
// through bind m is m's destination with host's path below m's source; it reaches `host`
// exactly when the bind covering it is m or one that maps as m does, which then has its
// source there (a noted place, with m listed). Leaving such a bind's part of the sandbox,
// or meeting a --chmod in it, happens at a noted place too, with m listed. Elsewhere the
// alias of a path and that of its parent lie in one bind with no mark at either: the same
// mount, search permission and modes, and so the same verdict, which reaches `host`
// exactly when the parent's reaches the parent. Two levels below a noted place (and one,
// for siblings) every alias stands as it stood, so the class's first search answers for
// all. A name spelled like a symbolic root is a class of its own, where every alias may
// change: an alias ending in it may be that root. A link made by --symlink at, above or
// below an alias bind's destination may lead an alias anywhere; then every path is
// searched. The class's first path is searched for all: it lies at most two levels below
// the place, so that an alias search does not build each alias of a deep path.
//
// The same holds of each bind alone: its alias changes only at the places that list it,
// so what a bind does for a class is what it does for the class above (the class of the
// place's parent, at the same distance) unless the place lists it. So a class asks only
// the binds listed at its place, once, and takes the rest, in replay order, from the class
// above, skipping the binds it lists: N alias binds of one source with N mounts in one of
// them ask at each mount's place the one bind listed there, and the others once, at the
// source's classes. A class is asked at its own path: its place, or one or two levels
// below it a child named "." (a name no path read from an argv or a policy has), which
// stands for every path of the class whether or not one was ever interned.
MountTable::FirstAliases MountTable::first_aliases(Id host) {
  // An alias reaches `host` only through a bind whose source holds it.
  if (!inherited(host).alias_source) return {};
  if (aliases_meet_links_) return search_aliases(host);
  AliasLevel& level = alias_level(alias_class(host));
  FirstAliases first;
  for (size_t op = 0; op < first.size(); ++op) first[op] = nth_alias(level, op, 0);
  return first;
}

MountTable::AliasClass MountTable::alias_class(Id host) {
  return fold_down(*paths_, alias_class_, host, AliasClass{}, [&](Id a, const AliasClass& above) {
    if (a == PathTable::kRoot || alias_changes_.find(a) || paths_->name(a).starts_with("${"))
      return AliasClass{a, 0};
    return AliasClass{above.first, std::min(above.second + 1, 2u)};
  });
}

MountTable::AliasLevel& MountTable::alias_level(const AliasClass& c) {
  const auto [it, added] = alias_levels_.try_emplace(c);
  AliasLevel& level = it->second;
  if (!added) return level;
  const auto [at, below] = c;
  if (paths_->name(at).starts_with("${"))
    level.listed = alias_binds_above(at);
  else if (const std::vector<size_t>* listed = alias_changes_.find(at))
    level.listed = *listed;
  std::sort(level.listed.begin(), level.listed.end());
  level.listed.erase(std::unique(level.listed.begin(), level.listed.end()), level.listed.end());
  Id own_path = at;
  for (unsigned i = 0; i < below; ++i) own_path = paths_->child(own_path, ".");
  for (size_t bind : level.listed) {
    const std::array<bool, 4> reached = reaches_through(bind, own_path);
    for (size_t op = 0; op < reached.size(); ++op)
      if (reached[op]) level.own[op].push_back(bind);
  }
  if (at != PathTable::kRoot) {
    const AliasClass up = alias_class(paths_->up(at));
    level.above = &alias_level(AliasClass{up.first, std::min(up.second + 1 + below, 2u)});
  }
  return level;
}

std::optional<size_t> MountTable::nth_alias(AliasLevel& level, size_t op, size_t n) {
  std::vector<size_t>& order = level.order[op];
  while (order.size() <= n && !level.complete[op]) {
    const std::vector<size_t>& own = level.own[op];
    const std::optional<size_t> mine = level.own_next[op] < own.size()
                                           ? std::optional<size_t>(own[level.own_next[op]])
                                           : std::nullopt;
    std::optional<size_t> inherited;
    while (level.above && (inherited = nth_alias(*level.above, op, level.above_next[op])) &&
           std::binary_search(level.listed.begin(), level.listed.end(), *inherited))
      ++level.above_next[op];
    if (!mine && !inherited) {
      level.complete[op] = true;
    } else if (mine && (!inherited || *mine < *inherited)) {
      order.push_back(*mine);
      ++level.own_next[op];
    } else {
      order.push_back(*inherited);
      ++level.above_next[op];
    }
  }
  if (n < order.size()) return order[n];
  return std::nullopt;
}

std::vector<size_t> MountTable::alias_binds_above(Id host) {
  std::vector<size_t> binds;
  for (auto src = inherited(host).alias_source; src;
       src = *src == PathTable::kRoot ? std::nullopt : inherited(paths_->up(*src)).alias_source) {
    const auto* here = aliases_by_source_.find(*src);
    binds.insert(binds.end(), here->begin(), here->end());
  }
  std::sort(binds.begin(), binds.end());
  return binds;
}

std::array<bool, 4> MountTable::reaches_through(size_t bind, Id host) {
  std::array<bool, 4> reached{};
  const Mount& m = mounts_[bind];
  const Id alias = paths_->rebase(m.dest, m.source, host);
  if (alias == host) return reached;
  for (FsOp op : kAllFsOps) {
    Trace none(false);
    const Reach r = reach(alias, op, none);
    reached[static_cast<size_t>(op)] = r.outcome == Outcome::Host && r.host == host;
  }
  return reached;
}

MountTable::FirstAliases MountTable::search_aliases(Id host) {
  FirstAliases first;
  // In replay order, so that the trace names the same bind whatever the index holds.
  for (size_t i : alias_binds_above(host)) {
    const std::array<bool, 4> reached = reaches_through(i, host);
    for (size_t o = 0; o < reached.size(); ++o)
      if (reached[o] && !first[o]) first[o] = i;
  }
  return first;
}

AccessResult MountTable::host_access(Id host, FsOp op, bool with_trace) {
  AccessResult direct = access(host, op, with_trace);
  const HostReach h = of_host(host, Reach{direct.outcome, direct.host},
                              [&] { return first_aliases(host)[static_cast<size_t>(op)]; });
  if (h.alias) {
    AccessResult r = access(*h.alias, op, with_trace);
    if (with_trace)
      r.trace.insert(r.trace.begin(), "the host object " + paths_->path(host).str() +
                                          " is also visible at " + paths_->path(*h.alias).str() +
                                          " through " + describe(h.reach.mount));
    return r;
  }
  if (with_trace && h.reach.outcome != direct.outcome)
    direct.trace.push_back("that is the host object " + paths_->path(*direct.host).str() +
                           ", not " + paths_->path(host).str());
  return AccessResult{h.reach.outcome, h.reach.host, std::move(direct.trace)};
}

// The four operations on `p`, without traces. Read and write reach the same place, and so
// do create and delete, and both pairs one place unless a link is at `p` itself: each
// place is found once, and the aliases of `p` once for the four operations.
MountTable::Reaches MountTable::reach_all(Id p) {
  Reaches out;
  Trace none(false);
  const std::optional<Id> followed_path = resolve_symlinks(p, true, none);
  const std::optional<Id> unfollowed_path = resolve_symlinks(p, false, none);
  auto place_at = [&](const std::optional<Id>& rp) -> std::optional<Place> {
    if (!rp) return std::nullopt;
    return place(*rp);
  };
  const std::optional<Place> followed = place_at(followed_path);
  const std::optional<Place> unfollowed =
      unfollowed_path == followed_path ? followed : place_at(unfollowed_path);
  std::optional<FirstAliases> aliases;
  for (FsOp op : kAllFsOps) {
    const size_t i = static_cast<size_t>(op);
    const bool follows = op == FsOp::Read || op == FsOp::Write;
    out.at_path[i] = reach(follows ? followed : unfollowed, op, none);
    out.of_host[i] = of_host(p, out.at_path[i], [&] {
                       if (!aliases) aliases = first_aliases(p);
                       return (*aliases)[i];
                     }).reach;
  }
  return out;
}

}  // namespace zpolicy::compiler
