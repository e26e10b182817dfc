#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// Parses policy text (language version 1) strictly into the portable IR. Every
// problem is a located diagnostic; on any error the result is empty, so nothing
// downstream can run on a policy that lost a rule.
std::optional<ir::Policy> parse_policy(std::string_view text, const std::string& file,
                                       ir::Diagnostics& diags);

// Reads and parses a policy file; an unreadable file is a diagnostic too.
std::optional<ir::Policy> load_policy_file(const std::string& path, ir::Diagnostics& diags);

// The protected subpaths a policy gets when it does not list its own.
const std::vector<std::string>& default_protected_subpaths();

}  // namespace zpolicy::compiler
