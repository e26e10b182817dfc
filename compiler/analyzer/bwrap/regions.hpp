#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/path_table.hpp"
#include "compiler/analyzer/probes.hpp"

namespace zpolicy::compiler {

// One cell of the common refinement of the mount table an argv builds and the policy's
// intent (docs/verify.md "The region proof"): a path that the argv or the policy names,
// an ancestor of one, or a path below one of those that neither names, which stands
// for every such path.
struct Region {
  enum class Kind { Named, Ancestor, Below };
  PathTable::Id id = PathTable::kRoot;
  Kind kind = Kind::Named;
  PathTable::Id named = PathTable::kRoot;  // the named path it derives from
  // Who names it: a bwrap.args line and its option, or (line 0) the policy.
  int line = 0;
  std::string_view text;
  // "region /etc, named by bwrap.args:31: --bind /etc /etc"
  std::string describe(const PathTable& paths) const;
};

// Every region, each once: the named paths in the argv's order then the policy's roots
// and `more` (paths the resolved policy names outside its roots), each followed by its
// new ancestors, then one unnamed path below each of them. The paths are interned in the
// intent's table, which the argv shares.
void for_each_region(const BwrapArgv& argv, const Intent& intent,
                     const std::vector<PathTable::Id>& more,
                     const std::function<void(const Region&)>& visit);

}  // namespace zpolicy::compiler
