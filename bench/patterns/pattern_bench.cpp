// What expanding the default `**/.git` costs on a real tree (docs/benchmarks.md
// "Pattern expansion"): resolve_for_host of the built-in default policy with and without
// its patterns, the walk alone, and the whole compile --workspace (resolve, emit,
// verify). In-process, std::chrono, warm cache, median of N runs.
// Usage: zpolicy_pattern_bench WORKSPACE [RUNS]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "compiler/frontend/default_policy.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/resolve/resolve.hpp"
#include "compiler/resolve/tree_walker.hpp"

using namespace zpolicy;
using Clock = std::chrono::steady_clock;

namespace {

double cpu_ms() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

// Median wall time, and mean CPU time (user + system): on a machine shared with other
// work the wall time measures the queue, the CPU time what the step costs.
struct Cost {
  double wall_ms, cpu_ms;
};

Cost measure(int runs, const std::function<void()>& fn) {
  std::vector<double> samples;
  const double cpu0 = cpu_ms();
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    fn();
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  const double cpu = (cpu_ms() - cpu0) / runs;
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return {samples[samples.size() / 2], cpu};
}

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "pattern_bench: %s\n", why.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die("usage: zpolicy_pattern_bench WORKSPACE [RUNS]");
  const int runs = argc > 2 ? std::atoi(argv[2]) : 21;
  ir::Diagnostics diags;
  auto host = compiler::host_facts(std::string(argv[1]), diags);
  if (!host) die(diags.str());
  const ir::Policy with = compiler::default_policy();
  ir::Policy without = with;
  without.protect_patterns.clear();

  size_t protect = 0, pins = 0, entries = 0, matches = 0;
  auto resolve = [&](const ir::Policy& p, size_t* n_protect, size_t* n_pins) {
    ir::Diagnostics d;
    auto r = compiler::resolve_for_host(p, ir::Mode::WorkspaceWrite, *host, d);
    if (!r) die(d.str());
    if (n_protect) *n_protect = r->protect.size();
    if (n_pins) *n_pins = r->pin.size();
  };
  // The walk as resolve runs it for the default: from the workspace, not entering the
  // literal protected directories.
  const auto pattern = with.protect_patterns.front().value;
  std::vector<std::string> pruned;
  for (const auto& p : with.protect) pruned.push_back(host->workspace + "/" + p.value.str());
  compiler::WalkOptions options;
  options.may_enter = [&](const std::string& dir) {
    return std::find(pruned.begin(), pruned.end(), dir) == pruned.end();
  };
  auto walk = [&] {
    auto w = compiler::walk_tree(host->workspace, {{pattern.components, 0}}, options);
    if (w.error) die(*w.error);
    entries = w.entries;
    matches = w.matches.size();
  };
  auto compile = [&] {
    ir::Diagnostics d;
    auto c = compiler::compile(with, compiler::Target::Linux, ir::Mode::WorkspaceWrite, *host, d);
    if (!c || !c->findings.empty()) die("compile failed: " + d.str());
  };

  resolve(with, &protect, &pins);
  const Cost t_walk = measure(runs, walk);
  const Cost t_with = measure(runs, [&] { resolve(with, nullptr, nullptr); });
  const Cost t_without = measure(runs, [&] { resolve(without, nullptr, nullptr); });
  const Cost t_compile = measure(runs, compile);
  std::printf("entries_read %zu\nmatches %zu\nprotected_paths %zu\npins %zu\n", entries, matches,
              protect, pins);
  auto row = [](const char* name, const Cost& c) {
    std::printf("%s_ms %.2f\n%s_cpu_ms %.2f\n", name, c.wall_ms, name, c.cpu_ms);
  };
  row("walk", t_walk);
  row("resolve_default", t_with);
  row("resolve_without_patterns", t_without);
  row("compile_workspace", t_compile);
  return 0;
}
