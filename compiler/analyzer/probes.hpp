#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/analyzer/intent.hpp"

namespace zpolicy::compiler {

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
std::vector<Probe> generate_probes(Intent& intent);
// The same probes in the same order, each handed to `visit` as it is made instead of
// kept. The probe lives only for the call; `visit` may intern paths in intent.paths().
void for_each_probe(Intent& intent, const std::function<void(const Probe&)>& visit);

}  // namespace zpolicy::compiler
