#pragma once

#include <vector>

#include "compiler/review/difference.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler::review {

// The network: the mode (none < loopback < an allow list < full), then, destination by
// destination, every entry of either allow list asked of both policies the way the proxy
// asks (compiler/network match_destination; a `*.example.org` entry as a name below
// example.org): a destination one admits and the other does not is a difference, so
// `pypi.org` added to a list, or a list replaced by `full`, each show as what they admit.
std::vector<Difference> diff_network(const ir::Resolved& before, const ir::Resolved& after);

}  // namespace zpolicy::compiler::review
