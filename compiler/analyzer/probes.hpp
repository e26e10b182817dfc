#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/analyzer/fs_op.hpp"
#include "compiler/analyzer/path_table.hpp"
#include "compiler/analyzer/symbolic_path.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// What the policy means for one operation on one host path.
enum class Expect {
  Allow,       // must succeed on the host object itself
  Deny,        // must not reach the host object (failing, or landing in sandbox scratch)
  DenyStrict,  // must fail outright: a deny root is neither readable nor writable
};
const char* to_string(Expect e);

struct Expectation {
  Expect expect = Expect::Deny;
  ir::SourceLoc rule;  // the policy line that decides; "<builtin>" for the defaults
  std::string reason;
};

// The IR's intent, answered for any path and operation (DESIGN.md "Modes" and
// "Security invariants"). Independent of every artifact.
class Intent {
 public:
  // Paths are interned in `paths`, which a verifier shares with the mount tables it
  // checks so that both speak of the same ids.
  explicit Intent(const ir::Resolved& resolved,
                  std::shared_ptr<PathTable> paths = std::make_shared<PathTable>());

  // The decision with the rule that makes it and why, for findings and `explain`.
  Expectation expect(const SymbolicPath& path, FsOp op) const;
  // The same decisions alone, for every operation, indexed by FsOp: what a verifier asks
  // for every probe, without building the text it needs only for the few that fail.
  std::array<Expect, 4> verdicts(PathTable::Id path) const;
  PathTable& paths() const { return *paths_; }
  // IR paths that are neither absolute nor ${VAR}-anchored; they cannot be verified.
  const std::vector<ir::ResolvedPath>& unparsable() const { return unparsable_; }

  // What the verifier needs of an IR path: not its text, which `id` stands for.
  struct Root {
    PathTable::Id id = PathTable::kRoot;  // in paths()
    ir::HostKind kind = ir::HostKind::Unknown;
    // The policy line that asked for it, which Intent::loc() spells out; the file is
    // an index into the few files the policy came from.
    std::uint32_t file = 0;
    int line = 0;
    int col = 0;
  };
  ir::SourceLoc loc(const Root& r) const { return ir::SourceLoc{files_[r.file], r.line, r.col}; }
  const std::vector<Root>& read() const { return read_; }
  const std::vector<Root>& write() const { return write_; }
  const std::vector<Root>& protect() const { return protect_; }
  const std::vector<Root>& deny() const { return deny_; }
  const std::vector<Root>& pin() const { return pin_; }
  bool confined() const { return ir::is_confined(mode_); }

 private:
  enum class Why {
    NotConfined,
    UnderDeny,
    ModeWritesNothing,
    UnderProtected,
    UnderWritable,
    PrivateTmp,
    UnderReadable,
    NoReadableRoot,
    ReadableNotWritable,  // `root` is the readable root
    UnderNoRoot,
    ProtectedEntry,
    PolicyRoot,
    CarriesProtected,
    CarriesDeny,
    NoParent,
    ParentWritable,
    ParentReadableNotWritable,
    ParentUnderNoRoot,
    UnknownOp,
  };
  struct Decision {
    Expect expect;
    Why why;
    const Root* root = nullptr;  // the root whose rule decides; none for the built-ins
  };
  using Id = PathTable::Id;
  using Index = PathMap<const Root*>;
  // The deepest root of each kind that contains one path: its place in its list plus
  // one, 0 for none.
  struct Near {
    std::uint32_t deny = 0;
    std::uint32_t write = 0;
    std::uint32_t read = 0;
    std::uint32_t protect = 0;
    bool tmp = false;  // at or below /tmp
  };
  // The root a Near names in `roots`, or null.
  static const Root* root_at(const std::vector<Root>& roots, std::uint32_t n) {
    return n ? &roots[n - 1] : nullptr;
  }

  Near near(Id p) const;
  Decision decide(Id p, FsOp op, const Near& near) const;
  Decision read_rule(const Near& near) const;
  Decision write_rule(const Near& near) const;
  Decision entry_rule(Id p, const Near& near) const;
  const Root* guarded_below(const Index& ancestors, Id p, const Near& near) const;
  bool in_private_tmp(const Near& near) const { return private_tmp_ && near.tmp; }

  std::shared_ptr<PathTable> paths_;
  ir::Mode mode_;
  bool private_tmp_;
  Id tmp_;
  std::vector<Root> read_, write_, protect_, deny_, pin_;
  Index read_index_, write_index_, pin_index_;
  // Every strict ancestor of a protected (or deny) path, with the first such path.
  Index protect_ancestors_, deny_ancestors_;
  // The first root of each kind (read, write, protect, deny) loaded at each path, in one
  // map so that near() looks a path up once instead of once per kind.
  PathMap<Near> at_;
  // near() of every path asked about so far, and of its ancestors: a verifier asks about
  // every directory of a deep path, and a walk to "/" for each would be quadratic.
  mutable PathMap<Near> near_;
  std::vector<ir::ResolvedPath> unparsable_;
  std::vector<std::string> files_;  // the files of the roots' policy lines
};

// A path the verifier asks about, with the IR's answer for every operation.
struct Probe {
  // How the path relates to the root it was derived from.
  enum class Relation { Self, Child, Grandchild, Parent, PrefixSibling, Between, Outside, InTmp };
  PathTable::Id id = PathTable::kRoot;
  const PathTable* paths = nullptr;  // the intent's
  SymbolicPath path() const { return paths->path(id); }
  Relation relation = Relation::Outside;
  const char* root_kind = "";              // "readable root", "protected path", ...
  const Intent::Root* root = nullptr;      // the root it was derived from
  const Intent::Root* writable = nullptr;  // for Between: the writable root above it
  std::array<Expect, 4> expected{};        // indexed by FsOp
  Expect at(FsOp op) const { return expected[static_cast<size_t>(op)]; }
  std::string role() const;  // why the path was chosen: "child of protected path ..."
};

// Every root, protected, deny and pin path of the IR, with their parents, children
// (`p/zpolicy-probe`), a sibling sharing the name as a prefix (`.git` -> `.gitx`), the
// directories between a writable root and each protected path, a path outside every
// root, and a path in the private /tmp. No duplicates; in the order of the IR's lists (a
// verifier sorts its findings, with PathTable::less, so that its output does not depend
// on this order). The probes point into `intent`, which must outlive them.
std::vector<Probe> generate_probes(const Intent& intent);
// The same probes in the same order, each handed to `visit` as it is made instead of
// kept. The probe lives only for the call; `visit` may intern paths in intent.paths().
void for_each_probe(const Intent& intent, const std::function<void(const Probe&)>& visit);

}  // namespace zpolicy::compiler
