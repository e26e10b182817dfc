// zpolicy_fuzz: a deterministic mutation fuzzer for every input zpolicy reads (GCC has
// no libFuzzer). docs/verify.md "Fuzzing" says how CI runs it and how to run it longer.

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/budget_bench.hpp"
#include "tests/fuzz/corpus.hpp"
#include "tests/fuzz/crash_guard.hpp"
#include "tests/fuzz/run_input.hpp"

#if defined(__SANITIZE_ADDRESS__)
// Defaults for every run of this binary, a replay included: a memory blow-up is a
// report rather than the shared machine's memory, and UBSan prints where it fired.
extern "C" const char* __asan_default_options() {
  return "hard_rss_limit_mb=3072:allocator_may_return_null=0:detect_stack_use_after_return=0";
}
extern "C" const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }
constexpr unsigned kDefaultInputTimeout = 30;
#else
constexpr unsigned kDefaultInputTimeout = 10;
#endif

namespace zpolicy::fuzz {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: zpolicy_fuzz [--kind K]... [--seed N] [--seconds S] [--iterations N]\n"
    "                    [--input-timeout S] [--crash-dir DIR] [--source DIR]\n"
    "       zpolicy_fuzz --kind K --seed N --iteration I   (run one generated input again)\n"
    "       zpolicy_fuzz --replay FILE [--policy NAME]     (run a saved input again)\n"
    "       zpolicy_fuzz --bench [--kind K]... [--seed N] [--iterations N]\n"
    "kinds: policy bwrap seccomp sbpl oci git-index (default: all). --seconds is the budget\n"
    "of the whole run, shared equally by the kinds; --iterations caps each kind.\n";

struct Options {
  std::vector<Kind> kinds;
  uint64_t seed = 1;
  double seconds = 60;
  std::optional<uint64_t> iterations;
  std::optional<uint64_t> iteration;
  unsigned input_timeout = kDefaultInputTimeout;
  std::string crash_dir = ".";
  std::string source_dir = ZPOLICY_SOURCE_DIR;
  std::optional<std::string> replay;
  std::optional<std::string> policy;
  bool bench = false;
};

std::optional<uint64_t> number(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19)
    return std::nullopt;
  return std::stoull(s);
}

std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--bench") {
      o.bench = true;
      continue;
    }
    if (i + 1 >= argc) return std::nullopt;
    const std::string value = argv[++i];
    const auto n = number(value);
    if (arg == "--kind") {
      const auto k = parse_kind(value);
      if (!k) return std::nullopt;
      o.kinds.push_back(*k);
    } else if (arg == "--seed" && n) {
      o.seed = *n;
    } else if (arg == "--seconds" && n) {
      o.seconds = static_cast<double>(*n);
    } else if (arg == "--iterations" && n) {
      o.iterations = *n;
    } else if (arg == "--iteration" && n) {
      o.iteration = *n;
    } else if (arg == "--input-timeout" && n && *n > 0 && *n < 100000) {
      o.input_timeout = static_cast<unsigned>(*n);
    } else if (arg == "--crash-dir") {
      o.crash_dir = value;
    } else if (arg == "--source") {
      o.source_dir = value;
    } else if (arg == "--replay") {
      o.replay = value;
    } else if (arg == "--policy") {
      o.policy = value;
    } else {
      return std::nullopt;
    }
  }
  if (o.kinds.empty()) o.kinds.assign(std::begin(kAllKinds), std::end(kAllKinds));
  if (o.iteration && o.kinds.size() != 1) return std::nullopt;
  return o;
}

