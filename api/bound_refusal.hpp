#pragma once

// What a run bound where a request is bound would be refused for, before anything is
// resolved: the error-level lints `run` applies first. `explain` reports them, and does
// not answer at all where they refuse the workspace's place itself (ZP003, ZP013: `/`,
// `$HOME`, a system directory), rather than walk a tree the run would never touch.
// Internal to api/.

#include <optional>
#include <string>
#include <vector>

#include "api/request.hpp"

namespace zpolicy::api {

// Where a run bound as `loaded` is would be refused by a lint on the workspace's place
// itself: the Explanation to return instead of an answer (exit 3, the lints, then what to
// do). Otherwise nullopt, and each other refusing lint is added to `notes`.
std::optional<Explanation> bound_refusal(const Loaded& loaded, const Request& request,
                                         std::vector<std::string>& notes);

}  // namespace zpolicy::api
