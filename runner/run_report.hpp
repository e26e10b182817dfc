#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/status_file.hpp"
#include "runner/supervise.hpp"

namespace zpolicy::runner {

// A destination the allow-list proxy refused (docs/network.md "Refusals are reported").
struct ProxyRefusal {
  std::string host;
  uint16_t port = 0;
  std::string reason;  // compiler::to_string(AdmissionRefusal): "not-listed", "address-refused", ...
  std::string detail;  // the admission's one-line reason
  friend auto operator<=>(const ProxyRefusal&, const ProxyRefusal&) = default;
};

// What a run observed besides its exit status: the machine-readable run status carries
// it (docs/run.md "Run status").
struct RunReport {
  std::vector<ProxyRefusal> network_refusals;  // sorted, each once, at most 256
  size_t network_refusals_omitted = 0;  // refused connections to destinations past those
  // RunRequest::status_file, open since before the command started: the caller writes the
  // status document into it once the run has ended.
  std::optional<StatusFile> status_file;
  // Taken before the status file is opened, ended with the report, after the caller has
  // written the status document: a signal that would end zpolicy meanwhile waits for
  // supervise(), or for the document (red team A28B-1).
  std::optional<HeldSignals> held_signals;
  // zpolicy refused before the command could start and said so: the status is zpolicy's,
  // not the command's, even when it is 2 or 3.
  bool refused_before_start = false;
  // The sandbox started, and its status stream says the command was never executed (not
  // found, not executable, its working directory unreachable, interrupted first): a status
  // of 126, 127 or 128+N is then the sandbox's failure to start it, not the command's.
  bool did_not_start = false;
  // The command was, or may have been, executed: set where a backend starts it and kept
  // unless its status stream proves otherwise. What the run status's `nothing_ran` denies,
  // so that a harness retries only a run that cannot have done anything (owner question 15).
  bool may_have_run = false;
  // The SIGINT, SIGTERM or SIGHUP zpolicy took during the run (forwarded to the command, or
  // the sandbox killed for it), or 0. The status is then that interruption's: the command
  // killed by the signal it was sent is no sign of the sandbox refusing it, and hinting at
  // `zpolicy explain` misled (red team attack 29a's note).
  int interrupted_by = 0;
};

}  // namespace zpolicy::runner
