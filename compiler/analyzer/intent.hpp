#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
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
  Either,      // the policy asks neither: both answers pass verification
};
const char* to_string(Expect e);

struct Expectation {
  Expect expect = Expect::Deny;
  ir::SourceLoc rule;  // the policy line that decides; "<builtin>" for the defaults
  std::string reason;
};

// The platform whose sandbox the intent is read for. The policy means the same on both;
// what differs is stated in Intent::decide(), each difference with its reason: a bwrap
// root is a mount point and /tmp is private, a Seatbelt profile must let a process read
// the platform's runtime files and cannot tell a writable root from its contents.
enum class Platform { Linux, Macos };

// How many operations FsOp has: the size of an array indexed by FsOp.
inline constexpr size_t kFsOpCount = static_cast<size_t>(FsOp::Exec) + 1;

// How the artifacts of `resolved` spell paths: a bound policy's are host paths.
inline PathSpelling path_spelling(const ir::Resolved& resolved) {
  return resolved.portable ? PathSpelling::Portable : PathSpelling::Bound;
}

// The IR's intent, answered for any path and operation (DESIGN.md "Modes" and
// "Security invariants", docs/verify.md "Intent"): the one meaning of the policy that
// the bwrap verifier, the SBPL verifier, `explain` and `diff` all ask. Independent of
// every artifact.
class Intent {
 public:
  // Paths are interned in `paths`, which a verifier shares with the mount tables it
  // checks so that both speak of the same ids; a new table of path_spelling(resolved)
  // when none is given. Given a table of the other spelling, each path the two spellings
  // read differently is one that spelling refuses: unparsable(), never misread.
  explicit Intent(const ir::Resolved& resolved, std::shared_ptr<PathTable> paths = nullptr,
                  Platform platform = Platform::Linux);

  // The decision with the rule that makes it and why, for findings and `explain`. The
  // questions are not const: each keeps what it finds about the path's ancestors (near()).
  Expectation expect(const SymbolicPath& path, FsOp op);
  Expectation expect(PathTable::Id path, FsOp op);
  // The decisions alone: what a verifier asks for every probe, without building the
  // text it needs only for the few that fail. The roots around the path are found once
  // for all the operations. Those of kAllFsOps, indexed by FsOp:
  std::array<Expect, 4> verdicts(PathTable::Id path);
  // Those of every operation, indexed by FsOp.
  std::array<Expect, kFsOpCount> every_verdict(PathTable::Id path);
  PathTable& paths() const { return *paths_; }
  // IR paths that are neither absolute nor ${VAR}-anchored (absolute, when bound); they
  // cannot be verified.
  const std::vector<ir::ResolvedPath>& unparsable() const { return unparsable_; }

  // What the verifier needs of an IR path: not its text, which `id` stands for.
  struct Root {
    PathTable::Id id = PathTable::kRoot;  // in paths()
    ir::HostKind kind = ir::HostKind::Unknown;
    ir::SourceLoc loc;  // the policy line that asked for it
  };
  const std::vector<Root>& read() const { return read_; }
  const std::vector<Root>& write() const { return write_; }
  const std::vector<Root>& protect() const { return protect_; }
  const std::vector<Root>& deny() const { return deny_; }
  const std::vector<Root>& pin() const { return pin_; }
  bool confined() const { return ir::is_confined(mode_); }
  // The paths at which the answer changes for the platform's reasons alone (macOS: the
  // runtime files and devices a process needs); none on Linux. A proof over regions
  // names them as it names the policy's paths.
  static std::vector<std::string_view> platform_paths(Platform platform);

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
    // The platform's own answers.
    SandboxDev,
    PlatformRuntime,
    PlatformDevice,
    WritableRootItself,
    AboveProtected,
    AboveDeny,
    InsideWritable,
    MapJudgedAtOpen,
    ExecOutsideReadable,
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
    bool tmp = false;           // at or below /tmp
    bool runtime_tree = false;  // at or below a platform runtime tree (macOS)
    bool descriptors = false;   // at or below /dev/fd (macOS)
    bool own_dev = false;       // at or below /dev, the sandbox's own (Linux)
  };
  // The root a Near names in `roots`, or null.
  static const Root* root_at(const std::vector<Root>& roots, std::uint32_t n) {
    return n ? &roots[n - 1] : nullptr;
  }

  Near near(Id p);
  Decision decide(Id p, FsOp op);
  Decision decide(Id p, FsOp op, const Near& near);
  Decision read_rule(Id p, const Near& near) const;
  Decision write_rule(Id p, FsOp op, const Near& near) const;
  Decision entry_rule(Id p, const Near& near);
  const Root* guarded_below(const Index& ancestors, Id p, const Near& near) const;
  bool in_private_tmp(const Near& near) const { return private_tmp_ && near.tmp; }
  bool macos() const { return platform_ == Platform::Macos; }
  bool is(const std::vector<Id>& ids, Id p) const;

  std::shared_ptr<PathTable> paths_;
  Platform platform_;
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
  PathMap<Near> near_;
  // macOS: the runtime paths readable by themselves, the devices whose data every
  // process may write, and /dev/ptmx, which it may also ioctl.
  std::vector<Id> runtime_paths_, devices_;
  Id ptmx_ = PathTable::kRoot;
  std::vector<ir::ResolvedPath> unparsable_;
};

}  // namespace zpolicy::compiler
