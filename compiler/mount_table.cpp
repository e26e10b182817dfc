#include "compiler/mount_table.hpp"

#include <algorithm>

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

// Every directory from "/" down to `p`, `p` included. A symbolic root counts as one
// level below "/".
std::vector<SymbolicPath> lineage(const SymbolicPath& p) {
  std::vector<SymbolicPath> out{SymbolicPath{}};
  SymbolicPath cur{p.anchor, {}};
  if (!p.anchor.empty()) out.push_back(cur);
  for (const auto& c : p.components) {
    cur.components.push_back(c);
    out.push_back(cur);
  }
  return out;
}

std::string octal(unsigned mode) {
  std::string out;
  for (int shift = 9; shift >= 0; shift -= 3)
    out += static_cast<char>('0' + ((mode >> shift) & 7u));
  return out;
}

// Device nodes a bind may put over a file to mask it. A bind without --dev-bind is
// mounted nodev, so such a node cannot even be opened.
bool is_char_device(const SymbolicPath& p) {
  static const char* const kDevices[] = {"/dev/null",   "/dev/zero",    "/dev/full",
                                         "/dev/random", "/dev/urandom", "/dev/tty"};
  std::string s = p.str();
  return std::any_of(std::begin(kDevices), std::end(kDevices),
                     [&](const char* d) { return s == d; });
}

bool is_scratch(MountTable::MountKind k) {
  return k == MountTable::MountKind::Root || k == MountTable::MountKind::Tmpfs ||
         k == MountTable::MountKind::Dev;
}

// The path a symlink's target names, relative targets taken from the link's directory.
std::optional<SymbolicPath> link_destination(const SymbolicPath& link, const std::string& target) {
  if (target.starts_with("/") || target.starts_with("${")) return SymbolicPath::parse(target);
  auto dir = link.parent();
  if (!dir) return std::nullopt;
  SymbolicPath out = *dir;
  size_t pos = 0;
  while (pos <= target.size()) {
    size_t next = target.find('/', pos);
    if (next == std::string::npos) next = target.size();
    std::string comp = target.substr(pos, next - pos);
    if (comp == "..") {
      if (out.components.empty()) return std::nullopt;
      out.components.pop_back();
    } else if (!comp.empty() && comp != ".") {
      out.components.push_back(comp);
    }
    pos = next + 1;
  }
  return out;
}

template <class F>
AccessResult finish(Outcome o, MountTable::Trace& t, F&& why,
                    std::optional<SymbolicPath> host = std::nullopt) {
  t.add(why);
  return AccessResult{o, std::move(host), t.take()};
}

}  // namespace

std::variant<MountTable, MountTable::ReplayError> MountTable::replay(
    const std::vector<BwrapOp>& ops, const std::function<bool(size_t)>& applied) {
  MountTable t;
  Mount root;
  root.kind = MountKind::Root;
  root.mode = 0755;
  root.text = "bwrap's empty root tmpfs";
  t.mounts_.push_back(root);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].try_source && !applied(i)) continue;
    if (auto err = t.apply(ops[i])) return *err;
  }
  t.index_aliases();
  return t;
}

void MountTable::add_mount(Mount m) {
  for (auto& old : mounts_)
    if (old.visible && m.dest.contains(old.dest)) {
      old.visible = false;
      visible_at_.erase(old.dest);
    }
  mounts_.push_back(std::move(m));
  visible_at_[mounts_.back().dest] = mounts_.size() - 1;
}

void MountTable::add_node(Node n) {
  has_symlinks_ |= n.kind == Node::Kind::Symlink;
  nodes_at_[n.path].push_back(nodes_.size());
  nodes_.push_back(std::move(n));
}

void MountTable::index_aliases() {
  for (size_t i = 0; i < mounts_.size(); ++i) {
    const Mount& m = mounts_[i];
    if (m.visible && m.kind == MountKind::Bind && !(*m.source == m.dest))
      aliases_by_source_[*m.source].push_back(i);
  }
}

