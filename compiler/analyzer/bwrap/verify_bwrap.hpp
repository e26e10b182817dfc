#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/diagnostic.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// Checks a `bwrap.args` artifact against the policy it was compiled from, without
// looking at how it was emitted: the argv is parsed and replayed into a mount table
// (compiler/mount_table.hpp), every probe of compiler/probes.hpp is evaluated on it
// and compared with the IR's intent, and the namespace and lockdown options the
// design requires for a confined mode are checked. An empty result means verified.
// Under danger-full-access nothing is confined and nothing is checked.
//
// `bwrap_fds_text` is given for the argv a run executes (bwrap.fds, see
// parse_bwrap_args): each descriptor bind is replayed as a bind of the path the table
// names, and any bind whose source is still a path is a finding (missing-hardening): bwrap
// would resolve that path again when it mounts, after the runner checked it.
std::vector<ir::Diagnostic> verify_bwrap(
    const ir::Resolved& intent, std::string_view bwrap_args_text,
    std::optional<std::string_view> bwrap_fds_text = std::nullopt);

}  // namespace zpolicy::compiler
