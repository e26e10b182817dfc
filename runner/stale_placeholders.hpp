#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/placeholder_removal.hpp"

namespace zpolicy::runner {

// Placeholders that runs left behind: recorded in a run record nobody holds locked (the
// run died, or ended while another run was live and so could not remove them), and still
// the directory recorded. Sorted, each once. For `doctor`.
std::vector<std::string> stale_placeholders();

// `zpolicy cleanup [DIR]` (docs/run.md "Cleanup").
struct Cleanup {
  // False when some run of any user is live on this host: then nothing was touched, since
  // the live run may rely on any placeholder (records of other users cannot be read).
  bool host_quiet = true;
  std::string why_not;  // when not quiet: a run is live, or the host run lock is not usable
  // Each placeholder of a dead run within DIR, deepest first within its record, and what
  // became of it.
  std::vector<std::pair<std::string, Removal>> placeholders;
};

// Reconciles the records of dead runs as the next run would, limited to placeholders
// within `within` (canonical; every one when absent): restores access and removes each
// that is still the empty directory recorded, and drops them from their record (the
// record goes when nothing is left in it). Only while it holds the host run lock
// (runner/host_run_lock) exclusively, that is no run is live on this host, which it keeps
// so (no run starts) until it returns. Returns nullopt with `error` set when the
// state directory is not private to the caller.
std::optional<Cleanup> remove_stale_placeholders(const std::optional<std::string>& within,
                                                 std::string& error);

}  // namespace zpolicy::runner
