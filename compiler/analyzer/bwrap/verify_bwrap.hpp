#pragma once

#include <string_view>
#include <vector>

#include "compiler/analyzer/finding.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// Checks a `bwrap.args` artifact against the policy it was compiled from, without
// looking at how it was emitted: the argv is parsed and replayed into a mount table
// (compiler/mount_table.hpp), every probe of compiler/probes.hpp is evaluated on it
// and compared with the IR's intent, and the namespace and lockdown options the
// design requires for a confined mode are checked. An empty result means verified.
// Under danger-full-access nothing is confined and nothing is checked.
std::vector<Finding> verify_bwrap(const ir::Resolved& intent, std::string_view bwrap_args_text);

}  // namespace zpolicy::compiler
