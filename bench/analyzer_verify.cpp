// What verification of one policy's own artifacts costs, in one process: the pipeline's
// verify_artifacts run N times back to back, and each Linux part alone (docs/benchmarks.md,
// issue 18's budgets of 0.5 ms for the default policy and 2 ms for golden/large.yaml).
// Run it under `chrt -f 50` on a loaded machine, or under callgrind with a small N.
//
//   zpolicy_analyzer_verify POLICY linux|macos [N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/keyring_invariant.hpp"
#include "compiler/analyzer/seccomp/listing_check.hpp"
#include "compiler/analyzer/seccomp/network_invariant.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "compiler/analyzer/seccomp/setid_invariant.hpp"
#include "compiler/analyzer/seccomp/shared_access_invariant.hpp"
#include "compiler/analyzer/verify.hpp"
#include "compiler/frontend/policy_parser.hpp"
#include "compiler/pipeline.hpp"

using namespace zpolicy;
using Clock = std::chrono::steady_clock;

namespace {

// Median and minimum of n runs, in microseconds.
void report(const char* what, int n, const std::function<void()>& fn) {
  std::vector<double> us;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    fn();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  std::printf("%-22s median %9.1f µs  min %9.1f µs  (%d runs)\n", what, us[us.size() / 2], us[0], n);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: zpolicy_analyzer_verify POLICY linux|macos [N]\n");
    return 2;
  }
  const auto target = compiler::parse_target(argv[2]);
  const int n = argc == 4 ? std::atoi(argv[3]) : 1000;
  ir::Diagnostics d;
  const auto policy = compiler::load_policy_file(argv[1], d);
  if (!target || !policy || n < 1) return 2;
  const auto resolved =
      compiler::resolve_for_target(*policy, *target, policy->mode.value, std::nullopt, d);
  if (!resolved) return 2;
  const auto arts = compiler::emit_artifacts(*resolved, *target);
  if (!compiler::verify_artifacts(*resolved, *target, arts).empty()) {
    std::fprintf(stderr, "the artifacts do not verify\n");
    return 1;
  }
  report("verify_artifacts", n, [&] { compiler::verify_artifacts(*resolved, *target, arts); });
  if (*target != compiler::Target::Linux) return 0;
  auto content = [&](const char* name) {
    for (const auto& a : arts)
      if (a.name == name) return a.content;
    std::exit(1);
  };
  const std::string bpf = content("seccomp.bpf"), listing = content("seccomp.txt");
  const auto prog = compiler::parse_bpf(bpf);
  report("mounts", n, [&] {
    compiler::verify_linux_part(*resolved, compiler::LinuxPart::Mounts, arts, ir::ArtifactSet::All);
  });
  const auto v = compiler::verify_seccomp(resolved->syscalls, bpf);
  const auto sweep = compiler::sweep_seccomp(resolved->syscalls, *prog);
  std::printf("seccomp: %zu instructions, %zu paths, %zu probes in the sweep\n", prog->size(),
              v->paths, sweep.probes);
  report("seccomp proof", n, [&] { compiler::verify_seccomp(resolved->syscalls, bpf); });
  // Not part of verification of a program the proof accepts: the tests' oracle, for scale.
  report("probe sweep (tests)", n, [&] { compiler::sweep_seccomp(resolved->syscalls, *prog); });
  report("listing", n, [&] { compiler::check_listing(listing, *prog, resolved->syscalls); });
  report("network invariant", n, [&] { compiler::check_network_invariant(*resolved, *prog); });
  report("set-id invariant", n, [&] { compiler::check_setid_invariant(*prog); });
  report("shared-access invariant", n, [&] { compiler::check_shared_access_invariant(*prog); });
  report("keyring invariant", n, [&] { compiler::check_keyring_invariant(*prog); });
  return 0;
}