// A scratch workspace, HOME and TMPDIR, so that policies bound to a host (resolve,
// pattern expansion, the bound lints) look at a small tree of their own.
class Scratch {
 public:
  Scratch() {
    char tmpl[] = "/tmp/zpolicy-fuzz-XXXXXX";
    if (!::mkdtemp(tmpl)) return;
    root_ = tmpl;
    for (const char* d : {"home/.ssh", "tmp", "ws/.git", "ws/src/.git", "ws/packages/a",
                          "ws/node_modules"})
      fs::create_directories(root_ / d);
    std::ofstream(root_ / "ws/.env") << "SECRET=1\n";
    std::ofstream(root_ / "ws/packages/a/.env") << "SECRET=2\n";
    fs::create_symlink("../home", root_ / "ws/link");
    ::setenv("HOME", (root_ / "home").c_str(), 1);
    ::setenv("TMPDIR", (root_ / "tmp").c_str(), 1);
  }
  ~Scratch() {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  std::string workspace() const { return root_.empty() ? "" : (root_ / "ws").string(); }

 private:
  fs::path root_;
};

struct Stats {
  uint64_t inputs = 0;
  std::string last_diagnostics;
  std::map<int, uint64_t> exits;
  size_t largest = 0;
  double slowest = 0;
  uint64_t slowest_iteration = 0;
};

// Runs one input under the guard; false (after saying why and saving it) when it broke
// a promise or threw.
bool run_guarded(const Corpus& corpus, const Input& input, const std::string& path,
                 const std::string& what, const Options& o, const std::string& workspace,
                 const std::string& program, Stats& stats, double& seconds) {
  std::optional<std::string> failure;
  const auto start = std::chrono::steady_clock::now();
  try {
    CrashGuard guard(input.bytes, path, what, o.input_timeout);
    const Outcome outcome = run_input(corpus, input, workspace);
    ++stats.exits[outcome.exit_code];
    stats.last_diagnostics = outcome.diagnostics;
    failure = outcome.broken;
  } catch (const std::exception& e) {
    failure = std::string("exception escaped: ") + e.what();
  } catch (...) {
    failure = "exception escaped (not a std::exception)";
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!failure) return true;
  std::cerr << "zpolicy_fuzz: FAIL on " << what << ": " << *failure << "\n";
  if (save_input(input.bytes, path))
    std::cerr << "zpolicy_fuzz: input saved; replay with: " << program << " --replay " << path
              << "\n";
  return false;
}

int fuzz(const Corpus& corpus, const Options& o, const std::string& workspace,
         const std::string& program) {
  const double per_kind = o.seconds / static_cast<double>(o.kinds.size());
  for (Kind kind : o.kinds) {
    Stats stats;
    const auto start = std::chrono::steady_clock::now();
    const uint64_t first = o.iteration.value_or(0);
    const uint64_t last = o.iteration ? first + 1 : o.iterations.value_or(UINT64_MAX);
    for (uint64_t i = first; i < last; ++i) {
      if (!o.iteration &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= per_kind)
        break;
      const Input input = corpus.generate(kind, o.seed, i);
      const std::string stem =
          std::string(to_string(kind)) + "-s" + std::to_string(o.seed) + "-i" + std::to_string(i);
      const std::string path = o.crash_dir + "/" + file_name(input, stem);
      const std::string what = std::string(to_string(kind)) + " iteration " + std::to_string(i) +
                               " of seed " + std::to_string(o.seed) + " (" +
                               std::to_string(input.bytes.size()) + " bytes)";
      double seconds = 0;
      if (!run_guarded(corpus, input, path, what, o, workspace, program, stats, seconds)) {
        std::cerr << "zpolicy_fuzz: or regenerate it with: " << program << " --kind "
                  << to_string(kind) << " --seed " << o.seed << " --iteration " << i << "\n";
        return 1;
      }
      ++stats.inputs;
      stats.largest = std::max(stats.largest, input.bytes.size());
      if (seconds > stats.slowest) stats.slowest = seconds, stats.slowest_iteration = i;
    }
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-9s %6llu inputs in %5.1f s (exit", to_string(kind),
                static_cast<unsigned long long>(stats.inputs), took);
    for (const auto& [code, count] : stats.exits)
      std::printf(" %d: %llu", code, static_cast<unsigned long long>(count));
    std::printf("); largest %zu bytes; slowest %.2f s (iteration %llu)\n", stats.largest,
                stats.slowest, static_cast<unsigned long long>(stats.slowest_iteration));
    std::fflush(stdout);
  }
  return 0;
}

int replay(const Corpus& corpus, const Options& o, const std::string& workspace,
           const std::string& program) {
  std::ifstream in(*o.replay, std::ios::binary);
  if (!in) {
    std::cerr << "zpolicy_fuzz: cannot read " << *o.replay << "\n";
    return 2;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const auto input = corpus.input_from_file(*o.replay, bytes.str(), o.policy);
  if (!input) {
    std::cerr << "zpolicy_fuzz: " << *o.replay
              << ": the extension names no input kind (.yaml .args .bpf .sb .params .json "
                 ".index .index256)\n";
    return 2;
  }
  Stats stats;
  double seconds = 0;
  const std::string what = "replay of " + *o.replay;
  const std::string saved = o.crash_dir + "/" + file_name(*input, "replay");
  if (!run_guarded(corpus, *input, saved, what, o, workspace, program, stats, seconds)) return 1;
  std::cout << stats.last_diagnostics;
  std::printf("%s: %s input (%s%s), exit %d, %.2f s: no crash, no hang, promises kept\n",
              o.replay->c_str(), to_string(input->kind), input->role.c_str(),
              input->policy.empty() ? "" : (", verified against golden/" + input->policy + ".yaml").c_str(),
              stats.exits.empty() ? 0 : stats.exits.begin()->first, seconds);
  return 0;
}

}  // namespace
}  // namespace zpolicy::fuzz

int main(int argc, char** argv) {
  using namespace zpolicy::fuzz;
  const auto options = parse_options(argc, argv);
  if (!options) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string program = argv[0];
  CrashGuard::install(program);
  std::error_code ec;
  std::filesystem::create_directories(options->crash_dir, ec);
  const Corpus corpus(options->source_dir);
  const Scratch scratch;
  if (options->bench) {
    BenchOptions b{options->kinds, options->seed, options->iterations.value_or(20),
                   options->input_timeout, options->crash_dir, scratch.workspace()};
    return run_budget_bench(corpus, b, program);
  }
  if (options->replay) return replay(corpus, *options, scratch.workspace(), program);
  return fuzz(corpus, *options, scratch.workspace(), program);
}
