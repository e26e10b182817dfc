#pragma once

#include <vector>

#include "compiler/lint/policy_lint.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// The allow-list lints (docs/lints.md): ZP014, a wildcard that covers a whole public
// suffix (`*.com`, `*.co.uk`, `*.github.io`: anyone can own a name below it, so it
// admits anyone); ZP015, an entry that can never be admitted (an ip: literal the proxy
// refuses as non-public, a name under .localhost or .invalid).
std::vector<ir::Diagnostic> lint_network(const ir::Policy& policy);

// The multi-label public suffixes ZP014 knows, besides every single label (a TLD):
// country second levels and hosting platforms where anyone registers a subdomain.
// Deliberately short; docs/lints.md lists the same.
const std::vector<std::string>& public_suffix_list();

}  // namespace zpolicy::compiler