// The deepest visible mount whose destination holds `p`.
size_t MountTable::covering(const SymbolicPath& p) const {
  const size_t* v = visible_at_.deepest_containing(p);
  return v ? *v : 0;
}

const MountTable::Mount* MountTable::mount_at(const SymbolicPath& p) const {
  size_t c = covering(p);
  return mounts_[c].dest == p ? &mounts_[c] : nullptr;
}

const MountTable::Node* MountTable::node_at(const SymbolicPath& p, size_t mount,
                                            Node::Kind kind) const {
  auto it = nodes_at_.find(p);
  if (it == nodes_at_.end()) return nullptr;
  for (auto n = it->second.rbegin(); n != it->second.rend(); ++n)
    if (nodes_[*n].mount == mount && nodes_[*n].kind == kind) return &nodes_[*n];
  return nullptr;
}

bool MountTable::exists_in_scratch(const SymbolicPath& p, size_t mount) const {
  const Mount& m = mounts_[mount];
  // What bwrap's --dev populates: device nodes bound from the host, and directories.
  static const char* const kDevEntries[] = {"null", "zero", "full", "random", "urandom",
                                            "tty",  "ptmx", "pts",  "shm",    "console"};
  if (m.kind == MountKind::Dev && p.parent() == m.dest &&
      std::any_of(std::begin(kDevEntries), std::end(kDevEntries),
                  [&](const char* e) { return p.components.back() == e; }))
    return true;
  return m.dest == p || node_at(p, mount, Node::Kind::Dir) ||
         node_at(p, mount, Node::Kind::Symlink);
}

std::optional<unsigned> MountTable::known_mode(const SymbolicPath& p, size_t c) const {
  // The sandbox owns what bwrap creates for it (and may own host files), and chmod
  // needs ownership, not a capability: a mode binds it only where chmod fails, on a
  // read-only mount.
  if (!mounts_[c].read_only) return std::nullopt;
  if (const Node* n = node_at(p, c, Node::Kind::ModeOverride)) return n->mode;
  if (const Node* n = node_at(p, c, Node::Kind::Dir)) return n->mode;
  if (mounts_[c].dest == p) return mounts_[c].mode;
  return std::nullopt;
}

std::string MountTable::describe(size_t mount) const {
  const Mount& m = mounts_[mount];
  if (m.line == 0) return m.text;
  return "bwrap.args:" + std::to_string(m.line) + ": " + m.text;
}

// bwrap creates missing parents of every destination with mode 0755, minus the group
// and other bits that the operation's --perms clears.
void MountTable::ensure_parents(const SymbolicPath& dest, std::optional<unsigned> perms, int line) {
  unsigned mode = 0755;
  if (perms && (*perms & 0070) == 0) mode &= ~0050u;
  if (perms && (*perms & 0007) == 0) mode &= ~0005u;
  auto chain = lineage(dest);
  chain.pop_back();
  for (const auto& a : chain) {
    size_t c = covering(a);
    if (!is_scratch(mounts_[c].kind) || exists_in_scratch(a, c)) continue;
    add_node(Node{Node::Kind::Dir, a, c, mode, {}, line});
  }
}

