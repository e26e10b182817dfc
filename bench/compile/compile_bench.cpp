// Compile latency, its scaling with policy size, and what the independent verification
// costs on top (docs/benchmarks.md). In-process, std::chrono, median of many runs.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/pipeline.hpp"
#include "compiler/frontend/policy_parser.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "compiler/analyzer/seccomp/seccomp_verify.hpp"
#include "compiler/analyzer/verify.hpp"
#include "compiler/analyzer/bwrap/verify_bwrap.hpp"

using namespace zpolicy;
using Clock = std::chrono::steady_clock;

namespace {

// Median wall time in microseconds: at least 5 runs, then more until ~0.5 s is spent
// (at most 301), so that fast steps get many samples and slow ones finish.
double median_us(const std::function<void()>& fn) {
  std::vector<double> samples;
  double spent = 0;
  while (samples.size() < 5 || (spent < 0.5e6 && samples.size() < 301)) {
    auto t0 = Clock::now();
    fn();
    double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    samples.push_back(us);
    spent += us;
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const compiler::Artifact& artifact(const std::vector<compiler::Artifact>& arts,
                                   const std::string& name) {
  for (const auto& a : arts)
    if (a.name == name) return a;
  std::fprintf(stderr, "no artifact %s\n", name.c_str());
  std::exit(1);
}

struct Row {
  double front_us, verify_us, bwrap_us, seccomp_us, sbpl_us;
};

// parse+resolve+emit vs verify for one policy text and target, and each verifier alone.
Row measure(const std::string& text, compiler::Target target) {
  auto pipeline = [&] {
    ir::Diagnostics d;
    auto p = compiler::parse_policy(text, "p.yaml", d);
    auto r = compiler::resolve_for_target(*p, target, p->mode.value, std::nullopt, d);
    return std::make_pair(*r, compiler::emit_artifacts(*r, target));
  };
  auto [resolved, arts] = pipeline();
  if (!compiler::verify_artifacts(resolved, target, arts).empty()) {
    std::fprintf(stderr, "the artifacts do not verify\n");
    std::exit(1);
  }
  Row row{};
  row.front_us = median_us([&] { pipeline(); });
  row.verify_us = median_us([&] { compiler::verify_artifacts(resolved, target, arts); });
  if (target == compiler::Target::Linux) {
    row.bwrap_us =
        median_us([&] { compiler::verify_bwrap(resolved, artifact(arts, "bwrap.args").content); });
    row.seccomp_us = median_us([&] {
      compiler::verify_seccomp(resolved.syscalls, artifact(arts, "seccomp.bpf").content);
    });
  } else {
    row.sbpl_us = median_us([&] {
      auto params = compiler::parse_params_text(artifact(arts, "params.txt").content);
      compiler::verify_sbpl(resolved, artifact(arts, "profile.sb").content, *params);
    });
  }
  return row;
}

void print_row(const std::string& name, compiler::Target target, const Row& r) {
  std::printf("| %s | %s | %.0f | %.0f | %.2f | ", name.c_str(), compiler::to_string(target),
              r.front_us, r.verify_us, r.verify_us / r.front_us);
  if (target == compiler::Target::Linux)
    std::printf("bwrap %.0f, seccomp %.0f |\n", r.bwrap_us, r.seccomp_us);
  else
    std::printf("sbpl %.0f |\n", r.sbpl_us);
  std::fflush(stdout);
}

// A policy with n writable roots, n absolute protected paths (one in each root) and n
// deny roots, plus the default relative carve-outs.
std::string generated_policy(int n) {
  std::string t = "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write:\n";
  char buf[64];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "    - \"${HOME}/w/root%04d\"\n", i);
    t += buf;
  }
  t += "  protect:\n    - .git\n    - .env\n";
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "    - \"${HOME}/w/root%04d/keep\"\n", i);
    t += buf;
  }
  t += "  deny:\n";
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "    - \"${HOME}/secret/s%04d\"\n", i);
    t += buf;
  }
  return t + "network: none\n";
}

