#pragma once

#include <array>
#include <string>
#include <vector>

#include "compiler/fs_op.hpp"
#include "compiler/symbolic_path.hpp"
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

struct Probe {
  SymbolicPath path;
  std::string role;  // why the path was chosen: "deny root", "child of protected ..."
  std::array<Expectation, 4> expected;  // indexed by FsOp
  const Expectation& at(FsOp op) const { return expected[static_cast<size_t>(op)]; }
};

// The IR's intent, answered for any path and operation (DESIGN.md "Modes" and
// "Security invariants"). Independent of every artifact.
class Intent {
 public:
  explicit Intent(const ir::Resolved& resolved);

  Expectation expect(const SymbolicPath& path, FsOp op) const;
  // IR paths that are neither absolute nor ${VAR}-anchored; they cannot be verified.
  const std::vector<ir::ResolvedPath>& unparsable() const { return unparsable_; }

  struct Root {
    SymbolicPath path;
    ir::ResolvedPath origin;
  };
  const std::vector<Root>& read() const { return read_; }
  const std::vector<Root>& write() const { return write_; }
  const std::vector<Root>& protect() const { return protect_; }
  const std::vector<Root>& deny() const { return deny_; }
  const std::vector<Root>& pin() const { return pin_; }
  bool confined() const { return ir::is_confined(mode_); }

 private:
  Expectation read_rule(const SymbolicPath& p) const;
  Expectation write_rule(const SymbolicPath& p) const;
  Expectation entry_rule(const SymbolicPath& p, FsOp op) const;
  Expectation outside_writable(const SymbolicPath& p, std::string what) const;

  ir::Mode mode_;
  bool private_tmp_;
  std::vector<Root> read_, write_, protect_, deny_, pin_;
  std::vector<ir::ResolvedPath> unparsable_;
};

// Every root, protected, deny and pin path of the IR, with their parents, children
// (`p/zpolicy-probe`), a sibling sharing the name as a prefix (`.git` -> `.gitx`), the
// directories between a writable root and each protected path, a path outside every
// root, and a path in the private /tmp. Sorted by path, no duplicates.
std::vector<Probe> generate_probes(const Intent& intent);

}  // namespace zpolicy::compiler
