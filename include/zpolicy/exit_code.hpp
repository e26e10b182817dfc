#pragma once

namespace zpolicy {

// The exit codes of DESIGN.md "Command line"; `run` otherwise passes the command's own.
enum ExitCode : int {
  kExitOk = 0,
  kExitDifference = 1,    // `diff`: the policies differ (or, with --fail-on widen, widen)
  kExitIncomplete = 1,    // cleanup: placeholders left, because a run is live on the host
  kExitUsage = 2,         // bad usage or invalid policy
  kExitVerify = 3,        // verification failed: a deny would be dropped
  kExitUnavailable = 4,   // sandbox backend unavailable (fail-closed refusal)
  kExitTimeout = 124,
  kExitInternal = 125,    // zpolicy itself failed
  kExitNotExecutable = 126,
  kExitNotFound = 127,
  kExitSignalBase = 128,
};

}  // namespace zpolicy