// One `zpolicy compile POLICY --target T --out DIR` as its own process, with or without
// the verification, for bench/compile_cli.py: the difference of the two is what
// verification adds to the compile a user waits for (a fresh process pays its page
// faults and cold caches, which the in-process medians above do not show). The steps are
// those of cli/cmd_compile.cpp.
int compile_once(const std::string& mode, const std::string& path, const std::string& target_name,
                 const std::string& out) {
  ir::Diagnostics d;
  auto target = compiler::parse_target(target_name);
  auto policy = compiler::load_policy_file(path, d);
  if (!target || !policy) return 2;
  std::vector<compiler::Artifact> arts;
  if (mode == "verify") {
    auto c = compiler::compile(*policy, *target, policy->mode.value, std::nullopt, d);
    if (!c || !c->findings.empty()) return 3;
    arts = std::move(c->artifacts);
  } else {
    auto r = compiler::resolve_for_target(*policy, *target, policy->mode.value, std::nullopt, d);
    if (!r) return 2;
    arts = compiler::emit_artifacts(*r, *target);
  }
  namespace fs = std::filesystem;
  fs::create_directories(out);
  for (const auto& a : arts) {
    std::ofstream f(fs::path(out) / (a.name + ".tmp"), std::ios::binary | std::ios::trunc);
    f.write(a.content.data(), static_cast<std::streamsize>(a.content.size()));
    if (!f.flush()) return 1;
  }
  for (const auto& a : arts) fs::rename(fs::path(out) / (a.name + ".tmp"), fs::path(out) / a.name);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "--once" &&
      (std::string(argv[2]) == "verify" || std::string(argv[2]) == "noverify"))
    return compile_once(argv[2], argv[3], argv[4], argv[5]);
  if (argc != 1) {
    std::fprintf(stderr,
                 "usage: zpolicy_compile_bench [--once verify|noverify POLICY TARGET OUT]\n");
    return 2;
  }
  const std::string golden = std::string(ZPOLICY_SOURCE_DIR) + "/golden";
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(golden))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());

  std::printf(
      "| policy | target | parse+resolve+emit µs | verify µs | verify / compile | per verifier µs "
      "|\n");
  std::printf("|---|---|---:|---:|---:|---|\n");
  for (const auto& name : names)
    for (auto target : {compiler::Target::Linux, compiler::Target::Macos})
      print_row(name, target, measure(slurp(golden + "/" + name + ".yaml"), target));

  // Each size in its own child, so that its peak RSS is its own.
  std::printf(
      "\n| n (write = protect = deny) | target | parse+resolve+emit µs | verify µs | verify / "
      "compile | per verifier µs | peak RSS KiB |\n");
  std::printf("|---:|---|---:|---:|---:|---|---:|\n");
  std::fflush(stdout);
  for (int n : {10, 100, 1000})
    for (auto target : {compiler::Target::Linux, compiler::Target::Macos}) {
      pid_t pid = fork();
      if (pid == 0) {
        Row r = measure(generated_policy(n), target);
        std::printf("| %d | %s | %.0f | %.0f | %.2f | ", n, compiler::to_string(target), r.front_us,
                    r.verify_us, r.verify_us / r.front_us);
        if (target == compiler::Target::Linux)
          std::printf("bwrap %.0f, seccomp %.0f |", r.bwrap_us, r.seccomp_us);
        else
          std::printf("sbpl %.0f |", r.sbpl_us);
        std::fflush(stdout);
        _exit(0);
      }
      int status = 0;
      rusage usage{};
      wait4(pid, &status, 0, &usage);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::printf(" failed |\n");
        return 1;
      }
      std::printf(" %ld |\n", usage.ru_maxrss);
      std::fflush(stdout);
    }
  return 0;
}
