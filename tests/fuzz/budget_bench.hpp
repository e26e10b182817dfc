#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/corpus.hpp"

namespace zpolicy::fuzz {

struct BenchOptions {
  std::vector<Kind> kinds;
  uint64_t seed = 1;
  uint64_t iterations = 20;  // per kind
  unsigned timeout_seconds = 60;
  std::string crash_dir;
  std::string workspace;
};

// Issue 19 §2's budget (any input under 1 MiB answered in under 2 s and 512 MiB) as a
// statistic, never an assertion: each hostile input runs in a child of its own, whose
// wall and CPU time and peak resident memory are measured (the budget is judged on CPU
// time, which a loaded machine does not stretch); inputs over the budget are saved for
// replay and listed. Exit 1 only if a child failed (a crash, a hang, a broken promise).
int run_budget_bench(const Corpus& corpus, const BenchOptions& options, const std::string& program);

}  // namespace zpolicy::fuzz
