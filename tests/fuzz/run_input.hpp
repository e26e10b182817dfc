#pragma once

#include <optional>
#include <string>

#include "tests/fuzz/corpus.hpp"

namespace zpolicy::fuzz {

// What one input got: the exit code of its last public call, for the run's statistics.
struct Outcome {
  int exit_code = 0;
  std::optional<std::string> broken;  // the promise the answer broke, if any
  std::string diagnostics;            // of the last call, for a replay to print
};

// Runs one input through every entry point that reads its kind, the way the CLI does:
// * policy: check (lint + every target and confined mode), compile for linux and macos;
// * bwrap.args / seccomp.bpf / profile.sb / params.txt: verify against the golden policy
//   they were compiled from, the set's other files kept golden; seccomp.bpf also through
//   inspect's parse, disassembly and evaluation, and through the probe sweep when the
//   path proof accepts it (the sweep must accept it too);
// * OCI profile: the import, then a compile of the default policy with its syscalls;
// * git index: the reader of the gitlinks resolve looks for (submodules the host's git
//   enters), on a file in the scratch tree beside the seeds' shared indexes.
// The fail-closed promises are checked on every answer: an exit code of the contract,
// an error diagnostic behind every refusal, artifacts behind every success. A crash, a
// sanitizer report or a hang never returns (crash_guard reports those); an exception is
// left to escape, for the caller to report.
Outcome run_input(const Corpus& corpus, const Input& input, const std::string& workspace);

}  // namespace zpolicy::fuzz