std::optional<MountTable::ReplayError> MountTable::apply(const BwrapOp& op) {
  auto fail = [&](std::string why) {
    return ReplayError{op.line, op.text + ": " + why + "; bwrap would abort"};
  };
  switch (op.kind) {
    case BwrapOpKind::Bind:
    case BwrapOpKind::RoBind:
    case BwrapOpKind::DevBind: {
      ensure_parents(op.dest, std::nullopt, op.line);
      Mount m;
      m.kind = MountKind::Bind;
      m.dest = op.dest;
      m.source = op.source;
      m.read_only = op.kind == BwrapOpKind::RoBind;
      m.devices = op.kind == BwrapOpKind::DevBind;
      m.device_source = is_char_device(*op.source);
      m.line = op.line;
      m.text = op.text;
      add_mount(std::move(m));
      return std::nullopt;
    }
    case BwrapOpKind::Tmpfs:
    case BwrapOpKind::Dev:
    case BwrapOpKind::Proc: {
      ensure_parents(op.dest, op.perms, op.line);
      Mount m;
      m.kind = op.kind == BwrapOpKind::Tmpfs ? MountKind::Tmpfs
               : op.kind == BwrapOpKind::Dev ? MountKind::Dev
                                             : MountKind::Proc;
      m.dest = op.dest;
      m.mode = op.kind == BwrapOpKind::Proc ? 0555u : op.perms.value_or(0755u);
      m.line = op.line;
      m.text = op.text;
      add_mount(std::move(m));
      return std::nullopt;
    }
    case BwrapOpKind::RemountRo: {
      Trace ignored(false);
      auto target = resolve_symlinks(op.dest, true, ignored);
      if (!target) return fail("the path does not resolve");
      size_t c = covering(*target);
      // The kernel remounts only a mount's root; bwrap dies on anything else.
      if (mounts_[c].dest != *target)
        return fail(target->str() + " is not a mount point at this step");
      mounts_[c].read_only = true;
      return std::nullopt;
    }
    case BwrapOpKind::Dir: {
      ensure_parents(op.dest, op.perms, op.line);
      size_t c = covering(op.dest);
      const Mount& m = mounts_[c];
      if (m.kind == MountKind::Proc) return fail("cannot create a directory in procfs");
      if (!is_scratch(m.kind) || exists_in_scratch(op.dest, c)) return std::nullopt;
      if (m.read_only) return fail("mkdir on a read-only mount");
      add_node(Node{Node::Kind::Dir, op.dest, c, op.perms.value_or(0755u), {}, op.line});
      return std::nullopt;
    }
    case BwrapOpKind::Symlink: {
      ensure_parents(op.dest, std::nullopt, op.line);
      size_t c = covering(op.dest);
      if (mounts_[c].kind == MountKind::Proc) return fail("cannot create a symlink in procfs");
      if (is_scratch(mounts_[c].kind) && mounts_[c].read_only)
        return fail("symlink on a read-only mount");
      add_node(Node{Node::Kind::Symlink, op.dest, c, std::nullopt, op.link_target, op.line});
      return std::nullopt;
    }
    case BwrapOpKind::Chmod: {
      Trace ignored(false);
      auto target = resolve_symlinks(op.dest, true, ignored);
      if (!target) return fail("the path does not resolve");
      size_t c = covering(*target);
      Mount& m = mounts_[c];
      if (m.read_only || m.kind == MountKind::Proc) return fail("chmod on a read-only mount");
      if (m.dest == *target && is_scratch(m.kind)) {
        m.mode = op.perms;
        return std::nullopt;
      }
      if (is_scratch(m.kind) && !exists_in_scratch(*target, c))
        return fail(target->str() + " does not exist");
      add_node(Node{Node::Kind::ModeOverride, *target, c, op.perms, {}, op.line});
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<SymbolicPath> MountTable::resolve_symlinks(const SymbolicPath& p, bool follow_last,
                                                         Trace& trace) const {
  if (!has_symlinks_) return p;
  SymbolicPath cur = p;
  // The kernel's limit on nested links (MAXSYMLINKS); beyond it the lookup fails ELOOP.
  for (int hops = 0; hops < 40; ++hops) {
    bool replaced = false;
    for (const auto& prefix : lineage(cur)) {
      if (prefix == cur && !follow_last) break;
      const Node* link = node_at(prefix, covering(prefix), Node::Kind::Symlink);
      if (!link) continue;
      auto dest = link_destination(prefix, link->target);
      if (!dest) return std::nullopt;
      trace.add([&] {
        return "bwrap.args:" + std::to_string(link->line) + ": symlink " + prefix.str() + " -> " +
               link->target;
      });
      cur = dest->rebase(prefix, cur);
      replaced = true;
      break;
    }
    if (!replaced) return cur;
  }
  return std::nullopt;
}

AccessResult MountTable::access(const SymbolicPath& p, FsOp op, bool with_trace) const {
  Trace tr(with_trace);
  bool follow_last = op == FsOp::Read || op == FsOp::Write;
  auto rp_opt = resolve_symlinks(p, follow_last, tr);
  if (!rp_opt)
    return finish(Outcome::Denied, tr,
                  [&] { return std::string("symlink loop or dangling target: ENOENT/ELOOP"); });
  const SymbolicPath rp = *rp_opt;

  // The mounts that hold rp, shallowest first: the one covering each ancestor is the
  // deepest of them at or above it, so one index lookup serves the whole walk.
  auto holding = visible_at_.containing(rp);
  std::reverse(holding.begin(), holding.end());
  size_t next = 0, ca = 0;
  SymbolicPath a;
  const size_t levels = rp.components.size() + (rp.anchor.empty() ? 0 : 1);
  for (size_t level = 0; level < levels; ++level) {
    if (level > 0) {
      if (!rp.anchor.empty() && a.anchor.empty()) a.anchor = rp.anchor;
      else a.components.push_back(rp.components[a.components.size()]);
    }
    while (next < holding.size() && mounts_[*holding[next]].dest.contains(a)) ca = *holding[next++];
    const Mount& ma = mounts_[ca];
    if (ma.device_source && ma.dest == a)
      return finish(Outcome::Denied, tr, [&] {
        return std::string(a.str() + " is the device " + ma.source->str() + " (" + describe(ca) +
                           "): ENOTDIR");
      });
    if (is_scratch(ma.kind) && !exists_in_scratch(a, ca))
      return finish(Outcome::Denied, tr, [&] {
        return std::string(a.str() + " does not exist in " + describe(ca) + ": ENOENT");
      });
    auto mode = known_mode(a, ca);
    if (mode && (*mode & 0111) == 0)
      return finish(Outcome::Denied, tr, [&] {
        return std::string(a.str() + " has mode " + octal(*mode) + " in " + describe(ca) +
                           ": no search permission without CAP_DAC_OVERRIDE: EACCES");
      });
  }

  const size_t c = covering(rp);
  const Mount& m = mounts_[c];
  tr.add([&] { return describe(c) + " covers " + rp.str() + (m.read_only ? " (read-only)" : ""); });
  const bool mount_point = m.dest == rp;
  const bool scratch = is_scratch(m.kind);
  std::optional<SymbolicPath> host;
  if (m.kind == MountKind::Bind) host = m.source->rebase(m.dest, rp);
  const Outcome success = m.kind == MountKind::Bind ? Outcome::Host : Outcome::Scratch;
  const auto mode = known_mode(rp, c);
  const auto parent = rp.parent();
  const auto parent_mode = parent ? known_mode(*parent, covering(*parent)) : std::nullopt;

  if ((op == FsOp::Read || op == FsOp::Write) && m.kind == MountKind::Bind && mount_point &&
      m.device_source) {
    if (!m.devices)
      return finish(Outcome::Denied, tr, [&] {
        return std::string(m.source->str() +
                           " is a device node on a nodev bind: open fails EACCES");
      });
    return finish(Outcome::Scratch, tr, [&] {
      return std::string("the device " + m.source->str() + " holds no host data");
    });
  }

  // Creating or removing a directory entry needs a writable mount and write and search
  // permission on the parent; a mount point itself can be neither (EEXIST, EBUSY).
  auto entry_change = [&](const char* mount_point_errno) -> AccessResult {
    if (mount_point)
      return finish(Outcome::Denied, tr, [&] {
        return std::string(rp.str() + " is a mount point: " + mount_point_errno);
      });
    if (!parent)
      return finish(Outcome::Denied, tr,
                    [&] { return std::string(rp.str() + " has no parent to change"); });
    if (m.kind == MountKind::Proc)
      return finish(Outcome::Denied, tr, [&] { return std::string("procfs: no new entries"); });
    if (op == FsOp::Delete && scratch && !exists_in_scratch(rp, c))
      return finish(Outcome::Denied, tr,
                    [&] { return std::string(rp.str() + " does not exist: ENOENT"); });
    if (op != FsOp::Delete && scratch && exists_in_scratch(rp, c))
      return finish(Outcome::Denied, tr,
                    [&] { return std::string(rp.str() + " already exists: EEXIST"); });
    if (m.read_only)
      return finish(Outcome::Denied, tr, [&] { return std::string("read-only mount: EROFS"); });
    if (parent_mode && (*parent_mode & 0222) == 0)
      return finish(Outcome::Denied, tr, [&] {
        return std::string(parent->str() + " has mode " + octal(*parent_mode) + ": EACCES");
      });
    return finish(
        success, tr, [&] { return std::string(std::string(to_string(op)) + " succeeds"); }, host);
  };

  switch (op) {
    case FsOp::Read:
      if (m.kind == MountKind::Proc)
        return finish(Outcome::Scratch, tr,
                      [&] { return std::string("the sandbox's own procfs"); });
      if (scratch && !exists_in_scratch(rp, c))
        return finish(Outcome::Denied, tr,
                      [&] { return std::string(rp.str() + " does not exist: ENOENT"); });
      if (mode && (*mode & 0444) == 0)
        return finish(Outcome::Denied, tr, [&] {
          return std::string(rp.str() + " has mode " + octal(*mode) + ": EACCES");
        });
      return finish(
          success, tr, [&] { return std::string("read succeeds"); }, host);
    case FsOp::Write:
      if (m.kind == MountKind::Proc)
        return finish(Outcome::Denied, tr, [&] {
          return std::string("procfs: writes out of scope, treated as denied");
        });
      if (scratch && !exists_in_scratch(rp, c)) return entry_change("EEXIST");
      if (m.read_only)
        return finish(Outcome::Denied, tr, [&] { return std::string("read-only mount: EROFS"); });
      if (mode && (*mode & 0222) == 0)
        return finish(Outcome::Denied, tr, [&] {
          return std::string(rp.str() + " has mode " + octal(*mode) + ": EACCES");
        });
      return finish(
          success, tr, [&] { return std::string("write succeeds"); }, host);
    case FsOp::Create:
      return entry_change("EEXIST");
    case FsOp::Delete:
      return entry_change("EBUSY");
  }
  return finish(Outcome::Denied, tr, [&] { return std::string("unknown operation"); });
}

AccessResult MountTable::host_access(const SymbolicPath& host, FsOp op, bool with_trace) const {
  AccessResult direct = access(host, op, with_trace);
  if (direct.outcome == Outcome::Host && direct.host_path == host) return direct;
  std::vector<size_t> candidates;
  for (const auto* binds : aliases_by_source_.containing(host))
    candidates.insert(candidates.end(), binds->begin(), binds->end());
  // In replay order, so that the trace names the same bind whatever the index holds.
  std::sort(candidates.begin(), candidates.end());
  for (size_t i : candidates) {
    const Mount& m = mounts_[i];
    SymbolicPath alias = m.dest.rebase(*m.source, host);
    if (alias == host) continue;
    AccessResult r = access(alias, op, with_trace);
    if (r.outcome == Outcome::Host && r.host_path == host) {
      if (with_trace)
        r.trace.insert(r.trace.begin(), "the host object " + host.str() + " is also visible at " +
                                            alias.str() + " through " + describe(i));
      return r;
    }
  }
  if (direct.outcome == Outcome::Host) {
    if (with_trace)
      direct.trace.push_back("that is the host object " + direct.host_path->str() + ", not " +
                             host.str());
    direct.outcome = Outcome::Scratch;
    direct.host_path.reset();
  }
  return direct;
}

}  // namespace zpolicy::compiler
