#include "compiler/analyzer/intent.hpp"

#include <algorithm>

namespace zpolicy::compiler {

const char* to_string(Expect e) {
  switch (e) {
    case Expect::Allow:
      return "allowed on the host object";
    case Expect::Deny:
      return "no access to the host object";
    case Expect::DenyStrict:
      return "denied outright (deny root: neither readable nor writable)";
    case Expect::Either:
      return "either answer passes verification";
  }
  return "?";
}

namespace {

using Root = Intent::Root;

ir::SourceLoc builtin_loc() { return ir::SourceLoc{ir::kBuiltinFile, 0, 0}; }

// What a confined macOS process must be able to read to start at all, whatever its read
// roots (docs/macos.md, "Platform read defaults"): these paths themselves, and everything
// in these trees.
constexpr std::array<std::string_view, 4> kRuntimePaths = {"/", "/etc", "/tmp", "/var"};
constexpr std::array<std::string_view, 13> kRuntimeTrees = {
    "/System",       "/bin",           "/sbin",          "/usr/bin",
    "/usr/sbin",     "/usr/lib",       "/usr/libexec",   "/usr/share",
    "/private/etc",  "/Library/Apple", "/Library/Preferences", "/private/var/db/timezone",
    "/dev"};
// The devices every confined macOS process may write (docs/macos.md, "Process
// primitives"): the sinks, the pty master, and its own descriptors (all of /dev/fd).
constexpr std::array<std::string_view, 3> kDevices = {"/dev/null", "/dev/zero", "/dev/ptmx"};
constexpr std::string_view kDescriptors = "/dev/fd";

// The IR paths `in` as roots; those that are neither absolute nor ${VAR}-anchored go to
// `unparsable` instead.
std::vector<Root> load_roots(PathTable& paths, const std::vector<ir::ResolvedPath>& in,
                             std::vector<ir::ResolvedPath>& unparsable) {
  std::vector<Root> out;
  for (const auto& rp : in) {
    if (auto id = paths.parse(rp.path))
      out.push_back(Root{*id, rp.kind, rp.loc});
    else
      unparsable.push_back(rp);
  }
  return out;
}

// Each of `roots` at its path in `index` (the first, where several share one).
template <class Index>
void index_roots(const std::vector<Root>& roots, Index& index) {
  for (const auto& root : roots) index.insert(root.id, &root);
}

// Every strict ancestor of each of `guarded` into `out`, with the first below it.
template <class Index>
void index_ancestors(const PathTable& paths, const std::vector<Root>& guarded, Index& out) {
  for (const auto& g : guarded) {
    for (auto a = paths.parent(g.id); a; a = paths.parent(*a)) out.insert(*a, &g);
    out.insert(PathTable::kRoot, &g);  // "/" holds a symbolic root too
  }
}

// The first of `roots` at each path, as its place plus one, into the `kind` of `at`.
template <class NearMap, class Member>
void gather(const std::vector<Root>& roots, NearMap& at, Member kind) {
  for (std::uint32_t i = 0; i < roots.size(); ++i)
    if (!(at[roots[i].id].*kind)) at[roots[i].id].*kind = i + 1;
}

}  // namespace

Intent::Intent(const ir::Resolved& r, std::shared_ptr<PathTable> paths, Platform platform)
    : paths_(paths ? std::move(paths) : std::make_shared<PathTable>(path_spelling(r))),
      platform_(platform),
      mode_(r.mode),
      // A bwrap sandbox mounts its own /tmp; a Seatbelt profile has no such thing.
      private_tmp_(r.private_tmp && platform == Platform::Linux),
      tmp_(*paths_->parse("/tmp")),
      read_index_(*paths_),
      write_index_(*paths_),
      pin_index_(*paths_),
      protect_ancestors_(*paths_),
      deny_ancestors_(*paths_),
      at_(*paths_),
      near_(*paths_) {
  read_ = load_roots(*paths_, r.read, unparsable_);
  write_ = load_roots(*paths_, r.write, unparsable_);
  protect_ = load_roots(*paths_, r.protect, unparsable_);
  deny_ = load_roots(*paths_, r.deny, unparsable_);
  pin_ = load_roots(*paths_, r.pin, unparsable_);
  // Protected and deny roots need no index of their own: near() finds them in at_.
  index_roots(read_, read_index_);
  index_roots(write_, write_index_);
  index_roots(pin_, pin_index_);
  index_ancestors(*paths_, protect_, protect_ancestors_);
  index_ancestors(*paths_, deny_, deny_ancestors_);
  gather(deny_, at_, &Near::deny);
  gather(write_, at_, &Near::write);
  gather(read_, at_, &Near::read);
  gather(protect_, at_, &Near::protect);
  at_[tmp_].tmp = true;
  if (!macos()) at_[*paths_->parse("/dev")].own_dev = true;
  if (macos()) {
    for (auto p : kRuntimePaths) runtime_paths_.push_back(*paths_->parse(p));
    for (auto p : kRuntimeTrees) at_[*paths_->parse(p)].runtime_tree = true;
    for (auto p : kDevices) devices_.push_back(*paths_->parse(p));
    at_[*paths_->parse(kDescriptors)].descriptors = true;
    ptmx_ = *paths_->parse("/dev/ptmx");
  }
}

std::vector<std::string_view> Intent::platform_paths(Platform platform) {
  std::vector<std::string_view> out;
  if (platform != Platform::Macos) return out;
  for (std::string_view p : kRuntimePaths) out.push_back(p);
  for (std::string_view p : kRuntimeTrees) out.push_back(p);
  for (std::string_view p : kDevices) out.push_back(p);
  out.push_back(kDescriptors);
  return out;
}

bool Intent::is(const std::vector<Id>& ids, Id p) const {
  return std::find(ids.begin(), ids.end(), p) != ids.end();
}

// A protected or deny path strictly below `p` and inside a writable root: renaming `p`
// would carry it away and let the old name be recreated unprotected.
const Root* Intent::guarded_below(const Index& ancestors, Id p, const Near& near) const {
  const Root* const* g = ancestors.find(p);
  return g && near.write ? *g : nullptr;
}

// The deepest root of each kind at or above `p`.
Intent::Near Intent::near(Id p) {
  return fold_down(*paths_, near_, p, Near{}, [&](Id a, Near n) {
    if (const Near* own = at_.find(a)) {
      if (own->deny) n.deny = own->deny;
      if (own->write) n.write = own->write;
      if (own->read) n.read = own->read;
      if (own->protect) n.protect = own->protect;
      n.tmp = n.tmp || own->tmp;
      n.runtime_tree = n.runtime_tree || own->runtime_tree;
      n.descriptors = n.descriptors || own->descriptors;
      n.own_dev = n.own_dev || own->own_dev;
    }
    return n;
  });
}

Intent::Decision Intent::read_rule(Id p, const Near& near) const {
  if (near.write) return {Expect::Allow, Why::UnderWritable, root_at(write_, near.write)};
  if (in_private_tmp(near)) return {Expect::Deny, Why::PrivateTmp};
  if (near.read) return {Expect::Allow, Why::UnderReadable, root_at(read_, near.read)};
  // A macOS process cannot start without its runtime files, which the profile may
  // therefore grant whatever the read roots.
  if (macos() && (near.runtime_tree || is(runtime_paths_, p)))
    return {Expect::Either, Why::PlatformRuntime};
  return {Expect::Deny, Why::NoReadableRoot};
}

// `op` is Write or Attributes; Link and Ioctl ask it too.
Intent::Decision Intent::write_rule(Id p, FsOp op, const Near& near) const {
  // Every macOS process may write the data of the sinks, the pty master and its own
  // descriptors, whatever the mode.
  if (macos() && op == FsOp::Write && !near.protect && (near.descriptors || is(devices_, p)))
    return {Expect::Either, Why::PlatformDevice};
  if (mode_ != ir::Mode::WorkspaceWrite) return {Expect::Deny, Why::ModeWritesNothing};
  if (near.protect) return {Expect::Deny, Why::UnderProtected, root_at(protect_, near.protect)};
  if (near.write) {
    // Seatbelt has no rename of its own: a profile keeps a protected path in place by
    // denying every write of the directories above it (and a `subpath` rule may or may
    // not include the writable root itself, docs/macos.md "Precedence models").
    if (const Root* g = macos() ? guarded_below(protect_ancestors_, p, near) : nullptr)
      return {Expect::Either, Why::AboveProtected, g};
    if (const Root* g = macos() ? guarded_below(deny_ancestors_, p, near) : nullptr)
      return {Expect::Either, Why::AboveDeny, g};
    if (macos() && write_index_.find(p)) return {Expect::Either, Why::WritableRootItself};
    return {Expect::Allow, Why::UnderWritable, root_at(write_, near.write)};
  }
  if (in_private_tmp(near)) return {Expect::Deny, Why::PrivateTmp};
  if (near.read) return {Expect::Deny, Why::ReadableNotWritable, root_at(read_, near.read)};
  return {Expect::Deny, Why::UnderNoRoot};
}

Intent::Decision Intent::entry_rule(Id p, const Near& near) {
  if (mode_ != ir::Mode::WorkspaceWrite) return {Expect::Deny, Why::ModeWritesNothing};
  if (near.protect) return {Expect::Deny, Why::ProtectedEntry, root_at(protect_, near.protect)};
  // Every root of a bwrap sandbox is a mount point, which cannot be created, removed or
  // renamed; a Seatbelt profile has no mount points.
  if (!macos()) {
    const Root* const* r = write_index_.find(p);
    if (!r) r = read_index_.find(p);
    if (!r) r = pin_index_.find(p);
    if (r) return {Expect::Deny, Why::PolicyRoot, *r};
  }
  if (const Root* g = guarded_below(protect_ancestors_, p, near))
    return {Expect::Deny, Why::CarriesProtected, g};
  if (const Root* g = guarded_below(deny_ancestors_, p, near))
    return {Expect::Deny, Why::CarriesDeny, g};
  if (macos() && write_index_.find(p)) return {Expect::Either, Why::WritableRootItself};
  auto parent = paths_->parent(p);
  if (!parent) return {Expect::Deny, Why::NoParent};
  const Near around_parent = this->near(*parent);
  if (around_parent.write)
    return {Expect::Allow, Why::ParentWritable, root_at(write_, around_parent.write)};
  if (in_private_tmp(near)) return {Expect::Deny, Why::PrivateTmp};
  if (around_parent.read)
    return {Expect::Deny, Why::ParentReadableNotWritable, root_at(read_, around_parent.read)};
  return {Expect::Deny, Why::ParentUnderNoRoot};
}

Intent::Decision Intent::decide(Id p, FsOp op) { return decide(p, op, near(p)); }

// `n` is near(p).
Intent::Decision Intent::decide(Id p, FsOp op, const Near& n) {
  if (!confined()) return {Expect::Allow, Why::NotConfined};
  // Mapping code needs a descriptor open for reading, which the read rules decide.
  if (op == FsOp::Map) return {Expect::Either, Why::MapJudgedAtOpen};
  if (n.deny) return {Expect::DenyStrict, Why::UnderDeny, root_at(deny_, n.deny)};
  // A bwrap sandbox has a /dev of its own (DESIGN.md): the host's devices are not there to
  // be read, and bwrap's are neither required nor refused by a policy. Changes stay
  // refused: no host device may become writable.
  if (n.own_dev && op == FsOp::Read) return {Expect::Either, Why::SandboxDev};
  switch (op) {
    case FsOp::Read:
      return read_rule(p, n);
    case FsOp::Write:
    case FsOp::Attributes:
      return write_rule(p, op, n);
    case FsOp::Create:
    case FsOp::Delete:
      return entry_rule(p, n);
    case FsOp::Link:
    case FsOp::Ioctl: {
      // A hard link or an ioctl inside a writable root is the file's own business
      // (protected paths and everything outside stay refused); a macOS process may
      // ioctl its pty master.
      if (op == FsOp::Ioctl && p == ptmx_ && macos() && !n.protect)
        return {Expect::Either, Why::PlatformDevice};
      const Decision d = write_rule(p, FsOp::Attributes, n);
      return d.expect == Expect::Deny ? d : Decision{Expect::Either, Why::InsideWritable};
    }
    case FsOp::Exec:
      if (n.read) return {Expect::Allow, Why::UnderReadable, root_at(read_, n.read)};
      return {Expect::Either, Why::ExecOutsideReadable};
    case FsOp::Map:
      break;
  }
  return {Expect::Either, Why::MapJudgedAtOpen};
}

std::array<Expect, 4> Intent::verdicts(Id p) {
  const Near n = near(p);
  // Creating and deleting an entry are decided by one rule (entry_rule), asked once.
  const Expect entry = decide(p, FsOp::Create, n).expect;
  return {decide(p, FsOp::Read, n).expect, decide(p, FsOp::Write, n).expect, entry, entry};
}

std::array<Expect, kFsOpCount> Intent::every_verdict(Id p) {
  const Near n = near(p);
  std::array<Expect, kFsOpCount> out;
  for (size_t op = 0; op < kFsOpCount; ++op) out[op] = decide(p, static_cast<FsOp>(op), n).expect;
  return out;
}

Expectation Intent::expect(const SymbolicPath& p, FsOp op) {
  return expect(paths_->intern(p), op);
}

namespace {

// Why each decision is made, by Intent::Why: {path}, {root} and {parent} stand for the
// path asked about, the root that decides and the path's parent; {mode} and {op} for the
// policy's mode and the operation asked.
constexpr std::array<std::string_view, 27> kReasons = {
    "danger-full-access: no confinement",
    "under deny root {root}",
    "mode {mode} writes nothing",
    "under protected path {root}",
    "under writable root {root}",
    "/tmp is private to the sandbox",
    "under readable root {root}",
    "under no readable root",
    "{path} is readable through {root} but under no writable root",
    "{path} is under no root",
    "protected path {root} cannot be created, deleted or renamed",
    "{path} is a root of the policy, fixed for the sandbox's life",
    "renaming {path} would carry protected {root} away",
    "renaming {path} would carry deny root {root} away",
    "{path} has no known parent directory",
    "parent is under writable root {root}",
    "the parent {parent} is readable through {root} but under no writable root",
    "the parent {parent} is under no root",
    "/dev is the sandbox's own",
    "platform runtime path",
    "platform device",
    "the writable root itself",
    "directory above protected path {root}",
    "directory above deny root {root}",
    "{op} inside a writable root",
    "mapping an open file: its opening is what is judged",
    "outside every read root",
};

// `text` with each {NAME} replaced by the value `value(NAME)` gives.
template <class Value>
std::string fill(std::string_view text, Value&& value) {
  std::string out;
  for (size_t open; (open = text.find('{')) != std::string_view::npos;) {
    const size_t close = text.find('}', open);
    out.append(text.substr(0, open)).append(value(text.substr(open + 1, close - open - 1)));
    text.remove_prefix(close + 1);
  }
  return out.append(text);
}

}  // namespace

Expectation Intent::expect(Id id, FsOp op) {
  static_assert(kReasons.size() == static_cast<size_t>(Why::ExecOutsideReadable) + 1);
  const Decision d = decide(id, op);
  const std::string reason = fill(kReasons[static_cast<size_t>(d.why)], [&](std::string_view name) {
    if (name == "path") return paths_->path(id).str();
    if (name == "root") return d.root ? paths_->path(d.root->id).str() : std::string();
    if (name == "parent") {
      const auto parent = paths_->parent(id);
      return parent ? paths_->path(*parent).str() : std::string();
    }
    if (name == "mode") return std::string(ir::to_string(mode_));
    return std::string(op == FsOp::Link ? "hard link" : "ioctl");
  });
  // Under no root at all, the policy's read list is the line that leaves the path out.
  const bool outside =
      d.why == Why::NoReadableRoot || d.why == Why::UnderNoRoot || d.why == Why::ParentUnderNoRoot;
  const ir::SourceLoc rule = d.root                      ? d.root->loc
                             : outside && !read_.empty() ? read_.front().loc
                                                         : builtin_loc();
  return Expectation{d.expect, rule, reason};
}

}  // namespace zpolicy::compiler
