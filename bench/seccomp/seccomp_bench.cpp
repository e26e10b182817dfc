// Compares the seccomp programs of zpolicy's code generator with libseccomp's (linear
// and binary-tree output) on the same IR rule sets. Run by hand:
//   build/zpolicy_seccomp_bench [path/to/moby-default-seccomp.json]
// Prints a Markdown table for docs/benchmarks.md. Every figure is a count of BPF
// instructions from the interpreter in compiler/, weighted by the recorded syscall mix
// (bench/seccomp/mix, compiled into the emitter): deterministic, no timing.
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench/seccomp/libseccomp_reference.hpp"
#include "bench/seccomp/seccomp_cache_rule.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/frontend/oci_import.hpp"
#include "compiler/resolve/seccomp_baseline.hpp"
#include "emitters/seccomp/seccomp_emitter.hpp"
#include "emitters/seccomp/syscall_weights.hpp"
#include "ir/syscall_table.hpp"

namespace zc = zpolicy::compiler;
namespace ir = zpolicy::ir;

namespace {

struct Figures {
  size_t length = 0;
  double mean = 0, cached_mean = 0, tree_mean = 0;
  size_t max = 0;
};

std::vector<zc::BpfInsn> parse(const std::string& bytes) {
  auto p = zc::parse_bpf(bytes);
  if (!p) throw std::runtime_error(p.error().message);
  return *p;
}

zc::BpfRun run(const std::vector<zc::BpfInsn>& prog, uint32_t nr) {
  zc::SeccompData d;
  d.arch = ir::kAuditArchX86_64;
  d.nr = nr;
  return zc::run_bpf(prog, d);
}

// Comparisons against the syscall number on the way to the first argument load or
// return: the depth of the number dispatch alone.
size_t dispatch_depth(const std::vector<zc::BpfInsn>& prog, uint32_t nr) {
  uint32_t a = 0;
  size_t depth = 0;
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const auto& in = prog[pc];
    if (in.code == 0x20) {
      if (in.k == 4) a = ir::kAuditArchX86_64;
      else if (in.k == 0) a = nr;
      else return depth;
    } else if (in.code == 0x05) {
      pc += in.k;
    } else if ((in.code & 0x07) == 0x05) {
      const uint32_t op = in.code & 0xf0;
      const bool t = op == 0x10 ? a == in.k : op == 0x20 ? a > in.k : op == 0x30 ? a >= in.k
                                                                                : (a & in.k) != 0;
      if (a == nr) ++depth;
      pc += t ? in.jt : in.jf;
    } else {
      return depth;
    }
  }
  return depth;
}

Figures measure(const std::vector<zc::BpfInsn>& prog) {
  Figures f;
  f.length = prog.size();
  double total = 0, weighted = 0, cached = 0, tree = 0;
  for (const auto& s : ir::syscall_table(ir::Arch::X86_64)) {
    const size_t n = run(prog, s.nr).executed;
    f.max = std::max(f.max, n);
    const double w = zpolicy::emitters::seccomp::syscall_weight(s.name);
    total += w;
    weighted += w * static_cast<double>(n);
    tree += w * static_cast<double>(dispatch_depth(prog, s.nr));
    if (!zc::seccomp_is_const_allow(prog, ir::kAuditArchX86_64, s.nr))
      cached += w * static_cast<double>(n);
  }
  f.mean = weighted / total;
  f.cached_mean = cached / total;
  f.tree_mean = tree / total;
  return f;
}

// The optimal alphabetic tree over the intervals of numbers that share an outcome in
// `prog` (a number whose path loads an argument is an interval of its own), weighted by
// the mix alone: the expected number of `jge` comparisons of the best possible number
// dispatch. Written independently of the emitter's.
double optimal_dispatch(const std::vector<zc::BpfInsn>& prog) {
  std::vector<double> w;
  std::string last;
  const uint32_t top = ir::max_syscall_number(ir::Arch::X86_64) + 1;
  std::vector<uint32_t> probes;
  for (uint32_t nr = 0; nr <= top; ++nr) probes.push_back(nr);
  for (uint32_t nr : {0x40000000u, 0x80000000u, 0xc0000000u}) probes.push_back(nr);
  for (uint32_t nr : probes) {
    const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, nr);
    const bool loads_args = run(prog, nr).executed > 3 + dispatch_depth(prog, nr) + 1;
    const std::string outcome =
        loads_args ? "args" + std::to_string(nr) : std::to_string(run(prog, nr).ret);
    const double weight = s ? zpolicy::emitters::seccomp::syscall_weight(s->name) : 0;
    if (outcome == last) {
      w.back() += weight;
    } else {
      w.push_back(weight);
      last = outcome;
    }
  }
  const size_t n = w.size();
  std::vector<double> pre(n + 1, 0);
  for (size_t i = 0; i < n; ++i) pre[i + 1] = pre[i] + w[i];
  std::vector<std::vector<double>> c(n, std::vector<double>(n, 0));
  for (size_t len = 2; len <= n; ++len)
    for (size_t i = 0; i + len <= n; ++i) {
      const size_t j = i + len - 1;
      double best = 1e300;
      for (size_t r = i; r < j; ++r) best = std::min(best, c[i][r] + c[r + 1][j]);
      c[i][j] = best + pre[j + 1] - pre[i];
    }
  return c[0][n - 1] / pre[n];
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string docker_path =
      argc > 1 ? argv[1] : std::string(ZPOLICY_SHARED_DATA) + "/moby-default-seccomp.json";
  ir::Diagnostics diags;
  const auto spec = zc::import_oci_seccomp(read_text(docker_path), docker_path, diags);
  if (!spec) {
    std::fputs(diags.str().c_str(), stderr);
    return 1;
  }
  ir::SyscallPolicy docker;
  docker.default_action = spec->action.value;
  docker.rules = spec->rules;

  const std::vector<std::pair<std::string, ir::SyscallPolicy>> sets = {
      {"default policy (workspace-write)", zc::effective_syscalls(ir::Policy{}, ir::Mode::WorkspaceWrite)},
      {"Docker default profile", docker},
  };
  std::printf("| rule set | filter | length | mean | max | mean with cache | dispatch mean | optimal dispatch |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& [name, policy] : sets) {
    const auto linear = zpolicy::bench::build_libseccomp(policy, 1);
    const auto tree = zpolicy::bench::build_libseccomp(policy, 2);
    const std::vector<std::pair<std::string, std::vector<zc::BpfInsn>>> filters = {
        {"zpolicy", parse(zpolicy::emitters::seccomp::emit_bpf(policy))},
        {"libseccomp linear", parse(linear.bpf)},
        {"libseccomp optimize=2", parse(tree.bpf)},
    };
    if (linear.skipped > 0)
      std::fprintf(stderr, "%s: %zu of %zu rules not in libseccomp's filter (names x86_64 lacks, or refused by it)\n", name.c_str(),
                   linear.skipped, policy.rules.size());
    for (const auto& [fname, prog] : filters) {
      const Figures f = measure(prog);
      char opt[32] = "";
      if (fname == "zpolicy") std::snprintf(opt, sizeof opt, "%.3f", optimal_dispatch(prog));
      std::printf("| %s | %s | %zu | %.2f | %zu | %.2f | %.3f | %s |\n", name.c_str(),
                  fname.c_str(), f.length, f.mean, f.max, f.cached_mean, f.tree_mean,
                  opt);
    }
  }
  return 0;
}
