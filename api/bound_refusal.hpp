#pragma once

// What a run bound where a request is bound would be refused for, before anything is
// resolved: the error-level lints `run` applies first. `explain` reports them, and does
// not answer at all where they refuse the workspace's place itself (ZP003, ZP013: `/`,
// `$HOME`, a system directory), rather than walk a tree the run would never touch.
// Internal to api/.

#include <string>
#include <vector>

#include "api/request.hpp"

namespace zpolicy::api {

struct BoundRefusal {
  std::vector<Diagnostic> refused;  // non-empty: do not answer (the lints, then what to do)
  std::vector<std::string> notes;   // the other refusing lints, for the answer's notes
};

BoundRefusal bound_refusal(const Loaded& loaded, const Request& request);

}  // namespace zpolicy::api
